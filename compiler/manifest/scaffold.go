package manifest

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// ScaffoldOptions configures Scaffold.
type ScaffoldOptions struct {
	// SchemaRef is what the `# yaml-language-server: $schema=` line names:
	// a path or URL of the manifest JSON Schema.
	SchemaRef string
	// SpecName names the description in the header comment (a base name,
	// so the output holds no machine-specific path).
	SpecName string
	// Auth, when set, is written as the top-level auth: block instead of
	// the document's service auth, with AuthNote explaining why.
	Auth     *air.Auth
	AuthNote string
}

// anyOperationNeedsAuth reports whether some operation of doc runs with a
// credential.
func anyOperationNeedsAuth(doc *air.Document) bool {
	for i := range doc.Operations {
		a := doc.Service.Auth
		if op := &doc.Operations[i]; op.Auth != nil {
			a = *op.Auth
		}
		if a.Type != "" && a.Type != air.AuthNone {
			return true
		}
	}
	return false
}

// Scaffold writes a starting anvil.yaml for doc, an AIR document compiled
// without a manifest: the service, its auth as inferred, and every
// operation as a key under operations: (its operationId where that names
// only it, else its AIR id), grouped by resource in the order the
// description lists them, with state: review_required and the method,
// path, summary and inferred side effect, risk, idempotency and
// confirmation as comments. It decodes cleanly, validates against the
// manifest schema, and compiling it with doc's description adds no
// diagnostic: everything it sets restates an inference. The output is a
// function of doc and opts alone.
func Scaffold(doc *air.Document, opts ScaffoldOptions) []byte {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if opts.SchemaRef != "" {
		line("# yaml-language-server: $schema=%s", oneLine(opts.SchemaRef, 300))
	}
	from := ""
	if opts.SpecName != "" {
		from = " from " + oneLine(opts.SpecName, 120)
	}
	line("# Starting manifest for %s, written by `anvil init`%s.", oneLine(firstNonBlank(doc.Service.DisplayName, doc.Service.ID), 120), from)
	line("# Every key is explained in docs/manifest.md. Each operation below is review_required, so the")
	line("# gateway serves none of them until approved: set `state: approved` here, or compile and run")
	line("# `anvil approve <bundle> '<glob>'` (for example '%s.*' or --all-reads).", firstResource(doc))
	line("# The comments show what Anvil infers; write a key to change it.")
	line("version: 1")
	line("")
	line("service:")
	line("  name: %s", yamlString(doc.Service.ID))
	if doc.Service.DisplayName != "" {
		line("  display_name: %s", yamlString(doc.Service.DisplayName))
	}
	if d := oneLine(doc.Service.Description, 200); d != "" {
		line("  # Agents read the spec's description unless you replace it here (SKILL.md, INDEX.md):")
		line("  # description: %s", d)
	} else {
		line("  # description: what agents should know about this service (SKILL.md, INDEX.md)")
	}
	line("")
	line("# Auth the description declares, per scheme (docs/manifest.md, \"auth\"):")
	for _, l := range AuthSummary(doc) {
		line("#   %s", l)
	}
	line("")
	top, wroteTop := writeAuth(&b, doc, opts)
	line("")
	line("operations:")
	keys := scaffoldKeys(doc)
	var groups []string
	byGroup := map[string][]int{}
	for i := range doc.Operations {
		g := resourceOf(doc.Service.ID, doc.Operations[i].ID)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], i)
	}
	for gi, g := range groups {
		if gi > 0 {
			line("")
		}
		line("  # --- %s ---", g)
		for _, i := range byGroup[g] {
			op := &doc.Operations[i]
			head := op.SourceRef.Method + " " + oneLine(op.SourceRef.Path, 200)
			if s := oneLine(op.DisplayName, 120); s != "" {
				head += " — " + s
			}
			line("  # %s", head)
			line("  #   inferred: %s", inferred(op))
			line("  %s:", yamlKey(keys[i]))
			line("    state: review_required")
			if a := ownAuth(op); wroteTop && a != nil && !reflect.DeepEqual(*a, top) {
				line("    # the description's own scheme %s for this operation", strconv.Quote(oneLine(a.Scheme, 60)))
				line("    auth:")
				writeAuthBody(&b, *a, "      ")
			}
		}
	}
	return []byte(b.String())
}

// writeAuth writes the top-level auth: block, or a comment when the auth
// cannot (or need not) be written as one. It reports whether it wrote a
// block, and which auth it stands for.
func writeAuth(b *strings.Builder, doc *air.Document, opts ScaffoldOptions) (air.Auth, bool) {
	a := doc.Service.Auth
	if opts.Auth != nil {
		a = *opts.Auth
	}
	if opts.AuthNote != "" {
		for _, l := range wrap(opts.AuthNote, 96) {
			fmt.Fprintf(b, "# %s\n", l)
		}
	}
	switch {
	case (a.Type == "" || a.Type == air.AuthNone) && anyOperationNeedsAuth(doc):
		b.WriteString("# auth: the description sets no scheme for the whole service; each operation keeps its own (above).\n# An auth: block here would cover every operation that does not set its own auth:.\n")
		return a, false
	case a.Type == "" || a.Type == air.AuthNone:
		b.WriteString("# auth: the description requires no credential for any operation; add an auth: block if the API\n# takes one (it then covers every operation without its own auth:).\n")
		return a, false
	case !slices.Contains(authTypes, a.Type):
		fmt.Fprintf(b, "# auth: the description's %s scheme applies as it is (a %s credential); an auth: block here\n# would replace it for every operation without its own.\n", oneLine(a.Scheme, 60), a.Type)
		return a, false
	}
	if opts.Auth == nil {
		b.WriteString("# Inferred from the description; covers every operation that does not set its own auth:.\n")
	} else {
		b.WriteString("# Covers every operation that does not set its own auth:.\n")
	}
	b.WriteString("auth:\n")
	writeAuthBody(b, a, "  ")
	return a, true
}

// writeAuthBody writes the keys of an auth block at indent.
func writeAuthBody(b *strings.Builder, a air.Auth, indent string) {
	field := func(ind, key, value string) {
		if value != "" {
			fmt.Fprintf(b, "%s%s: %s\n", ind, key, yamlString(value))
		}
	}
	field(indent, "type", string(a.Type))
	if c := a.Carrier; c != nil && (c.In != "" || c.Name != "") {
		fmt.Fprintf(b, "%scarrier:\n", indent)
		field(indent+"  ", "in", string(c.In))
		field(indent+"  ", "name", c.Name)
		field(indent+"  ", "scheme", c.Scheme)
	}
	if len(a.Scopes) > 0 {
		fmt.Fprintf(b, "%sscopes:\n", indent)
		for _, s := range a.Scopes {
			fmt.Fprintf(b, "%s  - %s\n", indent, yamlString(s))
		}
	}
	if p := a.Provider; p != nil && (p.AuthorizationEndpoint != "" || p.TokenEndpoint != "") {
		fmt.Fprintf(b, "%sprovider:\n", indent)
		field(indent+"  ", "authorization_endpoint", p.AuthorizationEndpoint)
		field(indent+"  ", "token_endpoint", p.TokenEndpoint)
	}
}

// ownAuth is the auth: block an operation's entry restates when the
// scaffold writes a top-level block: an operation whose description names
// another scheme keeps it (a top-level block would otherwise cover it). A
// public operation stays public without one, and one whose scheme the
// gateway cannot run (an OAuth2 implicit or password flow) takes the
// top-level block. nil: nothing to restate.
func ownAuth(op *air.Operation) *air.Auth {
	a := op.Auth
	if a == nil || a.Type == air.AuthNone || !slices.Contains(authTypes, a.Type) {
		return nil
	}
	if a.Provider != nil && a.Provider.Grant.GatewayCannotRun() {
		return nil
	}
	return a
}

// scaffoldKeys picks each operation's manifest key: its operationId when
// no other operation answers to that name (as an operationId, canonical
// name or AIR id), else its AIR id.
func scaffoldKeys(doc *air.Document) []string {
	owners := map[string]map[int]bool{}
	add := func(k string, i int) {
		if k == "" {
			return
		}
		if owners[k] == nil {
			owners[k] = map[int]bool{}
		}
		owners[k][i] = true
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		add(op.SourceRef.OperationID, i)
		add(op.CanonicalName, i)
		add(op.ID, i)
	}
	keys := make([]string, len(doc.Operations))
	for i := range doc.Operations {
		op := &doc.Operations[i]
		keys[i] = op.ID
		if id := op.SourceRef.OperationID; id != "" && len(owners[id]) == 1 {
			keys[i] = id
		}
	}
	return keys
}

// inferred describes what Anvil infers for op in one line.
func inferred(op *air.Operation) string {
	parts := []string{string(op.Effect.Kind), "risk " + string(op.Effect.Risk)}
	if op.Effect.Kind == air.KindMutation {
		if op.Effect.Reversible {
			parts = append(parts, "reversible")
		} else {
			parts = append(parts, "not reversible")
		}
	}
	parts = append(parts, "idempotency "+string(op.Idempotency.Mode))
	switch {
	case op.Confirmation.Required && op.Confirmation.Reason != "":
		parts = append(parts, "confirmation required ("+oneLine(op.Confirmation.Reason, 100)+")")
	case op.Confirmation.Required:
		parts = append(parts, "confirmation required")
	default:
		parts = append(parts, "no confirmation")
	}
	return strings.Join(parts, ", ")
}

// resourceOf is the resource part of an AIR id (<service>.<resource>.<action>).
func resourceOf(service, id string) string {
	rest := strings.TrimPrefix(id, service+".")
	if i := strings.IndexByte(rest, '.'); i > 0 {
		return rest[:i]
	}
	return rest
}

func firstResource(doc *air.Document) string {
	if len(doc.Operations) == 0 {
		return "resource"
	}
	return resourceOf(doc.Service.ID, doc.Operations[0].ID)
}

func firstNonBlank(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// oneLine folds s to one line of printable text of at most n runes, for a
// comment.
func oneLine(s string, n int) string {
	var b strings.Builder
	space := false
	count := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == ' ' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		if count >= n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// wrap splits s into lines of at most width bytes at spaces.
func wrap(s string, width int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(oneLine(s, 2000)) {
		if cur != "" && len(cur)+1+len(w) > width {
			out = append(out, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

var (
	plainKey   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	plainValue = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./: -]*[A-Za-z0-9_/]$|^[A-Za-z_]$`)
	yamlWords  = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true}
)

// yamlKey writes s as a mapping key: plain when YAML reads it back as the
// same string, else double-quoted.
func yamlKey(s string) string {
	if plainKey.MatchString(s) && !yamlWords[strings.ToLower(s)] {
		return s
	}
	return strconv.Quote(s)
}

// yamlString writes s as a scalar value: plain when YAML reads it back as
// the same string, else double-quoted (a JSON string is a YAML one).
func yamlString(s string) string {
	if plainValue.MatchString(s) && !yamlWords[strings.ToLower(s)] && !strings.Contains(s, ": ") && !strings.Contains(s, " #") {
		return s
	}
	return strconv.Quote(s)
}

// maxNamed bounds how many operations one line of the auth summary names.
const maxNamed = 8

// AuthSummary describes the auth doc's operations run with, one line per
// scheme in the order operations first use it: what the scheme is (an API
// key and where it goes, an OAuth flow and its scopes, …) and which
// operations need it (all of them, or up to maxNamed by manifest key and a
// count). Operations that need no credential get a line of their own.
// anvil init prints it and writes it into the starting manifest.
func AuthSummary(doc *air.Document) []string {
	keys := scaffoldKeys(doc)
	type group struct {
		auth air.Auth
		ops  []string
	}
	var order []string
	groups := map[string]*group{}
	for i := range doc.Operations {
		a := doc.Service.Auth
		if op := &doc.Operations[i]; op.Auth != nil {
			a = *op.Auth
		}
		k := a.Scheme
		if a.Type == "" || a.Type == air.AuthNone {
			k = "\x00none"
		}
		g := groups[k]
		if g == nil {
			g = &group{auth: a}
			groups[k] = g
			order = append(order, k)
		}
		g.ops = append(g.ops, keys[i])
		for _, s := range a.Scopes { // an operation's requirement may add scopes
			if !slices.Contains(g.auth.Scopes, s) {
				g.auth.Scopes = append(g.auth.Scopes, s)
			}
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		who := fmt.Sprintf("needed by %s", namedOps(g.ops))
		if len(g.ops) == len(doc.Operations) {
			who = fmt.Sprintf("needed by every operation (%d)", len(g.ops))
		}
		if k == "\x00none" {
			out = append(out, "no credential: "+strings.TrimPrefix(who, "needed by "))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s; %s", oneLine(firstNonBlank(g.auth.Scheme, string(g.auth.Type)), 60), describeAuth(g.auth), who))
	}
	return out
}

// namedOps names up to maxNamed operations and counts the rest.
func namedOps(ops []string) string {
	if len(ops) <= maxNamed {
		return strings.Join(ops, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ops[:maxNamed], ", "), len(ops)-maxNamed)
}

// describeAuth says in a few words what a scheme asks of a caller.
func describeAuth(a air.Auth) string {
	scopes := ""
	if len(a.Scopes) > 0 {
		scopes = " (scopes " + oneLine(strings.Join(a.Scopes, " "), 160) + ")"
	}
	switch a.Type {
	case air.AuthAPIKey:
		if c := a.Carrier; c != nil && c.Name != "" {
			return fmt.Sprintf("an API key in %s %s", firstNonBlank(string(c.In), string(air.InHeader)), oneLine(c.Name, 60))
		}
		return "an API key"
	case air.AuthBasic:
		return "HTTP basic credentials"
	case air.AuthBearer:
		return "a bearer token"
	case air.AuthOAuth2AuthorizationCode, air.AuthOAuth2:
		if p := a.Provider; p != nil && p.Grant.GatewayCannotRun() {
			return fmt.Sprintf("OAuth2 %s flow%s, which the gateway cannot run", p.Grant, scopes)
		}
		return "OAuth2 authorization code: a person signs in" + scopes
	case air.AuthOAuth2ClientCredentials:
		return "OAuth2 client credentials" + scopes
	case air.AuthOAuth2OnBehalfOf:
		return "OAuth2 on behalf of the caller" + scopes
	case air.AuthMTLS:
		return "a client certificate (mTLS), which the gateway cannot supply"
	}
	return oneLine(string(a.Type), 60) + scopes
}
