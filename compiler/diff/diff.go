// Package diff compares two compiled services as an agent and an SDK user
// see them: operation by operation, over AIR (tool names, inputs, outputs,
// auth, effect contract, confirmation, served state). Each change is marked
// breaking or not, and the whole comparison gets a semver verdict.
//
// The rule behind "breaking": a caller written against the old contract
// must keep working against the new one. Inputs are what the caller sends,
// so narrowing them (a new required input, a removed input, a narrower type
// or format, fewer enum values, tighter constraints, a changed default)
// breaks it; outputs are what the caller receives, so widening them (types
// it did not declare, new enum values, looser constraints, properties that
// may now be missing) breaks a typed SDK's declared answer.
//
// The package reads AIR only; the spec-level comparison built on libopenapi
// lives in compiler/diff/specdiff and feeds Change values into the same
// report (see WithSpecChanges).
package diff

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Change kinds. Operation-level kinds first, then input, output, contract.
const (
	OperationAdded    = "operation_added"
	OperationRemoved  = "operation_removed"
	OperationRenamed  = "operation_renamed"  // same method+path or operationId; breaking when the AIR id or tool name changed
	OperationServed   = "operation_served"   // not served before, served now
	OperationUnserved = "operation_unserved" // served before, not served now

	InputRequiredAdded     = "input_required_added" // a new required input, or an optional one now required
	InputAdded             = "input_added"          // a new optional input
	InputRemoved           = "input_removed"
	InputTypeChanged       = "input_type_changed" // breaking when narrowed
	InputFormatChanged     = "input_format_changed"
	InputEnumRemoved       = "input_enum_removed" // values no longer accepted (or an enum imposed)
	InputEnumAdded         = "input_enum_added"
	InputConstraintTighter = "input_constraint_tightened"
	InputConstraintLooser  = "input_constraint_loosened"
	InputDefaultChanged    = "input_default_changed"
	InputMediaTypeRemoved  = "input_media_type_removed" // a request media type the operation no longer accepts

	OutputPropertyRemoved   = "output_property_removed"
	OutputPropertyAdded     = "output_property_added"
	OutputTypeChanged       = "output_type_changed" // breaking when widened
	OutputFormatChanged     = "output_format_changed"
	OutputEnumAdded         = "output_enum_added" // values the declared answer did not cover
	OutputEnumRemoved       = "output_enum_removed"
	OutputConstraintLooser  = "output_constraint_loosened"
	OutputConstraintTighter = "output_constraint_tightened"
	OutputStatusChanged     = "output_status_changed"
	OutputMediaTypeRemoved  = "output_media_type_removed" // a success response's media type is gone

	AuthChanged         = "auth_changed"
	EffectClassChanged  = "effect_class_changed"
	UndoLost            = "undo_lost"
	UndoGained          = "undo_gained"
	ConfirmationAdded   = "confirmation_added"
	ConfirmationRemoved = "confirmation_removed"

	// SpecChanged is a spec-level change (compiler/diff/specdiff) that no
	// AIR-level change of the same operation already accounts for.
	SpecChanged = "spec_changed"

	// ComparisonIncomplete says that part of an operation could not be
	// compared (a bound was reached, a side could not be read): its
	// changes are unknown, so the report's verdict is Unknown unless a
	// breaking change already makes it Major.
	ComparisonIncomplete = "comparison_incomplete"
)

// kindOrder orders changes of one operation in a report.
var kindOrder = map[string]int{}

// minorKinds are the non-breaking kinds that add something a caller can
// use; other non-breaking changes make a patch release.
var minorKinds = map[string]bool{
	OperationAdded: true, OperationServed: true, InputAdded: true, InputEnumAdded: true,
	InputConstraintLooser: true, OutputPropertyAdded: true, UndoGained: true,
}

// Kinds lists every change kind in report order.
var Kinds = []string{
	OperationAdded, OperationRemoved, OperationRenamed, OperationServed, OperationUnserved,
	InputRequiredAdded, InputAdded, InputRemoved, InputTypeChanged, InputFormatChanged, InputEnumRemoved,
	InputEnumAdded, InputConstraintTighter, InputConstraintLooser, InputDefaultChanged, InputMediaTypeRemoved,
	OutputPropertyRemoved, OutputPropertyAdded, OutputTypeChanged, OutputFormatChanged, OutputEnumAdded,
	OutputEnumRemoved, OutputConstraintLooser, OutputConstraintTighter, OutputStatusChanged, OutputMediaTypeRemoved,
	AuthChanged, EffectClassChanged, UndoLost, UndoGained, ConfirmationAdded, ConfirmationRemoved,
	SpecChanged, ComparisonIncomplete,
}

func init() {
	for i, k := range Kinds {
		kindOrder[k] = i
	}
}

// Change is one difference between the old and the new contract. Its JSON
// form is the documented shape of `anvil diff --format json`.
type Change struct {
	OperationID string `json:"operation_id"` // the AIR id (the new one when both exist)
	Tool        string `json:"tool"`         // the MCP tool name
	Method      string `json:"method"`
	Path        string `json:"path"`
	Kind        string `json:"kind"`
	Breaking    bool   `json:"breaking"`
	Detail      string `json:"detail"`
	OldLocation string `json:"old_location"` // file:line in the old spec; empty when absent there
	NewLocation string `json:"new_location"`
}

// Semver verdicts.
const (
	Major = "major"
	Minor = "minor"
	Patch = "patch"
	None  = "none"
	// Unknown: some part could not be compared (a comparison_incomplete
	// change) and nothing compared was breaking; it may be Major.
	Unknown = "unknown"
)

// Summary counts a report's changes: breaking, non-breaking, and the
// comparison_incomplete entries (unknown), which count as neither.
type Summary struct {
	Breaking    int `json:"breaking"`
	NonBreaking int `json:"non_breaking"`
	Unknown     int `json:"unknown"`
}

// Report is a whole comparison: the verdict, the counts and every change in
// a deterministic order (path, method, operation id, kind, detail).
type Report struct {
	Semver  string   `json:"semver"`
	Summary Summary  `json:"summary"`
	Changes []Change `json:"changes"`
}

// NewReport sorts the changes and computes the summary and verdict.
func NewReport(changes []Change) *Report {
	r := &Report{Semver: None, Changes: slices.Clone(changes)}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method),
			cmp.Compare(a.OperationID, b.OperationID), cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]),
			cmp.Compare(a.Detail, b.Detail))
	})
	r.Changes = slices.Compact(r.Changes)
	for _, c := range r.Changes {
		switch {
		case c.Kind == ComparisonIncomplete:
			r.Summary.Unknown++
		case c.Breaking:
			r.Summary.Breaking++
		default:
			r.Summary.NonBreaking++
		}
	}
	r.Semver = Verdict(r.Changes)
	return r
}

// Verdict is the semver step a set of changes calls for: major for any
// breaking change, else unknown when some part could not be compared,
// minor for an addition, patch for anything else, none for no change.
func Verdict(changes []Change) string {
	v := None
	unknown := false
	for _, c := range changes {
		switch {
		case c.Breaking:
			return Major
		case c.Kind == ComparisonIncomplete:
			unknown = true
		case minorKinds[c.Kind]:
			v = Minor
		case v == None:
			v = Patch
		}
	}
	if unknown {
		return Unknown
	}
	return v
}

// HasLevel reports whether the report holds a change at the --fail-on
// level: "breaking" (a breaking change, or a part not compared, which may
// hide one), "any" (any change) or "none" (never).
func (r *Report) HasLevel(level string) bool {
	switch level {
	case "breaking":
		return r.Summary.Breaking > 0 || r.Summary.Unknown > 0
	case "any":
		return len(r.Changes) > 0
	}
	return false
}

// Location is an operation's spec position as file:line.
func Location(op *air.Operation) string {
	if op == nil || op.SourceRef.File == "" {
		return ""
	}
	if op.SourceRef.Line == 0 {
		return op.SourceRef.File
	}
	return op.SourceRef.File + ":" + strconv.Itoa(op.SourceRef.Line)
}

// opChange starts a change about the pair (either may be nil).
func opChange(o, n *air.Operation, kind string, breaking bool, format string, args ...any) Change {
	ref := n
	if ref == nil {
		ref = o
	}
	return Change{
		OperationID: ref.ID, Tool: ref.MCP.ToolName, Method: ref.SourceRef.Method, Path: ref.SourceRef.Path,
		Kind: kind, Breaking: breaking, Detail: fmt.Sprintf(format, args...),
		OldLocation: Location(o), NewLocation: Location(n),
	}
}
