package lower

import (
	"net/http"
	"strings"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Risk levels.
const ()

// effectActions is the AIR action enum.
var effectActions = set("list", "get", "search", "export", "simulate", "validate", "poll",
	"create", "update", "replace", "delete", "send", "execute", "approve", "cancel", "reserve", "other")

// actionWords maps the first word of a naming action that is not itself in
// the enum (post_message, remove, …) to an enum value.
var actionWords = map[string]string{
	"add": "create", "new": "create", "insert": "create", "open": "create", "make": "create",
	"set": "update", "edit": "update", "modify": "update", "change": "update", "patch": "update", "rename": "update",
	"remove": "delete", "destroy": "delete", "purge": "delete", "erase": "delete",
	"post": "send", "publish": "send", "notify": "send", "send": "send",
	"run": "execute", "execute": "execute", "trigger": "execute", "invoke": "execute", "dispatch": "execute", "start": "execute",
	"find": "search", "query": "search", "lookup": "search",
	"fetch": "get", "read": "get", "retrieve": "get", "describe": "get", "show": "get",
	"download": "export", "check": "validate", "verify": "validate", "test": "validate",
	"preview": "simulate", "estimate": "simulate",
	"accept": "approve", "abort": "cancel", "stop": "cancel", "revoke": "cancel",
	"hold": "reserve", "book": "reserve",
}

// isReadMethod reports whether an HTTP method is a read by default.
func isReadMethod(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// effectAction maps a naming action onto the AIR action enum.
func effectAction(action, method string) string {
	if effectActions[action] {
		return action
	}
	if action == "upsert" {
		if method == "PUT" {
			return "replace"
		}
		return "update"
	}
	if w := strings.SplitN(action, "_", 2)[0]; w != "" {
		if effectActions[w] {
			return w
		}
		if a, ok := actionWords[w]; ok {
			return a
		}
	}
	return "other"
}

// defaultEffect is the effect of an operation before the manifest: GET, HEAD,
// OPTIONS and TRACE are reads with risk none; every other method is a
// mutation with risk low, except a delete action (DELETE, or a POST whose
// operationId starts with a delete verb), which has risk destructive and is
// not reversible.
func defaultEffect(method, action, resource string) air.Effect {
	e := air.Effect{Action: effectAction(action, method), Resource: resource, Reversible: true}
	if isReadMethod(method) {
		e.Kind, e.Risk = air.KindRead, air.RiskNone
		return e
	}
	e.Kind, e.Risk = air.KindMutation, air.RiskLow
	if e.Action == "delete" {
		e.Risk, e.Reversible = air.RiskDestructive, false
	}
	return e
}

// idempotencyHeader returns the spec's Idempotency-Key-style header
// parameter: a header whose name, lowercased with everything but letters and
// digits removed, contains "idempotencykey".
func idempotencyHeader(op *openapi.Operation) *openapi.Param {
	for _, p := range op.Params {
		if p != nil && p.In == "header" && isIdempotencyHeaderName(p.Name) {
			return p
		}
	}
	return nil
}

func isIdempotencyHeaderName(name string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return strings.Contains(b.String(), "idempotencykey")
}

// defaultIdempotency is the idempotency of an operation the manifest says
// nothing about: reads, PUT and DELETE are natural; any other mutation is
// none, unless the spec declares an Idempotency-Key-style header, which makes
// it key_supported through that header with a request fingerprint key.
func defaultIdempotency(kind air.EffectKind, method string, op *openapi.Operation) air.Idempotency {
	natural := air.Idempotency{Mode: air.IdemNatural, Mechanism: air.MechanismNone, KeyDerivation: air.DeriveNone}
	if kind == air.KindRead {
		return natural
	}
	if h := idempotencyHeader(op); h != nil {
		return air.Idempotency{Mode: air.IdemKeySupported, Mechanism: air.MechanismHeader, Key: h.Name, KeyDerivation: air.DeriveRequestFingerprint}
	}
	switch method {
	case http.MethodPut, http.MethodDelete:
		return natural
	}
	return air.Idempotency{Mode: air.IdemNone, Mechanism: air.MechanismNone, KeyDerivation: air.DeriveNone}
}

// strategyMode maps a manifest strategy to an AIR mode and key derivation.
func strategyMode(strategy string) (mode air.IdempotencyMode, derivation air.KeyDerivation, ok bool) {
	switch strategy {
	case manifest.StrategyNatural:
		return air.IdemNatural, air.DeriveNone, true
	case manifest.StrategyRequiredRequestKey:
		return air.IdemRequired, air.DeriveClientSupplied, true
	case manifest.StrategyKeySupported:
		return air.IdemKeySupported, air.DeriveRequestFingerprint, true
	case manifest.StrategyClientID:
		return air.IdemClientID, air.DeriveNone, true
	case manifest.StrategyNone:
		return air.IdemNone, air.DeriveNone, true
	}
	return "", "", false
}

// manifestIdempotency applies an idempotency block. The carrier comes from
// key_location and the header, parameter or field named for it; a keyed
// strategy (key_supported, required_request_key) without key_location uses
// the spec's Idempotency-Key-style header when it declares one. natural and
// none never carry a key.
func manifestIdempotency(m *manifest.Idempotency, cur air.Idempotency, op *openapi.Operation) air.Idempotency {
	mode, deriv, ok := strategyMode(m.Strategy)
	if !ok {
		return cur
	}
	out := air.Idempotency{Mode: mode, Mechanism: air.MechanismNone, KeyDerivation: deriv}
	if mode == air.IdemNatural || mode == air.IdemNone {
		return out
	}
	loc := m.KeyLocation
	var key string
	switch loc {
	case air.MechanismHeader:
		key = firstNonEmpty(m.Header, m.Parameter, m.Field)
	case air.MechanismQuery, air.MechanismPath:
		key = firstNonEmpty(m.Parameter, m.Header, m.Field)
	case air.MechanismBody:
		key = firstNonEmpty(m.Field, m.Parameter, m.Header)
	case "":
		if mode == air.IdemKeySupported || mode == air.IdemRequired {
			if h := idempotencyHeader(op); h != nil {
				loc, key = air.MechanismHeader, h.Name
			} else if m.Header != "" {
				loc, key = air.MechanismHeader, m.Header
			}
		}
	}
	if loc != "" && key != "" {
		out.Mechanism, out.Key = loc, key
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Retry defaults.
const (
	retryMaxAttempts = 3
	retryBaseDelayMs = 250
	retryMaxDelayMs  = 5000
	retryCapAttempts = 5
	retryCapDelayMs  = 20000
)

var defaultRetryOn = []string{"timeout", "connection_reset", "dns_failure", "429", "502", "503", "504"}

// retrySafe reports whether repeating a call is safe: its mode is natural, or
// key_supported or required with a carrier that sends the key upstream.
func retrySafe(i air.Idempotency) bool {
	switch i.Mode {
	case air.IdemNatural:
		return true
	case air.IdemKeySupported, air.IdemRequired:
		return i.HasCarrier()
	}
	return false
}

// computeRetries derives the retry policy from the idempotency.
func computeRetries(i air.Idempotency) air.Retries {
	if !retrySafe(i) {
		return air.Retries{Mode: air.RetryNone, Basis: air.RetryBasisNotIdempotent, MaxAttempts: 1, Backoff: air.BackoffNone, RetryOn: []string{}}
	}
	basis := air.RetryBasisNatural
	if i.Mode != air.IdemNatural {
		basis = air.RetryBasisIdempotencyKey
	}
	return air.Retries{Mode: air.RetrySafe, Basis: basis, MaxAttempts: retryMaxAttempts, Backoff: air.BackoffExponential,
		BaseDelayMs: retryBaseDelayMs, MaxDelayMs: retryMaxDelayMs, RetryOn: append([]string(nil), defaultRetryOn...)}
}

// manifestRetries applies a retries block: enabled false turns retries off;
// enabled true (or only_on / max_attempts without enabled) turns them on with
// basis "manifest" when they were off; only_on replaces retryOn; max_attempts
// (capped at 5) replaces maxAttempts.
func manifestRetries(m *manifest.Retries, r air.Retries) air.Retries {
	enable := m.Enabled == nil || *m.Enabled
	if !enable {
		return air.Retries{Mode: air.RetryNone, Basis: air.RetryBasisManifest, MaxAttempts: 1, Backoff: air.BackoffNone, RetryOn: []string{}}
	}
	if r.Mode != air.RetrySafe {
		r = air.Retries{Mode: air.RetrySafe, Basis: air.RetryBasisManifest, MaxAttempts: retryMaxAttempts, Backoff: air.BackoffExponential,
			BaseDelayMs: retryBaseDelayMs, MaxDelayMs: retryMaxDelayMs, RetryOn: append([]string(nil), defaultRetryOn...)}
	}
	if len(m.OnlyOn) > 0 {
		r.RetryOn = append([]string(nil), m.OnlyOn...)
	}
	if m.MaxAttempts > 0 {
		r.MaxAttempts = m.MaxAttempts
	}
	if r.MaxAttempts > retryCapAttempts {
		r.MaxAttempts = retryCapAttempts
	}
	if r.MaxDelayMs > retryCapDelayMs {
		r.MaxDelayMs = retryCapDelayMs
	}
	return r
}

// classifyConfirmation reports whether a call needs confirmation, and why: a
// mutation whose risk is financial, destructive or high, that is not
// reversible, or whose idempotency mode is none.
func classifyConfirmation(e air.Effect, i air.Idempotency) (bool, string) {
	if e.Kind != air.KindMutation {
		return false, ""
	}
	switch {
	case e.Risk == air.RiskFinancial || e.Risk == air.RiskDestructive || e.Risk == air.RiskHigh:
		return true, "This operation's risk is " + string(e.Risk) + "."
	case !e.Reversible:
		return true, "This operation cannot be reversed."
	case i.Mode == air.IdemNone:
		return true, "Repeating this operation is not safe: it has no idempotency."
	}
	return false, ""
}

// computeConfirmation is classifyConfirmation as an AIR block.
func computeConfirmation(e air.Effect, i air.Idempotency) air.Confirmation {
	req, reason := classifyConfirmation(e, i)
	if !req {
		return air.Confirmation{}
	}
	return air.Confirmation{Required: true, Risk: e.Risk, Reason: reason}
}

// manifestConfirmation applies a confirmation block over the computed one.
func manifestConfirmation(m *manifest.Confirmation, c air.Confirmation) air.Confirmation {
	if m.Required != nil {
		if *m.Required != c.Required {
			c.Reason = ""
			if !*m.Required {
				c.Risk = ""
			}
		}
		c.Required = *m.Required
	}
	if m.Risk != "" {
		c.Risk = m.Risk
	}
	if m.Reason != "" {
		c.Reason = m.Reason
	}
	if m.HumanApproval != nil {
		c.HumanApproval = *m.HumanApproval
		if *m.HumanApproval {
			c.Required = true
		}
	}
	return c
}

// Human approval policies (Options.HumanApproval).
const (
	HumanApprovalNone   = "none"
	HumanApprovalUnsafe = "unsafe"
	HumanApprovalAll    = "all"
)
