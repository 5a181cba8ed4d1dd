package diff_test

import (
	"bytes"
	"os"
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
// spec pair, a manifest or a manifest pair, each held once as
// golden.ReadDiffCase describes, and the expected text report).
// The report must hold the kind with its hand-checked breaking verdict and
// equal the golden text; ANVIL_UPDATE_GOLDEN=1 rewrites the report section.
func TestGolden(t *testing.T) {
	kinds, err := golden.DiffKinds()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, kind := range kinds {
		seen[kind] = true
		t.Run(kind, func(t *testing.T) {
			want, ok := wantBreaking[kind]
			if !ok {
				t.Fatalf("golden/diff/%s.txtar names no change kind", kind)
			}
			c, err := golden.ReadDiffCase(kind)
			if err != nil {
				t.Fatal(err)
			}
			if kind == diff.ComparisonIncomplete {
				defer diff.SetMaxNodes(3)()
			}
			report := run(t, c)
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
				set(c.Archive, "report", b.Bytes())
				if err := os.WriteFile(c.File, txtar.Format(c.Archive), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if w := string(c.Report); w != b.String() {
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
func run(t *testing.T, c *golden.DiffCase) *diff.Report {
	t.Helper()
	oldSide := compile(t, "old.yaml", c.OldSpec, "old.anvil.yaml", c.OldManifest)
	newSide := compile(t, "new.yaml", c.NewSpec, "new.anvil.yaml", c.NewManifest)
	frame := func(name string, text []byte) specdiff.Side {
		b, err := openapi.Frame(name, text)
		if err != nil {
			t.Fatal(err)
		}
		return specdiff.Side{Name: name, Bytes: b}
	}
	spec, err := specdiff.Compare(frame("old.yaml", c.OldSpec), frame("new.yaml", c.NewSpec))
	if err != nil {
		t.Fatal(err)
	}
	return diff.NewReport(diff.WithSpecChanges(diff.CompareSides(oldSide, newSide), spec, oldSide.Doc, newSide.Doc))
}

func compile(t *testing.T, specName string, specText []byte, manName string, manText []byte) diff.Side {
	t.Helper()
	spec, err := openapi.LoadBytes(specName, specText, &openapi.Options{AllMediaTypes: true})
	if err != nil {
		t.Fatalf("%s: %v", specName, err)
	}
	man, l := manifest.Decode(manName, manText)
	if l.HasErrors() {
		t.Fatalf("%s: %v", manName, l)
	}
	doc, l := lower.Lower(spec, man, nil)
	if l.HasErrors() {
		var b bytes.Buffer
		_ = l.WriteText(&b)
		t.Fatalf("%s does not compile cleanly:\n%s", specName, b.String())
	}
	for _, d := range l {
		if d.Level == diag.Warning {
			t.Logf("%s: %s", specName, d)
		}
	}
	return diff.Side{Doc: doc, Surfaces: specdiff.Surfaces(spec)}
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
