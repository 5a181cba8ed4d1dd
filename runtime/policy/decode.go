package policy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/anvil-dev/anvil/runtime/grant"
)

// Codes of the problems a policy file can have.
const (
	// CodeReadError: the file could not be read, or is larger than
	// MaxFileBytes.
	CodeReadError = "policy/read_error"
	// CodeParseError: not well-formed YAML, more than one document, or an
	// anchor or alias (a policy is written out in full).
	CodeParseError = "policy/parse_error"
	// CodeUnknownKey: a key the block's grammar does not define.
	CodeUnknownKey = "policy/unknown_key"
	// CodeDuplicateKey: the same key twice in one mapping.
	CodeDuplicateKey = "policy/duplicate_key"
	// CodeType: a value of the wrong YAML type.
	CodeType = "policy/type"
	// CodeInvalidValue: a value of the right type that is not allowed.
	CodeInvalidValue = "policy/invalid_value"
	// CodeMissingKey: a block lacks a key it requires.
	CodeMissingKey = "policy/missing_key"
)

// ErrInvalid matches every *Error.
var ErrInvalid = errors.New("invalid identity policy")

// Problem is one thing wrong with a policy file, at a position (line and
// column from 1; 0 when the problem is the whole file).
type Problem struct {
	File      string
	Line, Col int
	Code      string
	Message   string
}

// String is "file:line:col: code: message".
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", p.File, p.Line, p.Col, p.Code, p.Message)
}

// Error is a policy file that cannot be used: its problems, sorted by
// position.
type Error struct {
	Problems []Problem
}

// Error is one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is matches ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Load reads and decodes the policy file at path.
func Load(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, readError(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{Problems: []Problem{{File: path, Code: CodeReadError,
			Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}}}
	}
	return Decode(path, data)
}

func readError(path string, err error) error {
	reason := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err.Error()
	}
	return &Error{Problems: []Problem{{File: path, Code: CodeReadError, Message: "cannot read the policy: " + reason}}}
}

// Decode decodes a policy document, naming it file in positions. It returns
// the policy, or an *Error listing every problem found.
func Decode(file string, data []byte) (p *Policy, err error) {
	d := &decoder{file: file}
	defer func() {
		// The YAML library reports some failures by panicking; never let
		// one escape.
		if r := recover(); r != nil {
			p, err = nil, &Error{Problems: []Problem{{File: file, Line: 1, Col: 1, Code: CodeParseError, Message: "the YAML document cannot be decoded"}}}
		}
	}()
	if len(data) > MaxFileBytes {
		return nil, &Error{Problems: []Problem{{File: file, Code: CodeReadError, Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}}}
	}
	root, ok := d.parse(data)
	if ok {
		p = d.policy(root)
	}
	if len(d.problems) > 0 {
		slices.SortStableFunc(d.problems, func(a, b Problem) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
		})
		return nil, &Error{Problems: d.problems}
	}
	p.File = file
	return p, nil
}

type decoder struct {
	file     string
	problems []Problem
}

func (d *decoder) errorf(n *yaml.Node, code, format string, args ...any) {
	pr := Problem{File: d.file, Code: code, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		pr.Line, pr.Col = n.Line, n.Column
	}
	d.problems = append(d.problems, pr)
}

// parse reads the one document of data; an empty document is an error (a
// policy needs issuers and rules).
func (d *decoder) parse(data []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, CodeMissingKey, "the policy is empty: it needs version, issuers and rules")
			return nil, false
		}
		d.parseError(err)
		return nil, false
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			d.parseError(err)
		} else {
			d.errorf(&next, CodeParseError, "the file holds more than one YAML document")
		}
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.errorf(nil, CodeParseError, "the file is not one YAML document")
		return nil, false
	}
	if !d.noAliases(doc.Content[0], 0) {
		return nil, false
	}
	return doc.Content[0], true
}

// parseError reports the YAML library's error, with its line when it names
// one ("yaml: line 3: …").
func (d *decoder) parseError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, after
			}
		}
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: 1, Code: CodeParseError, Message: msg})
}

// maxDepth is deeper than the grammar nests (a grant's operations list is
// at depth 6), so a deeper document is refused without walking it all.
const maxDepth = 12

// noAliases refuses anchors, aliases and documents nested deeper than the
// grammar: a policy is read as written, and a few bytes of aliases cannot
// stand for a huge one.
func (d *decoder) noAliases(n *yaml.Node, depth int) bool {
	switch {
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		d.errorf(n, CodeParseError, "anchors and aliases are not allowed in a policy: write each value out")
		return false
	case depth > maxDepth:
		d.errorf(n, CodeParseError, "the document nests deeper than the policy grammar")
		return false
	}
	for _, c := range n.Content {
		if !d.noAliases(c, depth+1) {
			return false
		}
	}
	return true
}

// fields reads a mapping of the block: its values by key, and its key
// nodes (for positions). Unknown and repeated keys are reported and left
// out; a missing required key is reported. ok is false when n is not a
// mapping.
func (d *decoder) fields(n *yaml.Node, block string) (vals, keys map[string]*yaml.Node, ok bool) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, CodeType, "%s must be a mapping", describe(block))
		return nil, nil, false
	}
	allowed := blockKeys[block]
	vals, keys = map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			d.errorf(k, CodeType, "keys of %s must be strings", describe(block))
			continue
		}
		switch {
		case !slices.Contains(allowed, k.Value):
			d.errorf(k, CodeUnknownKey, "%s has no key %q (its keys: %s)", describe(block), k.Value, strings.Join(allowed, ", "))
		case keys[k.Value] != nil:
			d.errorf(k, CodeDuplicateKey, "key %q appears twice in %s (first at line %d)", k.Value, describe(block), keys[k.Value].Line)
		default:
			vals[k.Value], keys[k.Value] = v, k
		}
	}
	for _, req := range requiredKeys[block] {
		if vals[req] == nil && keys[req] == nil {
			d.errorf(n, CodeMissingKey, "%s needs %s", describe(block), req)
		}
	}
	return vals, keys, true
}

func describe(block string) string {
	switch block {
	case "policy":
		return "the policy"
	case "token_exchange":
		return "a token_exchange block"
	case "issuer", "introspection", "upstream":
		return "an " + block
	}
	return "a " + block
}

// str reads a non-empty string of at most MaxString bytes.
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errorf(n, CodeType, "%s must be a string", what)
		return "", false
	}
	if n.Value == "" || len(n.Value) > MaxString {
		d.errorf(n, CodeInvalidValue, "%s must be a string of 1 to %d bytes", what, MaxString)
		return "", false
	}
	return n.Value, true
}

// strList reads a list of distinct strings (at most MaxList); enum, when
// set, lists the values an item may take.
func (d *decoder) strList(n *yaml.Node, what string, enum []string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, CodeType, "%s must be a list of strings", what)
		return nil, false
	}
	if len(n.Content) > MaxList {
		d.errorf(n, CodeInvalidValue, "%s lists more than %d values", what, MaxList)
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for _, item := range n.Content {
		s, good := d.str(item, "each of "+what)
		switch {
		case !good:
			ok = false
		case enum != nil && !slices.Contains(enum, s):
			d.errorf(item, CodeInvalidValue, "%q is not one of %s: %s", s, what, strings.Join(enum, ", "))
			ok = false
		case slices.Contains(out, s):
			d.errorf(item, CodeInvalidValue, "%s lists %q twice", what, s)
			ok = false
		default:
			out = append(out, s)
		}
	}
	return out, ok
}

func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errorf(n, CodeType, "%s must be true or false", what)
		return false, false
	}
	b, err := strconv.ParseBool(n.Value)
	if err != nil {
		d.errorf(n, CodeType, "%s must be true or false", what)
		return false, false
	}
	return b, true
}

func (d *decoder) integer(n *yaml.Node, what string, lo, hi int) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errorf(n, CodeType, "%s must be a whole number", what)
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		d.errorf(n, CodeInvalidValue, "%s must be a whole number from %d to %d", what, lo, hi)
		return 0, false
	}
	return int(v), true
}

// list reads a sequence of at most max items.
func (d *decoder) list(n *yaml.Node, what string, max int) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, CodeType, "%s must be a list", what)
		return nil, false
	}
	if len(n.Content) > max {
		d.errorf(n, CodeInvalidValue, "%s holds more than %d items", what, max)
		return nil, false
	}
	return n.Content, true
}

var (
	ruleName      = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	envName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	subjectPrefix = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}:$`)
	connectorID   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// endpoint reads a URL the gateway fetches or posts to: https, or http on
// a loopback host (localhost, 127.0.0.0/8, [::1]); no userinfo, no
// fragment. issuer additionally refuses a query (OpenID discovery appends
// a path to it).
func (d *decoder) endpoint(n *yaml.Node, what string, issuer bool) (string, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return "", false
	}
	if problem := checkEndpoint(s, issuer); problem != "" {
		d.errorf(n, CodeInvalidValue, "%s %s", what, problem)
		return "", false
	}
	return s, true
}

func checkEndpoint(s string, issuer bool) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "must be an absolute https: URL (http: only on a loopback host)"
	case u.User != nil || u.Fragment != "" || strings.Contains(s, "#"):
		return "must not carry userinfo or a fragment"
	case issuer && (u.RawQuery != "" || strings.Contains(s, "?")):
		return "must not carry a query"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if IsLoopbackHost(u.Hostname()) {
			return ""
		}
	}
	return "must be https: (http: only on a loopback host: localhost, 127.0.0.1, [::1])"
}

// IsLoopbackHost reports whether host (without port or brackets) is
// localhost or a loopback IP address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (d *decoder) policy(n *yaml.Node) *Policy {
	p := &Policy{}
	vals, _, ok := d.fields(n, "policy")
	if !ok {
		return p
	}
	if v := vals["version"]; v != nil && (v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Value != strconv.Itoa(Version)) {
		d.errorf(v, CodeInvalidValue, "version must be %d, the only version of the policy grammar", Version)
	}
	if v := vals["resource"]; v != nil {
		p.Resource = d.resource(v)
	}
	if v := vals["issuers"]; v != nil {
		p.Issuers = d.issuers(v)
	}
	if v := vals["rules"]; v != nil {
		p.Rules = d.rules(v)
	}
	if v := vals["upstreams"]; v != nil {
		p.Upstreams = d.upstreams(v, p.Issuers)
	}
	return p
}

func (d *decoder) resource(n *yaml.Node) Resource {
	var r Resource
	vals, _, ok := d.fields(n, "resource")
	if !ok {
		return r
	}
	if v := vals["audiences"]; v != nil {
		r.Audiences, _ = d.strList(v, "resource.audiences", nil)
	}
	if v := vals["scopes_supported"]; v != nil {
		r.ScopesSupported = d.scopes(v, "resource.scopes_supported")
	}
	if v := vals["default_scopes"]; v != nil {
		r.DefaultScopes = d.scopes(v, "resource.default_scopes")
	}
	if v := vals["scope_prefix"]; v != nil {
		if s, ok := d.str(v, "resource.scope_prefix"); ok {
			if strings.ContainsAny(s, " \t\r\n\"\\") {
				d.errorf(v, CodeInvalidValue, "resource.scope_prefix must not contain white space, quotes or backslashes")
			} else {
				r.ScopePrefix = s
			}
		}
	}
	if v := vals["omit_resource"]; v != nil {
		r.OmitResource, _ = d.boolean(v, "resource.omit_resource")
	}
	return r
}

// scopes reads a list of scope names (RFC 6749: printable ASCII without
// space, quote or backslash).
func (d *decoder) scopes(n *yaml.Node, what string) []string {
	list, ok := d.strList(n, what, nil)
	if !ok {
		return nil
	}
	for i, s := range list {
		for _, c := range []byte(s) {
			if c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				d.errorf(n.Content[i], CodeInvalidValue, "scope %q is not a scope token (printable ASCII without spaces, quotes or backslashes)", s)
				return nil
			}
		}
	}
	return list
}

func (d *decoder) issuers(n *yaml.Node) []Issuer {
	items, ok := d.list(n, "issuers", MaxIssuers)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.errorf(n, CodeInvalidValue, "issuers must list at least one issuer")
		return nil
	}
	out := make([]Issuer, 0, len(items))
	nodes := make([]*yaml.Node, 0, len(items))
	for _, item := range items {
		if is, ok := d.issuer(item); ok {
			out, nodes = append(out, is), append(nodes, item)
		}
	}
	introspecting := 0
	for i, is := range out {
		for j := range i {
			if out[j].Issuer == is.Issuer {
				d.errorf(nodes[i], CodeInvalidValue, "issuer %q is listed twice", is.Issuer)
			}
			if is.SubjectPrefix != "" && out[j].SubjectPrefix == is.SubjectPrefix {
				d.errorf(nodes[i], CodeInvalidValue, "subject_prefix %q is used by two issuers: each provider's people need their own", is.SubjectPrefix)
			}
		}
		if len(items) > 1 && is.SubjectPrefix == "" {
			d.errorf(nodes[i], CodeMissingKey, "issuer %q needs a subject_prefix: with more than one issuer, each gives its subjects their own prefix", is.Issuer)
		}
		if is.Introspection != nil {
			introspecting++
			if introspecting == 2 {
				d.errorf(nodes[i], CodeInvalidValue, "only one issuer may have introspection: an opaque token does not say which provider issued it, and it is sent to no other")
			}
		}
	}
	return out
}

func (d *decoder) issuer(n *yaml.Node) (Issuer, bool) {
	is := Issuer{Algorithms: DefaultAlgorithms, Claims: ClaimNames{Scope: "scope", Groups: "groups", Roles: "roles", Tenant: "tenant"}}
	vals, _, ok := d.fields(n, "issuer")
	if !ok || vals["issuer"] == nil {
		return is, false
	}
	before := len(d.problems)
	is.Issuer, _ = d.endpoint(vals["issuer"], "issuer", true)
	if v := vals["jwks_uri"]; v != nil {
		is.JWKSURI, _ = d.endpoint(v, "jwks_uri", false)
	}
	if v := vals["audiences"]; v != nil {
		is.Audiences, _ = d.strList(v, "audiences", nil)
	}
	if v := vals["algorithms"]; v != nil {
		if algs, ok := d.strList(v, "algorithms", enums["issuer.algorithms"]); ok {
			if len(algs) == 0 {
				d.errorf(v, CodeInvalidValue, "algorithms must list at least one algorithm")
			}
			is.Algorithms = algs
		}
	}
	if v := vals["authorized_parties"]; v != nil {
		is.AuthorizedParties, _ = d.strList(v, "authorized_parties", nil)
	}
	if v := vals["subject_prefix"]; v != nil {
		if s, ok := d.str(v, "subject_prefix"); ok {
			if !subjectPrefix.MatchString(s) {
				d.errorf(v, CodeInvalidValue, "subject_prefix must be 1 to 64 characters of [A-Za-z0-9._-] followed by a colon (okta:)")
			} else {
				is.SubjectPrefix = s
			}
		}
	}
	if v := vals["claims"]; v != nil {
		if cv, _, ok := d.fields(v, "claims"); ok {
			for _, c := range []struct {
				key string
				dst *string
			}{{"scope", &is.Claims.Scope}, {"groups", &is.Claims.Groups}, {"roles", &is.Claims.Roles}, {"tenant", &is.Claims.Tenant}} {
				if cn := cv[c.key]; cn != nil {
					if s, ok := d.str(cn, "claims."+c.key); ok {
						*c.dst = s
					}
				}
			}
		}
	}
	if v := vals["introspection"]; v != nil {
		is.Introspection = d.introspection(v)
	}
	return is, len(d.problems) == before
}

func (d *decoder) introspection(n *yaml.Node) *Introspection {
	in := &Introspection{CacheSeconds: DefaultIntrospectionCache}
	vals, _, ok := d.fields(n, "introspection")
	if !ok {
		return nil
	}
	if v := vals["endpoint"]; v != nil {
		in.Endpoint, _ = d.endpoint(v, "introspection.endpoint", false)
	}
	if v := vals["client_id"]; v != nil {
		in.ClientID, _ = d.str(v, "introspection.client_id")
	}
	if v := vals["client_secret_env"]; v != nil {
		in.ClientSecretEnv = d.envName(v, "introspection.client_secret_env")
	}
	if v := vals["cache_seconds"]; v != nil {
		in.CacheSeconds, _ = d.integer(v, "introspection.cache_seconds", 0, MaxIntrospectionCache)
	}
	return in
}

// envName reads the name of an environment variable holding a secret (the
// secret itself never goes in the file).
func (d *decoder) envName(n *yaml.Node, what string) string {
	s, ok := d.str(n, what)
	if !ok {
		return ""
	}
	if !envName.MatchString(s) {
		d.errorf(n, CodeInvalidValue, "%s must name an environment variable ([A-Za-z_][A-Za-z0-9_]*), not hold the secret", what)
		return ""
	}
	return s
}

func (d *decoder) rules(n *yaml.Node) []Rule {
	items, ok := d.list(n, "rules", MaxRules)
	if !ok {
		return nil
	}
	out := make([]Rule, 0, len(items))
	names := map[string]int{}
	for _, item := range items {
		r, ok := d.rule(item)
		if !ok {
			continue
		}
		if line, seen := names[r.Name]; seen {
			d.errorf(item, CodeInvalidValue, "rule name %q is used twice (first at line %d)", r.Name, line)
			continue
		}
		names[r.Name] = item.Line
		out = append(out, r)
	}
	return out
}

func (d *decoder) rule(n *yaml.Node) (Rule, bool) {
	var r Rule
	vals, _, ok := d.fields(n, "rule")
	if !ok {
		return r, false
	}
	before := len(d.problems)
	if v := vals["name"]; v != nil {
		if s, ok := d.str(v, "name"); ok {
			if !ruleName.MatchString(s) {
				d.errorf(v, CodeInvalidValue, "a rule name is 1 to 128 characters of [A-Za-z0-9._-]")
			}
			r.Name = s
		}
	}
	if v := vals["match"]; v != nil {
		r.Match = d.match(v)
	}
	if v := vals["grants"]; v != nil {
		r.Grants = d.grants(v)
	}
	if v := vals["connect"]; v != nil {
		r.Connect, _ = d.boolean(v, "connect")
	}
	if vals["grants"] == nil && vals["connect"] == nil {
		d.errorf(n, CodeMissingKey, "a rule needs grants, connect or both: otherwise it gives nothing")
	}
	if r.Grants == nil {
		r.Grants = grant.List{}
	}
	return r, len(d.problems) == before
}

func (d *decoder) match(n *yaml.Node) Match {
	var m Match
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		d.errorf(n, CodeType, "match must be a mapping; write match: {} for a rule that admits every verified caller")
		return m
	}
	vals, _, ok := d.fields(n, "match")
	if !ok {
		return m
	}
	for _, c := range []struct {
		key string
		dst *[]string
	}{{"issuers", &m.Issuers}, {"subjects", &m.Subjects}, {"groups", &m.Groups}, {"roles", &m.Roles}, {"tenants", &m.Tenants}} {
		if v := vals[c.key]; v != nil {
			list, ok := d.strList(v, "match."+c.key, nil)
			if ok && len(list) == 0 {
				d.errorf(v, CodeInvalidValue, "match.%s is empty, so it admits no one; leave it out to admit every %s", c.key, strings.TrimSuffix(c.key, "s"))
			}
			*c.dst = list
		}
	}
	if v := vals["scopes"]; v != nil {
		m.Scopes = d.scopes(v, "match.scopes")
	}
	return m
}

func (d *decoder) grants(n *yaml.Node) grant.List {
	items, ok := d.list(n, "grants", grant.MaxEntries)
	if !ok {
		return nil
	}
	out := grant.List{}
	for _, item := range items {
		if e, ok := d.grantEntry(item); ok {
			out = append(out, e)
		}
	}
	return out
}

// grantEntry reads a grant entry and checks it with grant.Parse, the same
// grammar as a Branchyard token's by_grants.
func (d *decoder) grantEntry(n *yaml.Node) (grant.Entry, bool) {
	var e grant.Entry
	vals, _, ok := d.fields(n, "grant")
	if !ok || vals["connector"] == nil || vals["operations"] == nil || vals["mode"] == nil {
		return e, false
	}
	before := len(d.problems)
	e.Connector, _ = d.str(vals["connector"], "connector")
	e.Operations, _ = d.strList(vals["operations"], "operations", nil)
	e.Mode, _ = d.str(vals["mode"], "mode")
	if v := vals["account"]; v != nil {
		e.Account, _ = d.str(v, "account")
	}
	if v := vals["confirm"]; v != nil {
		e.Confirm, _ = d.str(v, "confirm")
	}
	if len(d.problems) != before {
		return e, false
	}
	raw, _ := json.Marshal(grant.List{e}) // Entry.MarshalJSON cannot fail
	if _, err := grant.Parse(raw); err != nil {
		msg := strings.TrimPrefix(err.Error(), grant.ErrInvalidGrant.Error()+": entry 0 ")
		d.errorf(n, CodeInvalidValue, "grant entry: %s", msg)
		return e, false
	}
	return e, true
}

func (d *decoder) upstreams(n *yaml.Node, issuers []Issuer) []Upstream {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, CodeType, "upstreams must be a mapping of connector ids")
		return nil
	}
	var out []Upstream
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || !connectorID.MatchString(k.Value) {
			d.errorf(k, CodeInvalidValue, "each key of upstreams is a connector id (1 to 64 characters of [A-Za-z0-9_-])")
			continue
		}
		if seen[k.Value] {
			d.errorf(k, CodeDuplicateKey, "connector %q appears twice in upstreams", k.Value)
			continue
		}
		seen[k.Value] = true
		vals, _, ok := d.fields(v, "upstream")
		if !ok || vals["token_exchange"] == nil {
			continue
		}
		if tx, ok := d.tokenExchange(vals["token_exchange"], issuers); ok {
			out = append(out, Upstream{Connector: k.Value, TokenExchange: tx})
		}
	}
	slices.SortFunc(out, func(a, b Upstream) int { return strings.Compare(a.Connector, b.Connector) })
	return out
}

func (d *decoder) tokenExchange(n *yaml.Node, issuers []Issuer) (TokenExchange, bool) {
	var tx TokenExchange
	vals, _, ok := d.fields(n, "token_exchange")
	if !ok {
		return tx, false
	}
	before := len(d.problems)
	if v := vals["issuer"]; v != nil {
		if s, ok := d.str(v, "token_exchange.issuer"); ok {
			if !slices.ContainsFunc(issuers, func(is Issuer) bool { return is.Issuer == s }) {
				d.errorf(v, CodeInvalidValue, "token_exchange.issuer %q is not one of the policy's issuers", s)
			}
			tx.Issuer = s
		}
	} else if len(issuers) == 1 {
		tx.Issuer = issuers[0].Issuer
	} else {
		d.errorf(n, CodeMissingKey, "token_exchange needs issuer: the policy trusts more than one")
	}
	if v := vals["token_endpoint"]; v != nil {
		tx.TokenEndpoint, _ = d.endpoint(v, "token_exchange.token_endpoint", false)
	}
	if v := vals["client_id"]; v != nil {
		tx.ClientID, _ = d.str(v, "token_exchange.client_id")
	}
	if v := vals["client_secret_env"]; v != nil {
		tx.ClientSecretEnv = d.envName(v, "token_exchange.client_secret_env")
	}
	if v := vals["audience"]; v != nil {
		tx.Audience, _ = d.str(v, "token_exchange.audience")
	}
	if v := vals["resource"]; v != nil {
		if s, ok := d.str(v, "token_exchange.resource"); ok {
			if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Fragment != "" {
				d.errorf(v, CodeInvalidValue, "token_exchange.resource must be an absolute URI without a fragment (RFC 8707)")
			}
			tx.Resource = s
		}
	}
	if v := vals["scopes"]; v != nil {
		tx.Scopes = d.scopes(v, "token_exchange.scopes")
	}
	return tx, len(d.problems) == before
}

// CheckEndpoint reports whether s is a URL the gateway may fetch from or
// post to (an endpoint named in issuer metadata): https, or http on a
// loopback host; no userinfo or fragment.
func CheckEndpoint(s string) error {
	if problem := checkEndpoint(s, false); problem != "" {
		return fmt.Errorf("%q %s", s, problem)
	}
	return nil
}
