package diff

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Side is one side of a comparison: its AIR, and, when it was compiled
// from a spec, the surface of each operation (by SurfaceKey); a bundle has
// none, and then only the AIR contracts are compared.
type Side struct {
	Doc      *air.Document
	Surfaces map[string]*Surface
}

func (s Side) surface(op *air.Operation) *Surface {
	return s.Surfaces[SurfaceKey(op.SourceRef.Method, op.SourceRef.Path)]
}

// Compare returns every change from the old document to the new one (the
// AIR contracts only: see CompareSides).
func Compare(oldDoc, newDoc *air.Document) []Change {
	return CompareSides(Side{Doc: oldDoc}, Side{Doc: newDoc})
}

// CompareSides returns every change from the old side to the new one.
// Operations are paired by method and path (path parameter names ignored),
// then by the spec's operationId; what is left is added or removed. A pair
// whose two sides both have a surface is also compared on it: every
// security alternative and scope set, and the request and success
// response media types AIR's contract does not carry.
func CompareSides(oldSide, newSide Side) []Change {
	oldDoc, newDoc := oldSide.Doc, newSide.Doc
	var changes []Change
	contracts := newMemo(oldDoc.Schemas, newDoc.Schemas)
	var surfaces *memo // the spec's named schemas: every surface of a side shares them
	pairs, removed, added := match(oldDoc, newDoc)
	for _, o := range removed {
		changes = append(changes, opChange(o, nil, OperationRemoved, true, "%s %s removed", o.SourceRef.Method, o.SourceRef.Path))
	}
	for _, n := range added {
		changes = append(changes, opChange(nil, n, OperationAdded, false, "%s %s added", n.SourceRef.Method, n.SourceRef.Path))
	}
	for _, p := range pairs {
		o, n := p[0], p[1]
		changes = append(changes, renamed(o, n)...)
		switch os, ns := air.IsServed(o), air.IsServed(n); {
		case os && !ns:
			changes = append(changes, opChange(o, n, OperationUnserved, true, "no longer served (state %s)", n.State))
		case !os && ns:
			changes = append(changes, opChange(o, n, OperationServed, false, "now served (was %s)", o.State))
		}
		airAuth := false
		for _, f := range compareContracts(ContractOf(oldDoc, o), ContractOf(newDoc, n), contracts) {
			changes = append(changes, opChange(o, n, f.Kind, f.Breaking, "%s", f.Detail))
			airAuth = airAuth || f.Kind == AuthChanged
		}
		if os, ns := oldSide.surface(o), newSide.surface(n); os != nil && ns != nil {
			if surfaces == nil {
				surfaces = newMemo(os.Defs, ns.Defs)
			}
			for _, f := range compareSurfaces(os, ns, primaryOf(o), primaryOf(n), surfaces, airAuth) {
				changes = append(changes, opChange(o, n, f.Kind, f.Breaking, "%s", f.Detail))
			}
		}
	}
	return changes
}

// Finding is a contract difference without the operation it belongs to.
type Finding struct {
	Kind     string
	Breaking bool
	Detail   string
}

// CompareContracts returns what changed from one contract to the other, in
// a deterministic order. The approval lock names changes with it.
func CompareContracts(o, n *Contract) []Finding {
	return compareContracts(o, n, newMemo(o.Defs, n.Defs))
}

// compareContracts is CompareContracts with the pair comparisons kept in
// m, which must hold o's and n's Defs.
func compareContracts(o, n *Contract, m *memo) []Finding {
	var out []Finding
	add := func(kind string, breaking bool, format string, args ...any) {
		out = append(out, Finding{Kind: kind, Breaking: breaking, Detail: fmt.Sprintf(format, args...)})
	}
	if o.Method != n.Method || normPath(o.Path) != normPath(n.Path) {
		// The gateway routes by tool; a caller sees the move only through
		// the contract below, so a move alone is not breaking.
		add(OperationRenamed, false, "moved from %s %s to %s %s", o.Method, o.Path, n.Method, n.Path)
	}
	for _, f := range compareSchemas(m, input, o.Input, n.Input) {
		add(f.kind, f.breaking, "%s", f.detail)
	}
	if o.Status != n.Status {
		add(OutputStatusChanged, true, "success status %d → %d", o.Status, n.Status)
	}
	for _, f := range compareSchemas(m, output, o.Output, n.Output) {
		add(f.kind, f.breaking, "%s", f.detail)
	}
	if oa, na := authText(o.Auth), authText(n.Auth); oa != na {
		// Dropping authentication breaks no caller; any other change asks
		// for different credentials.
		add(AuthChanged, na != string(air.AuthNone), "auth %s → %s", oa, na)
	}
	if o.EffectClass != n.EffectClass {
		add(EffectClassChanged, classRank(n.EffectClass) > classRank(o.EffectClass), "effect class %s → %s", o.EffectClass, n.EffectClass)
	}
	switch {
	case o.Undo && !n.Undo:
		add(UndoLost, true, "no undo any more")
	case !o.Undo && n.Undo:
		add(UndoGained, false, "can now be undone")
	}
	switch {
	case !o.Confirmation && n.Confirmation:
		add(ConfirmationAdded, true, "now requires confirmation")
	case o.Confirmation && !n.Confirmation:
		add(ConfirmationRemoved, false, "no longer requires confirmation")
	}
	return out
}

// classRank orders effect classes by how much harder they are to take back.
func classRank(c air.EffectClass) int {
	return slices.Index([]air.EffectClass{air.ClassRead, air.ClassReversible, air.ClassCompensable, air.ClassIrreversible}, c)
}

// authText names an auth requirement: type, scheme and sorted scopes.
func authText(a *air.Auth) string {
	if a == nil || a.Type == "" {
		return string(air.AuthNone)
	}
	s := string(a.Type)
	if a.Scheme != "" {
		s += "(" + a.Scheme + ")"
	}
	if len(a.Scopes) > 0 {
		sc := slices.Clone(a.Scopes)
		slices.Sort(sc)
		s += " scopes " + strings.Join(sc, ",")
	}
	return s
}

// renamed reports a changed AIR id or tool name of a paired operation.
func renamed(o, n *air.Operation) []Change {
	var parts []string
	if o.ID != n.ID {
		parts = append(parts, fmt.Sprintf("id %s → %s", o.ID, n.ID))
	}
	if o.MCP.ToolName != n.MCP.ToolName {
		parts = append(parts, fmt.Sprintf("tool %s → %s", o.MCP.ToolName, n.MCP.ToolName))
	}
	if len(parts) == 0 {
		return nil
	}
	return []Change{opChange(o, n, OperationRenamed, true, "%s", strings.Join(parts, ", "))}
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// normPath forgets path parameter names: /a/{id} and /a/{name} are one route.
func normPath(p string) string { return pathParam.ReplaceAllString(p, "{}") }

// match pairs operations of the two documents.
func match(oldDoc, newDoc *air.Document) (pairs [][2]*air.Operation, removed, added []*air.Operation) {
	route := func(op *air.Operation) string { return op.SourceRef.Method + " " + normPath(op.SourceRef.Path) }
	byRoute := map[string]*air.Operation{}
	byOpID := map[string]*air.Operation{}
	for i := range newDoc.Operations {
		n := &newDoc.Operations[i]
		if _, dup := byRoute[route(n)]; !dup {
			byRoute[route(n)] = n
		}
		if id := n.SourceRef.OperationID; id != "" {
			if _, dup := byOpID[id]; !dup {
				byOpID[id] = n
			}
		}
	}
	used := map[*air.Operation]bool{}
	var unmatched []*air.Operation
	for i := range oldDoc.Operations {
		o := &oldDoc.Operations[i]
		if n := byRoute[route(o)]; n != nil && !used[n] {
			used[n] = true
			pairs = append(pairs, [2]*air.Operation{o, n})
			continue
		}
		unmatched = append(unmatched, o)
	}
	for _, o := range unmatched {
		if n := byOpID[o.SourceRef.OperationID]; o.SourceRef.OperationID != "" && n != nil && !used[n] {
			used[n] = true
			pairs = append(pairs, [2]*air.Operation{o, n})
			continue
		}
		removed = append(removed, o)
	}
	for i := range newDoc.Operations {
		if n := &newDoc.Operations[i]; !used[n] {
			added = append(added, n)
		}
	}
	return pairs, removed, added
}

// WithSpecChanges adds the spec-level changes (compiler/diff/specdiff) that
// no AIR-level change already accounts for: an operation or path with an
// AIR-level change keeps only those, so one change is not counted twice.
// A kept change of an operation is given its AIR id and tool name.
func WithSpecChanges(changes, spec []Change, oldDoc, newDoc *air.Document) []Change {
	touchedOp := map[string]bool{}
	touchedPath := map[string]bool{}
	for _, c := range changes {
		touchedOp[c.Method+" "+normPath(c.Path)] = true
		touchedPath[normPath(c.Path)] = true
	}
	find := func(method, path string) *air.Operation {
		for _, d := range []*air.Document{newDoc, oldDoc} {
			for i := range d.Operations {
				op := &d.Operations[i]
				if op.SourceRef.Method == method && normPath(op.SourceRef.Path) == normPath(path) {
					return op
				}
			}
		}
		return nil
	}
	out := slices.Clone(changes)
	for _, s := range spec {
		switch {
		case s.Path == "":
		case s.Method == "" && touchedPath[normPath(s.Path)]:
			continue
		case s.Method != "" && touchedOp[s.Method+" "+normPath(s.Path)]:
			continue
		case s.Method != "":
			if op := find(s.Method, s.Path); op != nil {
				s.OperationID, s.Tool = op.ID, op.MCP.ToolName
			}
		}
		out = append(out, s)
	}
	return out
}
