package embed

import "math"

// Embed returns text's embedding: Dim values of unit length. It never
// fails: text is tokenized (unknown characters become the unknown piece),
// clipped to the graph's maximum length (128 pieces) and an empty text
// embeds as the graph computes it for no piece (the mean over no token is
// zero).
func (m *Model) Embed(text string) []float32 {
	ids := m.vocab.encode(text)
	if len(ids) > m.maxLen {
		ids = ids[:m.maxLen] // ClipToMaxLength: positions ≥ 128 are dropped
	}
	return m.forward(ids)
}

// forward runs the graph for one sentence of token ids (each < vocabRows),
// following its nodes (names under module_apply_default/Encoder_en/
// KonaTransformer/). With one sentence the sparse input has no padding, so
// the graph's Where/GatherNd/ScatterNd pairs (which pick the non-padding
// positions and put them back) are the identity and the attention bias is
// zero.
func (m *Model) forward(ids []int) []float32 {
	n, w := len(ids), m.width
	// Encode/embedding_lookup, then TransformerStack/Layer_0/add: the sum
	// of Encode/Scatter (the embeddings) and AddTimingSignal/Scatter (the
	// embeddings gathered again plus the timing signal), so 2·e + timing.
	x := make([]float32, n*w)
	half := w / 2
	for t, id := range ids {
		row := x[t*w : (t+1)*w]
		e := m.embeddings[id*w : (id+1)*w]
		for j := range half {
			angle := float64(float32(t) * m.timing[j]) // TimingSignal/mul_2 in float32
			row[j] = 2*e[j] + float32(math.Sin(angle))
			row[half+j] = 2*e[half+j] + float32(math.Cos(angle))
		}
	}
	for l := range m.layers {
		x = m.layers[l].apply(x, n, m.epsilon)
	}
	// SequenceMask, mul, Sum, div: the mean over the tokens (the divisor
	// is max(length, 1)).
	pooled := make([]float32, Dim)
	for t := range n {
		for j, v := range x[t*Dim : (t+1)*Dim] {
			pooled[j] += v
		}
	}
	div := float32(max(n, 1))
	for j := range pooled {
		pooled[j] /= div
	}
	// hidden_layers/tanh_layer_0 and l2_normalize.
	out := matmul(pooled, 1, Dim, m.tanhW, m.tanhB, Dim)
	var ss float32
	for j, v := range out {
		v = float32(math.Tanh(float64(v)))
		out[j] = v
		ss += v * v
	}
	inv := float32(1 / math.Sqrt(float64(max(ss, m.l2Epsilon))))
	for j := range out {
		out[j] *= inv
	}
	return out
}

// apply runs one TransformerLayer on x ([n, in]) and returns [n, Dim].
func (ly *layer) apply(x []float32, n int, eps float32) []float32 {
	in := ly.in
	// AdjustResidualInput: layer 0 widens its input for the residual sum.
	residual := x
	if ly.residualW != nil {
		residual = matmul(x, n, in, ly.residualW, ly.residualB, Dim)
	}
	// layer_prepostprocess/layer_norm, MultiheadAttention/qkv_transform_single
	// (a 1x1 Conv2D: a matrix product per position), split.
	qkv := matmul(layerNorm(x, n, in, ly.attnScale, ly.attnBias, eps), n, in, ly.qkvW, ly.qkvB, 3*in)
	// split_heads, mul (the query scale), DotProductAttention (softmax over
	// the keys), combine_heads.
	att := make([]float32, n*in)
	scores := make([]float32, n)
	for h := range ly.heads {
		off := h * ly.headDim
		for i := range n {
			q := qkv[i*3*in+off : i*3*in+off+ly.headDim]
			mx := float32(math.Inf(-1))
			for j := range n {
				k := qkv[j*3*in+in+off : j*3*in+in+off+ly.headDim]
				var s float32
				for d, qv := range q {
					s += qv * ly.qScale * k[d]
				}
				scores[j] = s
				mx = max(mx, s)
			}
			var sum float32
			for j := range n {
				scores[j] = float32(math.Exp(float64(scores[j] - mx)))
				sum += scores[j]
			}
			o := att[i*in+off : i*in+off+ly.headDim]
			for j := range n {
				p := scores[j] / sum
				v := qkv[j*3*in+2*in+off : j*3*in+2*in+off+ly.headDim]
				for d, vv := range v {
					o[d] += p * vv
				}
			}
		}
	}
	// output_transform_single, then layer_postprocess/add.
	y := matmul(att, n, in, ly.outW, ly.outB, Dim)
	for i := range y {
		y[i] += residual[i]
	}
	// FFN: layer norm, conv1 (ReLU), conv2, then FFN/layer_postprocess/add.
	h := matmul(layerNorm(y, n, Dim, ly.ffnScale, ly.ffnBias, eps), n, Dim, ly.ffn1W, ly.ffn1B, ly.hidden)
	for i, v := range h {
		h[i] = max(v, 0)
	}
	f := matmul(h, n, ly.hidden, ly.ffn2W, ly.ffn2B, Dim)
	for i := range y {
		y[i] += f[i]
	}
	return y
}

// layerNorm normalises each of the n rows of x ([n, d]) as the graph's
// layer_norm nodes do: (x − mean)·rsqrt(variance + eps)·scale + bias.
func layerNorm(x []float32, n, d int, scale, bias []float32, eps float32) []float32 {
	out := make([]float32, n*d)
	for t := range n {
		row := x[t*d : (t+1)*d]
		var mean float32
		for _, v := range row {
			mean += v
		}
		mean /= float32(d)
		var variance float32
		for _, v := range row {
			variance += (v - mean) * (v - mean)
		}
		variance /= float32(d)
		r := float32(1 / math.Sqrt(float64(variance+eps)))
		o := out[t*d : (t+1)*d]
		for j, v := range row {
			o[j] = scale[j]*r*(v-mean) + bias[j]
		}
	}
	return out
}

// matmul returns x·w + b for x [n, k], w [k, m] (row-major), b [m]. The
// loop order streams each weight row once for all n rows of x.
func matmul(x []float32, n, k int, w, b []float32, m int) []float32 {
	out := make([]float32, n*m)
	for t := range n {
		copy(out[t*m:(t+1)*m], b)
	}
	for i := range k {
		wr := w[i*m : (i+1)*m]
		for t := range n {
			a := x[t*k+i]
			if a == 0 {
				continue
			}
			axpy(out[t*m:(t+1)*m], wr, a)
		}
	}
	return out
}

// axpy adds a·x to y (len(x) == len(y)).
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}
