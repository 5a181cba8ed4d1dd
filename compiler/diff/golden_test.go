package diff_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/specdiff"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/golden"
)

// wantBreaking is the hand-checked verdict of each case's own kind (the
// txtar's comment says why); a case may report other kinds besides.
var wantBreaking = map[string]bool{
	diff.OperationAdded: false, diff.OperationRemoved: true, diff.OperationRenamed: true,
	diff.OperationServed: false, diff.OperationUnserved: true,
	diff.InputRequiredAdded: true, diff.InputAdded: false, diff.InputRemoved: true, diff.InputTypeChanged: true,
	diff.InputFormatChanged: true, diff.InputEnumRemoved: true, diff.InputEnumAdded: false,
	diff.InputConstraintTighter: true, diff.InputConstraintLooser: false, diff.InputDefaultChanged: true,
	diff.OutputPropertyRemoved: true, diff.OutputPropertyAdded: false, diff.OutputTypeChanged: true,
	diff.OutputFormatChanged: true, diff.OutputEnumAdded: true, diff.OutputEnumRemoved: false,
	diff.OutputConstraintLooser: true, diff.OutputConstraintTighter: false, diff.OutputStatusChanged: true,
	diff.AuthChanged: true, diff.EffectClassChanged: false, diff.UndoLost: true, diff.UndoGained: false,
	diff.ConfirmationAdded: true, diff.ConfirmationRemoved: false, diff.SpecChanged: true,
	diff.InputMediaTypeRemoved: true, diff.OutputMediaTypeRemoved: true, diff.ComparisonIncomplete: false,
}

// TestGolden runs one case per change kind (golden/diff/<kind>.txtar: a
// spec pair, a manifest or a manifest pair, and the expected text report).
// The report must hold the kind with its hand-checked breaking verdict and
// equal the golden text; ANVIL_UPDATE_GOLDEN=1 rewrites the report section.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(golden.Path("diff/*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		kind := strings.TrimSuffix(filepath.Base(file), ".txtar")
		seen[kind] = true
		t.Run(kind, func(t *testing.T) {
			want, ok := wantBreaking[kind]
			if !ok {
				t.Fatalf("%s names no change kind", file)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(raw)
			if kind == diff.ComparisonIncomplete {
				defer diff.SetMaxNodes(3)()
			}
			report := run(t, ar)
			found := false
			for _, c := range report.Changes {
				if c.Kind == kind {
					found = true
					if c.Breaking != want {
						t.Errorf("%s: breaking %v, want %v: %s", kind, c.Breaking, want, c.Detail)
					}
					if c.OldLocation == "" && c.NewLocation == "" {
						t.Errorf("%s has no location", kind)
					}
				}
			}
			if !found {
				t.Errorf("no %s change in the report", kind)
			}
			var b bytes.Buffer
			if err := report.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if golden.Updating() {
				set(ar, "report", b.Bytes())
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if w := string(section(ar, "report")); w != b.String() {
				t.Errorf("report differs (-want +got):\n%s", cmp.Diff(w, b.String()))
			}
		})
	}
	for _, k := range diff.Kinds {
		if !seen[k] {
			t.Errorf("no golden case for %s", k)
		}
	}
}

// run compiles both sides as anvil diff does and builds the report.
func run(t *testing.T, ar *txtar.Archive) *diff.Report {
	t.Helper()
	oldSide := compile(t, ar, "old")
	newSide := compile(t, ar, "new")
	frame := func(name string) specdiff.Side {
		b, err := openapi.Frame(name, section(ar, name))
		if err != nil {
			t.Fatal(err)
		}
		return specdiff.Side{Name: name, Bytes: b}
	}
	spec, err := specdiff.Compare(frame("old.yaml"), frame("new.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return diff.NewReport(diff.WithSpecChanges(diff.CompareSides(oldSide, newSide), spec, oldSide.Doc, newSide.Doc))
}

func compile(t *testing.T, ar *txtar.Archive, side string) diff.Side {
	t.Helper()
	specName := side + ".yaml"
	spec, err := openapi.LoadBytes(specName, section(ar, specName), &openapi.Options{AllMediaTypes: true})
	if err != nil {
		t.Fatalf("%s: %v", specName, err)
	}
	manName := side + ".anvil.yaml"
	text := section(ar, manName)
	if text == nil {
		manName, text = "anvil.yaml", section(ar, "anvil.yaml")
	}
	var man *manifest.Manifest
	if text != nil {
		m, l := manifest.Decode(manName, text)
		if l.HasErrors() {
			t.Fatalf("%s: %v", manName, l)
		}
		man = m
	}
	doc, l := lower.Lower(spec, man, nil)
	if l.HasErrors() {
		var b bytes.Buffer
		_ = l.WriteText(&b)
		t.Fatalf("%s does not compile cleanly:\n%s", side, b.String())
	}
	for _, d := range l {
		if d.Level == diag.Warning {
			t.Logf("%s: %s", side, d)
		}
	}
	return diff.Side{Doc: doc, Surfaces: specdiff.Surfaces(spec)}
}

func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func set(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}
