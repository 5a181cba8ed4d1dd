package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// TestGenerateFixture: a word gets the other words of its most frequent
// sense's synset that the sense-tagged corpus has seen (flick has tag count
// 0 and big_screen is not one word), across parts of speech; a word with
// none is left out; the header carries WordNet's notice.
func TestGenerateFixture(t *testing.T) {
	b, err := Generate(filepath.Join("testdata", "dict"))
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(string(b), Header)
	if !ok {
		t.Fatalf("no header:\n%s", b)
	}
	if want := "film movie\nmovie film\nshoot film\n"; body != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}
	if !strings.Contains(Header, "Princeton University") {
		t.Error("the licence notice is missing")
	}
	if _, err := Generate(filepath.Join("testdata", "nope")); err == nil {
		t.Error("a missing dictionary is not an error")
	}
}

// TestTableUpToDate: runtime/discover/wordnet.txt is what the generator
// writes from the installed WordNet (Debian wordnet-base; make deps
// installs it), byte for byte: the table is never edited by hand.
func TestTableUpToDate(t *testing.T) {
	const dict = "/usr/share/wordnet"
	testinput.File(t, filepath.Join(dict, "index.noun"), "apt-get install wordnet-base")
	want, err := Generate(dict)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "runtime", "discover", "wordnet.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("runtime/discover/wordnet.txt differs from the generator's output: run go run ./internal/wordnetgen")
	}
}
