package pgstore

import (
	"os"
	"strings"
	"testing"
)

// docs/state.md shows schema version 1; it must be the migration itself
// (a later version appends a migration and a block after this one).
func TestDocsShowTheSchema(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/state.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "```sql\n")
	if i < 0 {
		t.Fatal("docs/state.md has no sql block")
	}
	block := text[i+len("```sql\n"):]
	block = block[:strings.Index(block, "```")]
	if block != strings.TrimPrefix(migrations[0], "\n") {
		t.Fatalf("docs/state.md's schema differs from migration 1:\n%s", block)
	}
}
