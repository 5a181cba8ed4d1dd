package lower

import (
	"regexp"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
)

// Pin is the names an approved operation was served under, as anvil.lock
// records them (compiler/lock): lowering gives them back to the operation,
// so an approved operation keeps its AIR id, canonical name, tool name and
// CLI command across recompiles whatever else the description gains or
// loses, as long as the operation itself keeps its method, path (parameter
// names aside) and operationId. A manifest name override still renames the
// canonical name, tool and CLI command (never the id): it is the author's
// word.
type Pin struct {
	// Method and Path identify the operation.
	Method string
	Path   string
	// OperationID is the spec's operationId the names were derived from;
	// a pin is not applied to an operation whose operationId differs.
	OperationID string
	// ID is the AIR id.
	ID string
	// CanonicalName, Tool and CLI are the other names; all empty when the
	// lock recorded only the id (anvil.lock/v2: then OperationID is not
	// compared either).
	CanonicalName string
	Tool          string
	CLI           string
}

// Diagnostic codes of pins.
const (
	// CodePinned (info): an operation keeps the names anvil.lock pins, which
	// differ from what lowering derives for it today.
	CodePinned = "naming_pinned"
	// CodePinIgnored (warning): a pin that cannot be applied as recorded
	// (names AIR does not accept, or a tool name over today's length
	// budget); the operation gets the names derived today.
	CodePinIgnored = "naming_pin_ignored"
)

// maxPinnedCLI bounds a pinned CLI command (a lock is input).
const maxPinnedCLI = 512

var (
	pinnedID        = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$`)
	pinnedCanonical = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// applyPins gives each operation a pin names the names it records and
// fixes them (collisions then qualify the other operations). A pin applies
// to the first operation of its route not pinned yet; it is skipped when
// the operationId changed, and ignored with a warning when its names do not
// fit today's rules. It returns, per operation, whether a pin applied.
func (l *lowerer) applyPins(routes []*routing) []bool {
	pinned := make([]bool, len(routes))
	if len(l.opts.Pins) == 0 {
		return pinned
	}
	// What each operation would be named without pins, to report the
	// names a pin keeps.
	fresh := make([]*routing, len(routes))
	for i, r := range routes {
		c := *r
		fresh[i] = &c
	}
	resolveCollisions(l.service, fresh)

	byRoute := map[string][]int{}
	for i, r := range routes {
		byRoute[r.route] = append(byRoute[r.route], i)
	}
	budget := canonicalBudget(l.service)
	for _, p := range l.opts.Pins {
		at := -1
		for _, i := range byRoute[routeKey(p.Method, p.Path)] {
			if !pinned[i] {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		st, r := l.ops[at], routes[at]
		names := p.CanonicalName != "" || p.Tool != "" || p.CLI != ""
		if names && p.OperationID != st.spec.OperationID {
			continue // the operation itself changed: named afresh
		}
		if why := l.pinProblem(p, names, budget); why != "" {
			l.addDiag(l.opPos(st), diag.Warning, CodePinIgnored, at,
				"anvil.lock pins %s %s as %s, which cannot be kept (%s); the operation gets the names derived today", p.Method, p.Path, p.ID, why)
			continue
		}
		pinned[at] = true
		r.set(l.service, kindID, p.ID)
		r.fixed[kindID] = true
		if names {
			r.set(l.service, kindTool, p.CanonicalName)
			r.set(l.service, kindCLI, p.CLI)
			r.fixed[kindTool], r.fixed[kindCLI] = true, true
		}
		f := fresh[at]
		var kept []string
		for k := range nameKinds {
			if r.fixed[k] && r.name(k) != f.name(k) {
				kept = append(kept, kindLabels[k]+" "+quote(r.name(k))+" (derived today: "+quote(f.name(k))+")")
			}
		}
		if len(kept) > 0 {
			l.addDiag(l.opPos(st), diag.Info, CodePinned, at, "anvil.lock pins this operation's names: %s", strings.Join(kept, ", "))
		}
	}
	return pinned
}

// pinProblem says why a pin cannot be applied, or "".
func (l *lowerer) pinProblem(p Pin, names bool, budget int) string {
	if !pinnedID.MatchString(p.ID) || !strings.HasPrefix(p.ID, l.service+".") {
		return "the id is not an AIR id of service " + quote(l.service)
	}
	if !names {
		return ""
	}
	switch {
	case !pinnedCanonical.MatchString(p.CanonicalName):
		return "the canonical name is not snake_case ASCII"
	case p.Tool != l.service+"_"+p.CanonicalName:
		return "the tool name is not " + quote(l.service+"_"+p.CanonicalName)
	case len(p.CanonicalName) > budget:
		return "the tool name is longer than the served-name budget allows"
	case !strings.HasPrefix(p.CLI, l.service+" ") || len(p.CLI) > maxPinnedCLI || strings.ContainsFunc(p.CLI, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "the CLI command is not one: the service id, a space, words"
	}
	return ""
}
