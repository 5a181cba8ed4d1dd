package embed

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tinyVocab is a vocabulary of a few pieces: the six reserved entries,
// "▁", single letters a–e and some longer pieces with scores that make
// the longer pieces win when they fit.
func tinyVocab(t testing.TB) *vocab {
	t.Helper()
	raw := `[["<unk>",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],` +
		`["▁",-2],["a",-3],["b",-3],["c",-3],["d",-3],["e",-3],["▁ab",-2.5],["cd",-2],["abc",-4],["▁a",-1],[":)",null]]`
	v, err := parseVocab([]byte(raw), 32)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEncodeViterbi(t *testing.T) {
	v := tinyVocab(t)
	pieces := func(ids []int) string {
		var out []string
		for _, id := range ids {
			for p, i := range v.ids {
				if i == id {
					out = append(out, p)
				}
			}
			if id == unknownID {
				out = append(out, "?")
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ in, want string }{
		{"abcd", "▁ab cd"},    // -4.5 beats ▁a b cd (-6) and ▁ abc d (-9)
		{"a  b", "▁a ▁ ▁ b"},  // every space is a "▁"
		{"xyz", "▁ ?"},        // consecutive unknown characters are one unknown piece
		{"axb", "▁a ? b"},     // an unknown between known pieces
		{"x1", "▁ ?"},         // reserved entries never match text
		{":)", "▁ :)"},        // a null score counts as 0
		{"ａｂ", "▁ab"},         // NFKC folds full-width letters
		{"", "▁"},             // the empty text is the lone "▁"
		{"\xff\xfe", "▁ ?"},   // invalid UTF-8: unknown
		{"é", "▁ ?"},          // no piece for é
		{"ab\u0301", "▁ab ?"}, // a combining mark NFKC cannot compose with b
	} {
		if got := pieces(v.encode(c.in)); got != c.want {
			t.Errorf("encode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzEncode: any text tokenizes without panicking into valid ids, never
// two unknown pieces in a row, and, when no piece is unknown, the pieces
// spell the normalised text.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "abcd", "a  b", "é:)x", "\xff", strings.Repeat("ab ", 100)} {
		f.Add(s)
	}
	v := tinyVocab(f)
	spelled := map[int]string{}
	for p, id := range v.ids {
		spelled[id] = p
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := v.encode(s)
		var b strings.Builder
		unknown := false
		for i, id := range ids {
			if id < 0 || id >= len(v.scores) {
				t.Fatalf("id %d out of range", id)
			}
			if id == unknownID {
				if i > 0 && ids[i-1] == unknownID {
					t.Fatalf("two unknown pieces in a row: %v", ids)
				}
				unknown = true
			}
			b.WriteString(spelled[id])
		}
		if len(s) <= MaxTextBytes && utf8.ValidString(s) && !unknown {
			if want := "▁" + strings.ReplaceAll(norm.NFKC.String(s), " ", "▁"); b.String() != want {
				t.Fatalf("pieces spell %q, want %q", b.String(), want)
			}
		}
	})
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("a", MaxTextBytes-1) + "é" // é's two bytes straddle the limit
	if got := truncate(long); got != strings.Repeat("a", MaxTextBytes-1) {
		t.Errorf("truncate kept %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if got := truncate("abc"); got != "abc" {
		t.Errorf("truncate(abc) = %q", got)
	}
	// NFKC lengthens "㍿" (3 bytes) to "株式会社" (12): the normalised text
	// is cut too, and the words after the run are past the cut.
	v := tinyVocab(t)
	if ids := v.encode(strings.Repeat("\u337f", MaxTextBytes/12+1) + " abcd"); len(ids) != 2 {
		t.Errorf("%v: want ▁ and one unknown piece", ids)
	}
	if ids := v.encode(strings.Repeat("\u337f", MaxTextBytes/12-1) + " abcd"); len(ids) != 4 {
		t.Errorf("%v: want ▁, one unknown piece, ▁ab, cd", ids)
	}
}
