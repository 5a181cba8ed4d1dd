package lower

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// effectCodes are every effect/* compile diagnostic of the reference (§c),
// with its level.
var effectCodes = map[string]diag.Level{
	"effect/class_on_read":                  diag.Error,
	"effect/read_class_on_mutation":         diag.Error,
	"effect/class_conflicts_reversible":     diag.Error,
	"effect/reversible_without_inverse":     diag.Error,
	"effect/compensable_without_compensate": diag.Error,
	"effect/inverse_on_non_reversible":      diag.Error,
	"effect/compensate_on_class":            diag.Error,
	"effect/lookup_on_read":                 diag.Error,
	"effect/draft_on_read":                  diag.Error,
	"effect/operation_missing":              diag.Error,
	"effect/operation_self":                 diag.Error,
	"effect/follow_up_is_read":              diag.Error,
	"effect/lookup_not_read":                diag.Error,
	"effect/operation_not_approved":         diag.Warning,
	"effect/mapping_sets_safety_control":    diag.Error,
	"effect/mapping_unknown_argument":       diag.Error,
	"effect/mapping_type_mismatch":          diag.Error,
	"effect/path_invalid":                   diag.Error,
	"effect/path_root_not_allowed":          diag.Error,
	"effect/path_unresolved":                diag.Error,
	"effect/path_unverified":                diag.Warning,
	"effect/mapping_required_optional":      diag.Error,
	"effect/mapping_missing_required":       diag.Error,
	"effect/deadline_shape":                 diag.Error,
	"effect/deadline_path":                  diag.Error,
	"effect/lookup_without_idempotency_key": diag.Error,
	"effect/lookup_key_unused":              diag.Error,
	"effect/draft_handle":                   diag.Error,
	"effect/confirmation_for_draft":         diag.Warning,
}

const effectsGoldenDir = "compile/effects"

// TestEffectGolden runs one golden case per effect/* code: a github-mini
// manifest variant (decoded with the real decoder) lowered against the real
// github-mini spec must print exactly the case's effect diagnostics, all of
// the case's code, and an error must downgrade the operation.
func TestEffectGolden(t *testing.T) {
	spec := loadMiniSpec(t)
	dir := golden.Path(effectsGoldenDir)
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		code := strings.Replace(name, "_", "/", 1)
		seen[code] = true
		t.Run(name, func(t *testing.T) {
			level, ok := effectCodes[code]
			if !ok {
				t.Fatalf("golden case %s names no effect code of the reference", name)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(raw)
			manifestText := section(ar, "anvil.yaml")
			if manifestText == nil {
				t.Fatal("no anvil.yaml section")
			}
			man, md := manifest.Decode("anvil.yaml", manifestText)
			if md.HasErrors() {
				t.Fatalf("manifest does not decode:\n%s", text(md))
			}
			doc, ds := Lower(spec, man, nil)
			var effects diag.List
			for _, d := range ds {
				if strings.HasPrefix(d.Code, "effect/") {
					effects = append(effects, d)
				}
			}
			effects.Sort()
			got := text(effects)
			if golden.Updating() {
				setSection(ar, "diagnostics", []byte(got))
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want := string(section(ar, "diagnostics")); want != got {
				t.Errorf("diagnostics differ (-want +got):\n%s", cmp.Diff(want, got))
			}
			if len(effects) == 0 {
				t.Fatalf("no effect diagnostic; want %s", code)
			}
			for _, d := range effects {
				if d.Code != code {
					t.Errorf("case %s also reports %s", code, d)
				}
				if d.Level != level {
					t.Errorf("%s has level %s, want %s", d.Code, d.Level, level)
				}
				if d.Pos.File != "anvil.yaml" || d.Pos.Line == 0 || d.Pos.Col == 0 {
					t.Errorf("%s is not positioned in the manifest: %s", d.Code, d.Pos)
				}
			}
			for _, d := range ds {
				if d.Level == diag.Error && !strings.HasPrefix(d.Code, "effect/") {
					t.Errorf("unexpected error: %s", d)
				}
			}
			op := doc.Operation(effects[0].OperationID)
			if op == nil {
				t.Fatalf("diagnostic names no operation: %q", effects[0].OperationID)
			}
			switch level {
			case diag.Error:
				assertDowngraded(t, op)
			default:
				if hasNote(op, "Effect contract rejected") {
					t.Errorf("%s: a %s must not reject the contract: %v", op.ID, level, op.ReviewNotes)
				}
				if op.Effect.Class == "" {
					t.Errorf("%s lost its declared class", op.ID)
				}
			}
			if code == "effect/confirmation_for_draft" {
				if !op.Confirmation.Required || op.Input.Safety.ConfirmKey != "confirm" || op.Input.Schema.Properties["confirm"] == nil {
					t.Errorf("%s: confirmation not forced on: %+v safety %+v", op.ID, op.Confirmation, op.Input.Safety)
				}
				if op.Effect.Draft == nil {
					t.Errorf("%s lost its draft", op.ID)
				}
			}
		})
	}
	for code := range effectCodes {
		if !seen[code] {
			t.Errorf("no golden case for %s", code)
		}
	}
}

// assertDowngraded checks the rule for an operation whose effect contract has an error.
func assertDowngraded(t *testing.T, op *air.Operation) {
	t.Helper()
	e := op.Effect
	wantClass := air.ClassIrreversible
	if e.Kind == air.KindRead {
		wantClass = air.ClassRead
	}
	if e.Class != wantClass || e.Reversible {
		t.Errorf("%s: class %q reversible %v, want %q and false", op.ID, e.Class, e.Reversible, wantClass)
	}
	if e.Inverse != nil || e.Compensate != nil || e.Lookup != nil || e.Draft != nil {
		t.Errorf("%s: follow-ups kept: %+v", op.ID, e)
	}
	prefix := "Effect contract rejected ("
	found := false
	for _, n := range op.ReviewNotes {
		if strings.HasPrefix(n, prefix) && strings.Contains(n, "; served as "+string(wantClass)+" with no undo until it is fixed: ") {
			found = true
		}
	}
	if !found {
		t.Errorf("%s: no rejection note: %q", op.ID, op.ReviewNotes)
	}
	if e.Kind == air.KindMutation {
		if !op.Confirmation.Required {
			t.Errorf("%s: confirmation not required", op.ID)
		}
		s := op.Input.Schema
		ck := op.Input.Safety.ConfirmKey
		if ck == "" || s.Properties[ck] == nil || !slices.Contains(s.Required, ck) {
			t.Errorf("%s: input schema not republished with confirm: safety %+v required %v", op.ID, op.Input.Safety, s.Required)
		}
	}
}

func hasNote(op *air.Operation, prefix string) bool {
	for _, n := range op.ReviewNotes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func setSection(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}

func text(l diag.List) string {
	var b bytes.Buffer
	_ = l.WriteText(&b)
	return b.String()
}
