package manifest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"go.yaml.in/yaml/v3"
)

// Keys of each mapping in the grammar, in the order the reference lists them
// (the order used when an unknown key lists the valid ones).
var (
	topKeys          = []string{"version", "service", "auth", "path_grammar", "operations", "workflows", "capabilities", "query_templates"}
	serviceKeys      = []string{"name", "display_name", "description", "owner", "environment"}
	authKeys         = []string{"type", "credential_profile", "principal", "issuer", "audience", "carrier", "secret_source", "tenant", "actor", "subject", "tls", "provider", "scopes"}
	carrierKeys      = []string{"in", "name", "scheme"}
	tlsKeys          = []string{"client_cert_ref", "client_key_ref", "ca_ref"}
	providerKeys     = []string{"token_endpoint", "grant", "client_auth", "resource", "subject_token_type", "requested_token_type", "api_key", "authorization_endpoint", "pkce", "redirect_uri"}
	operationKeys    = []string{"side_effect", "risk", "reversible", "display_name", "description", "intent_examples", "action", "name", "idempotency", "confirmation", "retries", "auth", "pagination", "query_policy", "query_schema", "async_contract", "stream", "state", "reviewed_by", "review_reason", "effect", "needs"}
	nameKeys         = []string{"resource", "verb"}
	idempotencyKeys  = []string{"strategy", "key_location", "header", "parameter", "field"}
	confirmationKeys = []string{"required", "risk", "reason", "human_approval"}
	retriesKeys      = []string{"enabled", "only_on", "max_attempts"}
	paginationKeys   = []string{"style", "cursor_param", "next_field", "items_field", "page_size_param", "max_page_size", "default_page_size"}
	streamKeys       = []string{"max_events", "max_seconds"}
	effectKeys       = []string{"class", "inverse", "compensate", "lookup", "draft"}
	followUpKeys     = []string{"operation", "arguments", "deadline"}
	deadlineKeys     = []string{"within_ms", "at"}
	lookupKeys       = []string{"operation", "by", "arguments"}
	draftKeys        = []string{"operation", "arguments", "handle", "promote", "discard"}
	callKeys         = []string{"operation", "arguments"}
	workflowKeys     = []string{"description", "steps"}
	capabilityKeys   = []string{"description", "operations"}
)

// Allowed values of the enumerations.
var (
	authTypes = []air.AuthType{
		air.AuthNone, air.AuthAPIKey, air.AuthBasic, air.AuthOAuth2ClientCredentials,
		air.AuthOAuth2AuthorizationCode, air.AuthOAuth2OnBehalfOf, air.AuthJWTBearer, air.AuthMTLS,
		air.AuthCustomHeader, air.AuthWorkloadIdentity,
		air.AuthOAuth2, // legacy; kept as written, the lowering stage interprets it
	}
	carrierIns   = []air.Location{air.InHeader, air.InQuery, air.InCookie}
	pathGrammars = []string{"resource_grammar", "rpc_plain", "rpc_dotted", "adapter_lowered"}
	sideEffects  = []air.EffectKind{air.KindRead, air.KindMutation}
	risks        = []air.Risk{air.RiskNone, air.RiskLow, air.RiskMedium, air.RiskHigh, air.RiskFinancial, air.RiskDestructive}
	actions      = []string{"list", "get", "search", "export", "simulate", "validate", "poll", "create", "update", "replace", "delete", "send", "execute", "approve", "cancel", "reserve", "other"}
	states       = []air.OperationState{air.StateGenerated, air.StateReviewRequired, air.StateApproved, air.StateDeprecated, air.StateBlocked}
	strategies   = []string{StrategyNatural, StrategyRequiredRequestKey, StrategyKeySupported, StrategyClientID, StrategyNone}
	keyLocations = []air.KeyMechanism{air.MechanismHeader, air.MechanismQuery, air.MechanismBody, air.MechanismPath}
	retryReasons = []string{"timeout", "connection_reset", "dns_failure"}
	pageStyles   = []air.PaginationStyle{air.PageCursor, air.PagePage, air.PageOffset, air.PageLink}
	classes      = []air.EffectClass{air.ClassRead, air.ClassReversible, air.ClassCompensable, air.ClassIrreversible}
	lookupBys    = []air.LookupBy{air.LookupByIdempotencyKey, air.LookupByID}
)

// Bounds of the numeric settings.
const (
	maxAttemptsLimit = 5
	maxEventsLimit   = 10000
	maxSecondsLimit  = 300
)

// manifest decodes the top level.
func (d *decoder) manifest(root *yaml.Node, m *Manifest) {
	d.object(root, "", topKeys, func(p pair) {
		switch p.key {
		case "version":
			m.Version = d.version(p.v, p.label)
		case "service":
			m.Service = d.service(p)
		case "auth":
			m.Auth = d.auth(p)
		case "path_grammar":
			m.PathGrammar, _ = d.enum(p.v, p.label, pathGrammars)
			m.PathGrammarPos = d.pos(p.v)
		case "operations":
			m.Operations = d.operations(p)
		case "workflows":
			m.Workflows = d.workflows(p)
		case "capabilities":
			m.Capabilities = d.capabilities(p)
		case "query_templates":
			m.QueryTemplates = d.jsonValue(p.v, p.label, false)
		}
	})
}

func (d *decoder) service(at pair) *Service {
	s := &Service{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, serviceKeys, func(p pair) {
		switch p.key {
		case "name":
			s.Name, _ = d.str(p.v, p.label)
		case "display_name":
			s.DisplayName, _ = d.str(p.v, p.label)
		case "description":
			s.Description, _ = d.str(p.v, p.label)
		case "owner":
			s.Owner, _ = d.str(p.v, p.label)
		case "environment":
			s.Environment, _ = d.str(p.v, p.label)
		}
	}) {
		return nil
	}
	return s
}

// auth decodes an auth block. Values in it are not repeated in messages, as
// some of them may be credentials written in the wrong place.
func (d *decoder) auth(at pair) *Auth {
	saved := d.redact
	d.redact = true
	defer func() { d.redact = saved }()
	a := &Auth{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, authKeys, func(p pair) {
		switch p.key {
		case "type":
			d.redact = false
			a.Type, _ = enumOf(d, p.v, p.label, authTypes)
			d.redact = true
			a.TypePos = d.pos(p.v)
		case "credential_profile":
			a.CredentialProfile, _ = d.str(p.v, p.label)
		case "principal":
			a.Principal, _ = d.str(p.v, p.label)
		case "issuer":
			a.Issuer, _ = d.str(p.v, p.label)
		case "audience":
			a.Audience, _ = d.str(p.v, p.label)
		case "carrier":
			c := &Carrier{}
			if d.object(p.v, p.label, carrierKeys, func(q pair) {
				switch q.key {
				case "in":
					d.redact = false
					c.In, _ = enumOf(d, q.v, q.label, carrierIns)
					d.redact = true
				case "name":
					c.Name, _ = d.str(q.v, q.label)
				case "scheme":
					c.Scheme, _ = d.str(q.v, q.label)
				}
			}) {
				a.Carrier = c
			}
		case "secret_source":
			a.SecretSource, _ = d.str(p.v, p.label)
		case "tenant":
			a.Tenant, _ = d.str(p.v, p.label)
		case "actor":
			a.Actor, _ = d.str(p.v, p.label)
		case "subject":
			a.Subject, _ = d.str(p.v, p.label)
		case "tls":
			t := &TLS{}
			if d.object(p.v, p.label, tlsKeys, func(q pair) {
				switch q.key {
				case "client_cert_ref":
					t.ClientCertRef, _ = d.str(q.v, q.label)
				case "client_key_ref":
					t.ClientKeyRef, _ = d.str(q.v, q.label)
				case "ca_ref":
					t.CARef, _ = d.str(q.v, q.label)
				}
			}) {
				a.TLS = t
			}
		case "provider":
			a.Provider = d.provider(p)
		case "scopes":
			a.Scopes, _ = d.strList(p.v, p.label)
		}
	}) {
		return nil
	}
	return a
}

func (d *decoder) provider(at pair) *Provider {
	pr := &Provider{}
	if !d.object(at.v, at.label, providerKeys, func(p pair) {
		switch p.key {
		case "token_endpoint":
			pr.TokenEndpoint, _ = d.str(p.v, p.label)
		case "grant":
			pr.Grant, _ = strOf[air.OAuthGrant](d, p.v, p.label)
		case "client_auth":
			pr.ClientAuth, _ = strOf[air.ClientAuthMethod](d, p.v, p.label)
		case "resource":
			pr.Resource, _ = d.str(p.v, p.label)
		case "subject_token_type":
			pr.SubjectTokenType, _ = d.str(p.v, p.label)
		case "requested_token_type":
			pr.RequestedTokenType, _ = d.str(p.v, p.label)
		case "api_key":
			pr.APIKey, _ = d.str(p.v, p.label)
		case "authorization_endpoint":
			pr.AuthorizationEndpoint, _ = d.str(p.v, p.label)
		case "pkce":
			pr.PKCE = d.boolean(p.v, p.label)
		case "redirect_uri":
			pr.RedirectURI, _ = d.str(p.v, p.label)
		}
	}) {
		return nil
	}
	return pr
}

// operations decodes operations: in the order written. Whether a key names
// a real operation is decided by the lowering stage.
func (d *decoder) operations(at pair) []*OperationEntry {
	var out []*OperationEntry
	r := d.resolve(at.v)
	if r == nil || isNull(r) {
		return nil
	}
	if r.Kind != yaml.MappingNode {
		d.typeError(at.v, r, at.label, "a mapping of operation keys")
		return nil
	}
	if !d.enter(r, at.v) {
		return nil
	}
	defer d.leave(r, at.v)
	out = []*OperationEntry{}
	for _, p := range d.pairs(r, at.label) {
		if d.aborted {
			break
		}
		e := &OperationEntry{Key: p.key, KeyPos: d.pos(p.k), Op: d.operation(p)}
		out = append(out, e)
	}
	return out
}

func (d *decoder) operation(at pair) *Operation {
	op := &Operation{Pos: d.pos(at.k)}
	d.object(at.v, at.label, operationKeys, func(p pair) {
		switch p.key {
		case "side_effect":
			op.SideEffect, _ = enumOf(d, p.v, p.label, sideEffects)
			op.SideEffectPos = d.pos(p.v)
		case "risk":
			op.Risk, _ = enumOf(d, p.v, p.label, risks)
			op.RiskPos = d.pos(p.v)
		case "reversible":
			op.Reversible = d.boolean(p.v, p.label)
			op.ReversiblePos = d.pos(p.v)
		case "display_name":
			op.DisplayName, _ = d.str(p.v, p.label)
		case "description":
			op.Description, _ = d.str(p.v, p.label)
		case "intent_examples":
			op.IntentExamples, _ = d.strList(p.v, p.label)
		case "action":
			op.Action, _ = d.enum(p.v, p.label, actions)
			op.ActionPos = d.pos(p.v)
		case "name":
			n := &Name{Pos: d.pos(p.k)}
			if d.object(p.v, p.label, nameKeys, func(q pair) {
				switch q.key {
				case "resource":
					n.Resource, _ = d.str(q.v, q.label)
				case "verb":
					n.Verb, _ = d.str(q.v, q.label)
				}
			}) {
				op.Name = n
			}
		case "idempotency":
			op.Idempotency = d.idempotency(p)
		case "confirmation":
			op.Confirmation = d.confirmation(p)
		case "retries":
			op.Retries = d.retries(p)
		case "auth":
			op.Auth = d.auth(p)
		case "pagination":
			op.Pagination = d.pagination(p)
		case "query_policy":
			op.QueryPolicy = d.jsonValue(p.v, p.label, false)
		case "query_schema":
			op.QuerySchema = d.jsonValue(p.v, p.label, false)
		case "async_contract":
			op.AsyncContract = d.jsonValue(p.v, p.label, false)
		case "stream":
			op.Stream = d.stream(p)
		case "state":
			op.State, _ = enumOf(d, p.v, p.label, states)
			op.StatePos = d.pos(p.v)
		case "reviewed_by":
			op.ReviewedBy, _ = d.str(p.v, p.label)
		case "review_reason":
			op.ReviewReason, _ = d.str(p.v, p.label)
		case "effect":
			op.Effect = d.effect(p)
		case "needs":
			op.Needs = d.needs(p)
		}
	})
	return op
}

// needs decodes needs: {<argument>: [<operation>, ...]}: per identifier
// input, the operations whose answers produce it (an empty list: none).
func (d *decoder) needs(at pair) []*Need {
	r := d.resolve(at.v)
	if r == nil || isNull(r) {
		return nil
	}
	if r.Kind != yaml.MappingNode {
		d.typeError(at.v, r, at.label, "a mapping")
		return nil
	}
	if !d.enter(r, at.v) {
		return nil
	}
	defer d.leave(r, at.v)
	out := []*Need{}
	for _, p := range d.pairs(r, at.label) {
		if d.aborted {
			break
		}
		n := &Need{Argument: p.key, Pos: d.pos(p.k)}
		n.From, n.FromPos = d.strList(p.v, p.label)
		if n.From == nil {
			n.From = []string{}
		}
		out = append(out, n)
	}
	return out
}

func (d *decoder) idempotency(at pair) *Idempotency {
	id := &Idempotency{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, idempotencyKeys, func(p pair) {
		switch p.key {
		case "strategy":
			id.Strategy, _ = d.enum(p.v, p.label, strategies)
			id.StrategyPos = d.pos(p.v)
		case "key_location":
			id.KeyLocation, _ = enumOf(d, p.v, p.label, keyLocations)
		case "header":
			id.Header, _ = d.str(p.v, p.label)
		case "parameter":
			id.Parameter, _ = d.str(p.v, p.label)
		case "field":
			id.Field, _ = d.str(p.v, p.label)
		}
	}) {
		return nil
	}
	return id
}

func (d *decoder) confirmation(at pair) *Confirmation {
	c := &Confirmation{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, confirmationKeys, func(p pair) {
		switch p.key {
		case "required":
			c.Required = d.boolean(p.v, p.label)
		case "risk":
			c.Risk, _ = enumOf(d, p.v, p.label, risks)
		case "reason":
			c.Reason, _ = d.str(p.v, p.label)
		case "human_approval":
			c.HumanApproval = d.boolean(p.v, p.label)
		}
	}) {
		return nil
	}
	return c
}

func (d *decoder) retries(at pair) *Retries {
	r := &Retries{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, retriesKeys, func(p pair) {
		switch p.key {
		case "enabled":
			r.Enabled = d.boolean(p.v, p.label)
		case "only_on":
			ok := d.list(p.v, p.label, func(item *yaml.Node, label string) {
				if s, ok := d.retryReason(item, label); ok {
					r.OnlyOn = append(r.OnlyOn, s)
				}
			})
			if ok && r.OnlyOn == nil {
				r.OnlyOn = []string{}
			}
		case "max_attempts":
			if n, ok := d.integer(p.v, p.label, 1, maxAttemptsLimit); ok {
				r.MaxAttempts = int(n)
			}
		}
	}) {
		return nil
	}
	return r
}

// retryReason decodes one only_on item: a named failure or an HTTP status
// (written as a string or an integer), normalised to a string.
func (d *decoder) retryReason(v *yaml.Node, label string) (string, bool) {
	r := d.resolve(v)
	if r == nil {
		return "", false
	}
	if r.Kind != yaml.ScalarNode || (r.ShortTag() != "!!str" && r.ShortTag() != "!!int") {
		d.typeError(v, r, label, "a string or an HTTP status code")
		return "", false
	}
	s := r.Value
	if slices.Contains(retryReasons, s) || isStatus(s) {
		return s, true
	}
	if r.ShortTag() == "!!int" {
		var n int64
		if err := r.Decode(&n); err == nil && isStatus(strconv.FormatInt(n, 10)) {
			return strconv.FormatInt(n, 10), true
		}
	}
	msg := label + ": " + quote(s) + " is not one of timeout, connection_reset, dns_failure or an HTTP status code (100..599)"
	if sug, ok := Suggest(s, retryReasons); ok {
		msg += "; did you mean " + strconv.Quote(sug) + "?"
	}
	d.errorf(d.pos(v), CodeInvalidValue, "%s", msg)
	return "", false
}

// isStatus reports whether s is a three-digit HTTP status code 100..599.
func isStatus(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s[0] >= '1' && s[0] <= '5'
}

func (d *decoder) pagination(at pair) *Pagination {
	pg := &Pagination{}
	if !d.object(at.v, at.label, paginationKeys, func(p pair) {
		switch p.key {
		case "style":
			pg.Style, _ = enumOf(d, p.v, p.label, pageStyles)
		case "cursor_param":
			pg.CursorParam, _ = d.str(p.v, p.label)
		case "next_field":
			pg.NextField, _ = d.str(p.v, p.label)
		case "items_field":
			pg.ItemsField, _ = d.str(p.v, p.label)
		case "page_size_param":
			pg.PageSizeParam, _ = d.str(p.v, p.label)
		case "max_page_size":
			n, _ := d.integer(p.v, p.label, 1, maxInt32)
			pg.MaxPageSize = int(n)
		case "default_page_size":
			n, _ := d.integer(p.v, p.label, 1, maxInt32)
			pg.DefaultPageSize = int(n)
		}
	}) {
		return nil
	}
	return pg
}

const maxInt32 = 1<<31 - 1

func (d *decoder) stream(at pair) *Stream {
	s := &Stream{}
	if !d.object(at.v, at.label, streamKeys, func(p pair) {
		switch p.key {
		case "max_events":
			n, _ := d.integer(p.v, p.label, 1, maxEventsLimit)
			s.MaxEvents = int(n)
		case "max_seconds":
			n, _ := d.integer(p.v, p.label, 1, maxSecondsLimit)
			s.MaxSeconds = int(n)
		}
	}) {
		return nil
	}
	return s
}

// effect decodes the effect block (docs/manifest.md, "effect"). The class/follow-up consistency checks
// belong to the lowering stage (effect/* codes).
func (d *decoder) effect(at pair) *Effect {
	e := &Effect{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, effectKeys, func(p pair) {
		switch p.key {
		case "class":
			e.Class, _ = enumOf(d, p.v, p.label, classes)
			e.ClassPos = d.pos(p.v)
		case "inverse":
			e.Inverse = d.followUp(p)
		case "compensate":
			e.Compensate = d.followUp(p)
		case "lookup":
			e.Lookup = d.lookup(p)
		case "draft":
			e.Draft = d.draft(p)
		}
	}) {
		return nil
	}
	return e
}

// opRef decodes an operation reference, kept as written.
func (d *decoder) opRef(p pair) (string, bool) {
	r := d.resolve(p.v)
	if r != nil && isNull(r) {
		d.typeError(p.v, r, p.label, "an operation reference")
		return "", false
	}
	return d.str(p.v, p.label)
}

// followUp decodes inverse: or compensate:: a call (below) that may also
// carry a deadline.
func (d *decoder) followUp(at pair) *FollowUp {
	var deadline *Deadline
	c := d.callWith(at, followUpKeys, func(p pair) {
		if p.key == "deadline" {
			deadline = d.deadline(p)
		}
	})
	if c == nil {
		return nil
	}
	return &FollowUp{Operation: c.Operation, OperationPos: c.OperationPos, Arguments: c.Arguments, Deadline: deadline, Pos: c.Pos}
}

// nullBlock reports a follow-up block written with no value: it needs at
// least an operation.
func (d *decoder) nullBlock(at pair) {
	if r := d.resolve(at.v); r != nil && isNull(r) {
		d.required(at.k, at.label, "operation")
	}
}

func (d *decoder) deadline(at pair) *Deadline {
	dl := &Deadline{Pos: d.pos(at.k)}
	if !d.object(at.v, at.label, deadlineKeys, func(p pair) {
		switch p.key {
		case "within_ms":
			if n, ok := d.integer(p.v, p.label, 1, maxInt); ok {
				dl.WithinMs = &n
			}
		case "at":
			dl.At, _ = d.str(p.v, p.label)
			dl.AtPos = d.pos(p.v)
		}
	}) {
		return nil
	}
	return dl
}

func (d *decoder) lookup(at pair) *Lookup {
	l := &Lookup{Pos: d.pos(at.k)}
	var hasOp, hasBy bool
	if !d.object(at.v, at.label, lookupKeys, func(p pair) {
		switch p.key {
		case "operation":
			hasOp = true
			l.Operation, _ = d.opRef(p)
			l.OperationPos = d.pos(p.v)
		case "by":
			hasBy = true
			r := d.resolve(p.v)
			if r != nil && isNull(r) {
				d.typeError(p.v, r, p.label, "a string")
			} else {
				l.By, _ = enumOf(d, p.v, p.label, lookupBys)
			}
			l.ByPos = d.pos(p.v)
		case "arguments":
			l.Arguments = d.arguments(p)
		}
	}) {
		if r := d.resolve(at.v); r != nil && isNull(r) {
			d.required(at.k, at.label, "operation")
			d.required(at.k, at.label, "by")
		}
		return nil
	}
	if !hasOp {
		d.required(at.k, at.label, "operation")
	}
	if !hasBy {
		d.required(at.k, at.label, "by")
	}
	return l
}

func (d *decoder) draft(at pair) *Draft {
	dr := &Draft{Pos: d.pos(at.k)}
	var hasOp, hasHandle, hasPromote bool
	if !d.object(at.v, at.label, draftKeys, func(p pair) {
		switch p.key {
		case "operation":
			hasOp = true
			dr.Operation, _ = d.opRef(p)
			dr.OperationPos = d.pos(p.v)
		case "arguments":
			dr.Arguments = d.arguments(p)
		case "handle":
			hasHandle = true
			r := d.resolve(p.v)
			if r != nil && isNull(r) {
				d.typeError(p.v, r, p.label, "a string")
			} else {
				dr.Handle, _ = d.str(p.v, p.label)
			}
			dr.HandlePos = d.pos(p.v)
		case "promote":
			hasPromote = true
			dr.Promote = d.call(p)
		case "discard":
			dr.Discard = d.call(p)
		}
	}) {
		if r := d.resolve(at.v); r != nil && isNull(r) {
			for _, k := range []string{"operation", "handle", "promote"} {
				d.required(at.k, at.label, k)
			}
		}
		return nil
	}
	if !hasOp {
		d.required(at.k, at.label, "operation")
	}
	if !hasHandle {
		d.required(at.k, at.label, "handle")
	}
	if !hasPromote {
		d.required(at.k, at.label, "promote")
	}
	return dr
}

// call decodes promote: or discard:.
func (d *decoder) call(at pair) *Call { return d.callWith(at, callKeys, nil) }

// callWith decodes a block naming an operation (required) and its
// arguments; keys are the block's allowed keys, and more, when set, gets
// each allowed key other than those two.
func (d *decoder) callWith(at pair, keys []string, more func(pair)) *Call {
	c := &Call{Pos: d.pos(at.k)}
	seen := false
	if !d.object(at.v, at.label, keys, func(p pair) {
		switch p.key {
		case "operation":
			seen = true
			c.Operation, _ = d.opRef(p)
			c.OperationPos = d.pos(p.v)
		case "arguments":
			c.Arguments = d.arguments(p)
		default:
			if more != nil {
				more(p)
			}
		}
	}) {
		d.nullBlock(at)
		return nil
	}
	if !seen {
		d.required(at.k, at.label, "operation")
	}
	return c
}

// arguments decodes an argument mapping in the order written. Each value is
// a path string, kept verbatim (the compiler parses it), or {const: value}.
func (d *decoder) arguments(at pair) Arguments {
	out := Arguments{}
	r := d.resolve(at.v)
	if r == nil || isNull(r) {
		return nil
	}
	if r.Kind != yaml.MappingNode {
		d.typeError(at.v, r, at.label, "a mapping of argument names to sources")
		return nil
	}
	if !d.enter(r, at.v) {
		return nil
	}
	defer d.leave(r, at.v)
	for _, p := range d.pairs(r, at.label) {
		if d.aborted {
			break
		}
		if src, ok := d.argSource(p); ok {
			out = append(out, Argument{Name: p.key, Source: src, Pos: d.pos(p.v), NamePos: d.pos(p.k)})
		}
	}
	return out
}

const argWant = "a path string or {const: value}"

// argSource decodes one argument value.
func (d *decoder) argSource(p pair) (air.ArgSource, bool) {
	r := d.resolve(p.v)
	if r == nil {
		return air.ArgSource{}, false
	}
	switch r.Kind {
	case yaml.ScalarNode:
		switch r.ShortTag() {
		case "!!str":
			return air.ArgSource{Path: r.Value}, true
		case "!!null":
		default:
			d.errorf(d.pos(p.v), CodeType, "%s: expected %s, got %s (write {const: %s} for a literal)",
				p.label, argWant, describe(r), clip(r.Value))
			return air.ArgSource{}, false
		}
	case yaml.MappingNode:
		if !d.enter(r, p.v) {
			return air.ArgSource{}, false
		}
		defer d.leave(r, p.v)
		entries := d.pairs(r, p.label)
		if len(entries) == 1 && entries[0].key == "const" {
			c := d.jsonValue(entries[0].v, entries[0].label, true)
			if c == nil {
				return air.ArgSource{}, false
			}
			return air.ArgSource{Const: c}, true
		}
		got := "an empty mapping"
		switch {
		case len(entries) == 1:
			got = "a mapping with key " + listKeys(entries)
		case len(entries) > 1:
			got = "a mapping with keys " + listKeys(entries)
		}
		d.errorf(d.pos(p.v), CodeType, "%s: expected %s, got %s", p.label, argWant, got)
		return air.ArgSource{}, false
	}
	d.typeError(p.v, r, p.label, argWant)
	return air.ArgSource{}, false
}

// maxListedKeys bounds how many keys of a mapping a message names.
const maxListedKeys = 8

// listKeys names the keys of entries for a message: quoted, comma-separated,
// and at most maxListedKeys of them followed by how many more there are.
func listKeys(entries []pair) string {
	var b strings.Builder
	for i, e := range entries {
		if i == maxListedKeys {
			fmt.Fprintf(&b, " and %d more", len(entries)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(e.key))
	}
	return b.String()
}

func (d *decoder) workflows(at pair) []*Workflow {
	var out []*Workflow
	d.ids(at, func(p pair) {
		w := &Workflow{ID: p.key, Pos: d.pos(p.k)}
		d.object(p.v, p.label, workflowKeys, func(q pair) {
			switch q.key {
			case "description":
				w.Description, _ = d.str(q.v, q.label)
			case "steps":
				w.Steps, w.StepPos = d.strList(q.v, q.label)
			}
		})
		out = append(out, w)
	})
	return out
}

func (d *decoder) capabilities(at pair) []*Capability {
	var out []*Capability
	d.ids(at, func(p pair) {
		c := &Capability{ID: p.key, Pos: d.pos(p.k)}
		d.object(p.v, p.label, capabilityKeys, func(q pair) {
			switch q.key {
			case "description":
				c.Description, _ = d.str(q.v, q.label)
			case "operations":
				c.Operations, c.OperationPos = d.strList(q.v, q.label)
			}
		})
		out = append(out, c)
	})
	return out
}

// ids walks a mapping of ids (workflows, capabilities) in the order written.
func (d *decoder) ids(at pair, fn func(p pair)) {
	r := d.resolve(at.v)
	if r == nil || isNull(r) {
		return
	}
	if r.Kind != yaml.MappingNode {
		d.typeError(at.v, r, at.label, "a mapping of ids")
		return
	}
	if !d.enter(r, at.v) {
		return
	}
	defer d.leave(r, at.v)
	for _, p := range d.pairs(r, at.label) {
		if d.aborted {
			return
		}
		fn(p)
	}
}
