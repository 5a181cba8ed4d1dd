package embed

import (
	"fmt"
	"math"
)

// Dim is the length of every embedding.
const Dim = 512

// Names of the graph's weights and constants (model.json's manifest).
const (
	pApply  = "module_apply_default/Encoder_en/KonaTransformer/"
	pEncode = pApply + "Encode/"
	pStack  = pEncode + "TransformerStack/"
	pModule = "module/Encoder_en/KonaTransformer/Encode/"

	nEmbeddings = "module/Embeddings_en"
	nTiming     = pStack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"
	nMaxLen     = pApply + "ClipToMaxLength/Less/y"
	nEpsilon    = pStack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"
	nHeads      = pStack + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"
	nResidualW  = pEncode + "Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat"
	nResidualB  = pEncode + "Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat"
	nTanhW      = "module/Encoder_en/hidden_layers/tanh_layer_0/weights"
	nTanhB      = "module/Encoder_en/hidden_layers/tanh_layer_0/bias"
	nL2Epsilon  = "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"
)

// layer is one transformer layer: pre-norm self-attention and a ReLU
// feed-forward block, each added to its input.
type layer struct {
	in, heads, headDim   int
	qScale               float32
	attnScale, attnBias  []float32 // layer norm before attention
	qkvW, qkvB           []float32 // [in, 3*in]
	outW, outB           []float32 // [in, Dim]
	ffnScale, ffnBias    []float32 // layer norm before the feed-forward block
	ffn1W, ffn1B         []float32 // [Dim, hidden]
	ffn2W, ffn2B         []float32 // [hidden, Dim]
	hidden               int
	residualW, residualB []float32 // [in, Dim] when in != Dim (AdjustResidualInput), else nil
}

// Model is a loaded encoder. It is immutable and safe for concurrent use.
type Model struct {
	vocabRows  int
	width      int       // the token embedding's width (256)
	embeddings []float32 // [vocabRows, width]
	timing     []float32 // inverse timescales, width/2 of them
	maxLen     int
	epsilon    float32
	layers     [2]layer
	tanhW      []float32 // [Dim, Dim]
	tanhB      []float32
	l2Epsilon  float32
	vocab      *vocab
}

// binder looks tensors up by name and checks their shapes, keeping the
// first problem.
type binder struct {
	ts  map[string]*tensor
	err error
}

func (b *binder) get(name string, float bool, shape ...int) *tensor {
	if b.err != nil {
		return nil
	}
	t, ok := b.ts[name]
	if !ok {
		b.err = fail(CodeShape, "model.json", "weight %q is missing", name)
		return nil
	}
	if float != (t.f != nil) {
		b.err = fail(CodeShape, "model.json", "weight %q has the wrong dtype", name)
		return nil
	}
	if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
		b.err = fail(CodeShape, "model.json", "weight %q has shape %v, want %v", name, t.shape, shape)
		return nil
	}
	return t
}

// floats returns the float32 weight name of the given shape.
func (b *binder) floats(name string, shape ...int) []float32 {
	if t := b.get(name, true, shape...); t != nil {
		return t.f
	}
	return nil
}

// scalar returns a float32 scalar constant.
func (b *binder) scalar(name string) float32 {
	if f := b.floats(name); f != nil {
		return f[0]
	}
	return 0
}

// ints returns the int32 constant name of the given shape.
func (b *binder) ints(name string, shape ...int) []int32 {
	if t := b.get(name, false, shape...); t != nil {
		return t.i
	}
	return nil
}

// positive returns an int32 scalar constant, checked to be in [1, limit].
func (b *binder) positive(name string, limit int) int {
	v := b.ints(name)
	if v == nil {
		return 0
	}
	if v[0] < 1 || int(v[0]) > limit {
		b.err = fail(CodeShape, "model.json", "constant %q is %d, outside [1, %d]", name, v[0], limit)
		return 0
	}
	return int(v[0])
}

// bind builds the Model from the manifest's tensors. Sizes come from the
// weights themselves (the embedding table's width, the feed-forward
// kernels' hidden size, the head count and size constants) and must be
// mutually consistent.
func bind(ts map[string]*tensor) (*Model, error) {
	b := &binder{ts: ts}
	m := &Model{}
	emb, ok := ts[nEmbeddings]
	if !ok || len(emb.shape) != 2 || emb.shape[0] < 1 || emb.shape[1] < 2 || emb.shape[1]%2 != 0 {
		return nil, fail(CodeShape, "model.json", "weight %q is missing or not a [vocabulary, even width] table", nEmbeddings)
	}
	m.vocabRows, m.width = emb.shape[0], emb.shape[1]
	m.embeddings = b.floats(nEmbeddings, m.vocabRows, m.width)
	m.timing = b.floats(nTiming, 1, m.width/2)
	m.maxLen = b.positive(nMaxLen, 4096)
	m.epsilon = b.scalar(nEpsilon)
	heads := b.positive(nHeads, 64)
	for l := range m.layers {
		ly := &m.layers[l]
		in := Dim
		if l == 0 {
			in = m.width
		}
		ly.in, ly.heads = in, heads
		sl := fmt.Sprintf("Layer_%d/TransformerLayer/", l)
		ly.headDim = b.positive(pStack+sl+"MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", 4096)
		if b.err == nil && ly.heads*ly.headDim != in {
			return nil, fail(CodeShape, "model.json", "layer %d: %d heads of %d do not make its width %d", l, ly.heads, ly.headDim, in)
		}
		split := b.ints(pStack+sl+"MultiheadAttention/Const", 3)
		if b.err == nil && (int(split[0]) != in || int(split[1]) != in || int(split[2]) != in) {
			return nil, fail(CodeShape, "model.json", "layer %d: q/k/v split %v, want %d each", l, split, in)
		}
		ly.qScale = b.scalar(pStack + sl + "MultiheadAttention/mul/y")
		ly.attnScale = b.floats(pEncode+sl+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
		ly.attnBias = b.floats(pEncode+sl+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
		ly.qkvW = b.floats(pModule+sl+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, in, 3*in)
		ly.qkvB = b.floats(pEncode+sl+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in)
		ly.outW = b.floats(pModule+sl+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, in, Dim)
		ly.outB = b.floats(pEncode+sl+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", Dim)
		ly.ffnScale = b.floats(pEncode+sl+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", Dim)
		ly.ffnBias = b.floats(pEncode+sl+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", Dim)
		if t, ok := ts[pStack+sl+"FFN/conv1/Tensordot/Reshape_1"]; ok && len(t.shape) == 2 {
			ly.hidden = t.shape[1]
		}
		if b.err == nil && (ly.hidden < 1 || ly.hidden > 1<<14) {
			return nil, fail(CodeShape, "model.json", "layer %d: feed-forward kernel missing or of width %d", l, ly.hidden)
		}
		ly.ffn1W = b.floats(pStack+sl+"FFN/conv1/Tensordot/Reshape_1", Dim, ly.hidden)
		ly.ffn1B = b.floats(pEncode+sl+"FFN/conv1/bias/ConcatPartitions/concat", ly.hidden)
		ly.ffn2W = b.floats(pStack+sl+"FFN/conv2/Tensordot/Reshape_1", ly.hidden, Dim)
		ly.ffn2B = b.floats(pEncode+sl+"FFN/conv2/bias/ConcatPartitions/concat", Dim)
		if in != Dim {
			ly.residualW = b.floats(nResidualW, in, Dim)
			ly.residualB = b.floats(nResidualB, Dim)
		}
		if b.err == nil && math.Abs(float64(ly.qScale)*math.Sqrt(float64(ly.headDim))-1) > 1e-3 {
			return nil, fail(CodeShape, "model.json", "layer %d: query scale %g is not 1/sqrt(%d)", l, ly.qScale, ly.headDim)
		}
	}
	m.tanhW = b.floats(nTanhW, Dim, Dim)
	m.tanhB = b.floats(nTanhB, Dim)
	m.l2Epsilon = b.scalar(nL2Epsilon)
	if b.err != nil {
		return nil, b.err
	}
	return m, nil
}
