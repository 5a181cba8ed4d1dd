package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/golden"
)

// TestTestdata decodes each testdata/*.yaml and compares the rendered
// diagnostics with the .want file next to it (empty for a clean manifest).
// ANVIL_UPDATE_GOLDEN=1 rewrites the .want files.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, diags := Load(f)
			var b strings.Builder
			if err := diags.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			wantFile := strings.TrimSuffix(f, ".yaml") + ".want"
			if golden.Updating() {
				if err := os.WriteFile(wantFile, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("diagnostics differ from %s\n--- got\n%s--- want\n%s", wantFile, b.String(), want)
			}
		})
	}
}
