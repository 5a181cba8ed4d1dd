package grant

import "encoding/json"

// Outcomes of a decision, as the audit log's "decision" field writes them.
const (
	Allowed              = "allowed"
	Denied               = "denied"
	ConfirmationRequired = "confirmation_required"
)

// Refusal sub-codes (details.code of the error envelope, the audit line's
// "rule").
const (
	CodeDenied               = "policy/grant_denied"
	CodeConfirmationRequired = "policy/grant_confirmation_required"
)

// Op is what a decision needs to know about an operation.
type Op struct {
	// Connector is the id the operation's bundle is served under.
	Connector string
	// ID is the AIR operation id ("github.issues.list").
	ID string
	// ServiceID is the AIR service id ("github"); globs may omit the
	// "<service>." prefix. When empty, the prefix is the id's first segment.
	ServiceID string
	// Mutation is true when AIR classifies the operation as a mutation.
	Mutation bool
	// NeedsConfirm is true when AIR marks the operation as needing
	// confirmation.
	NeedsConfirm bool
}

// Decision is the grant's answer for one operation.
type Decision struct {
	// Outcome is Allowed, Denied or ConfirmationRequired.
	Outcome string
	// Index is the deciding entry's index in the list, or -1 when no entry
	// decided (no entry for the connector, or none names the operation).
	Index int
	// Entry is the deciding entry (the allowing one, or the refusal's rule),
	// or nil when Index is -1. It points into the list: do not modify it.
	Entry *Entry
	// Account is the deciding entry's account ("default" when it names
	// none), or "" when no entry decided.
	Account string
	// Code is "" when allowed, else CodeDenied or CodeConfirmationRequired.
	Code string

	rule json.RawMessage // precomputed Rule(), set by Compile
}

// IsAllowed reports whether the outcome is Allowed.
func (d Decision) IsAllowed() bool { return d.Outcome == Allowed }

// Rule is the deciding entry as refusal details and audit lines carry it,
// {"index":n,"connector",…}, or null when no entry decided.
func (d Decision) Rule() json.RawMessage {
	if d.rule != nil {
		return d.rule
	}
	if d.Entry == nil {
		return json.RawMessage("null")
	}
	return d.Entry.AuditJSON(d.Index)
}

// passesMode reports whether an entry's mode admits the operation: write
// admits everything, read only reads, and anything else nothing.
func passesMode(e *Entry, mutation bool) bool {
	return e.Mode == ModeWrite || (e.Mode == ModeRead && !mutation)
}

// Decide applies the grant to one operation, in this order:
//
//  1. No entry for the connector: denied, no rule.
//  2. No entry for the connector whose globs name the operation: denied, no
//     rule.
//  3. A mutation that only read entries name: denied; the rule is the first
//     naming entry.
//  4. An operation needing confirmation when no entry that passed the mode
//     check has confirm "allow": confirmation_required; the rule is the first
//     entry that passed the mode check.
//  5. Otherwise allowed by the first entry that passes; its account (default
//     "default") selects the vault record.
func (l List) Decide(op Op) Decision {
	short := ShortID(op.ID, op.ServiceID)
	seen := false
	firstNaming, firstPassing := -1, -1
	for i := range l {
		e := &l[i]
		if e.Connector != op.Connector {
			continue
		}
		seen = true
		if !e.Names(op.ID, short) {
			continue
		}
		if firstNaming < 0 {
			firstNaming = i
		}
		if !passesMode(e, op.Mutation) {
			continue
		}
		if firstPassing < 0 {
			firstPassing = i
		}
		if !op.NeedsConfirm || e.Confirm == ConfirmAllow {
			return l.decision(Allowed, i, "")
		}
	}
	switch {
	case !seen || firstNaming < 0:
		return l.decision(Denied, -1, CodeDenied)
	case firstPassing < 0:
		return l.decision(Denied, firstNaming, CodeDenied)
	default:
		return l.decision(ConfirmationRequired, firstPassing, CodeConfirmationRequired)
	}
}

func (l List) decision(outcome string, index int, code string) Decision {
	d := Decision{Outcome: outcome, Index: index, Code: code}
	if index >= 0 {
		d.Entry = &l[index]
		d.Account = d.Entry.EffectiveAccount()
	}
	return d
}

// Visible reports whether tools/list shows the operation: exactly when
// [List.Decide] allows it (reads under read or write entries, mutations under
// write entries, confirmation-gated operations only under an entry with
// confirm "allow"). A hidden operation can still be called and gets a
// structured refusal.
func (l List) Visible(op Op) bool {
	return l.Decide(op).Outcome == Allowed
}

// Compiled is a grant applied in advance to a fixed operation table: each
// decision is then a slice lookup.
type Compiled struct {
	list      List
	decisions []Decision
}

// Compile decides every operation of table under l once. The result does not
// share memory with l, so later changes to l do not affect it.
func Compile(l List, table []Op) *Compiled {
	c := &Compiled{list: make(List, len(l)), decisions: make([]Decision, len(table))}
	for i, e := range l {
		e.Operations = append([]string(nil), e.Operations...)
		c.list[i] = e
	}
	for i, op := range table {
		d := c.list.Decide(op)
		if d.Entry != nil {
			d.rule = d.Entry.AuditJSON(d.Index)
		} else {
			d.rule = json.RawMessage("null")
		}
		c.decisions[i] = d
	}
	return c
}

// Len is the number of operations in the table.
func (c *Compiled) Len() int { return len(c.decisions) }

// List is the compiled grant's own copy of the list; do not modify it.
func (c *Compiled) List() List { return c.list }

// Decide returns the decision for table[i]. An index outside the table is
// denied with no rule.
func (c *Compiled) Decide(i int) Decision {
	if i < 0 || i >= len(c.decisions) {
		return Decision{Outcome: Denied, Index: -1, Code: CodeDenied, rule: json.RawMessage("null")}
	}
	return c.decisions[i]
}

// Visible reports whether tools/list shows table[i] (see [List.Visible]).
func (c *Compiled) Visible(i int) bool {
	return i >= 0 && i < len(c.decisions) && c.decisions[i].Outcome == Allowed
}
