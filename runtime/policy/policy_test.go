package policy_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/policy"
)

func load(t *testing.T, path string) *policy.Policy {
	t.Helper()
	p, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadFull: every key of the grammar lands where the model says, with
// the defaults of what the file leaves out.
func TestLoadFull(t *testing.T) {
	p := load(t, "testdata/full.yaml")
	if p.File != "testdata/full.yaml" || len(p.Issuers) != 2 || len(p.Rules) != 3 || len(p.Upstreams) != 1 {
		t.Fatalf("%+v", p)
	}
	r := p.Resource
	if !slices.Equal(r.Audiences, []string{"api://anvil-gateway"}) || r.ScopePrefix != "api://anvil-gateway/" || r.OmitResource ||
		!slices.Equal(r.DefaultScopes, []string{"tools.read"}) {
		t.Errorf("resource %+v", r)
	}
	a, b := p.Issuers[0], p.Issuers[1]
	if a.Issuer != "https://login.example.com/tenant-a/v2.0" || a.JWKSURI == "" || a.SubjectPrefix != "entra:" ||
		!slices.Equal(a.Algorithms, []string{"RS256"}) || a.Claims != (policy.ClaimNames{Scope: "scp", Groups: "groups", Roles: "roles", Tenant: "tid"}) ||
		!slices.Equal(a.AuthorizedParties, []string{"mcp-host"}) || a.Introspection != nil {
		t.Errorf("issuer 0 %+v", a)
	}
	if !slices.Equal(b.Algorithms, policy.DefaultAlgorithms) || b.Claims.Scope != "scope" || b.Claims.Tenant != "tenant" ||
		b.Introspection == nil || b.Introspection.ClientSecretEnv != "ANVIL_TEST_INTROSPECTION_SECRET" || b.Introspection.CacheSeconds != 10 {
		t.Errorf("issuer 1 %+v (introspection %+v)", b, b.Introspection)
	}
	w := p.Rules[1]
	if w.Name != "writers" || !w.Connect || len(w.Grants) != 1 || w.Grants[0].Account != "work" || w.Grants[0].Confirm != "allow" ||
		!slices.Equal(w.Match.Roles, []string{"maintainer"}) || !slices.Equal(w.Match.Tenants, []string{"t1"}) {
		t.Errorf("rule writers %+v", w)
	}
	if p.Rules[2].Grants == nil || len(p.Rules[2].Grants) != 0 {
		t.Errorf("a connect-only rule's grants: %#v", p.Rules[2].Grants)
	}
	u := p.Upstream("github")
	if u == nil || u.TokenExchange.Audience != "https://api.github.example" || !slices.Equal(u.TokenExchange.Scopes, []string{"repo"}) || p.Upstream("jira") != nil {
		t.Errorf("upstream %+v", u)
	}
	if got := p.ScopesSupported(); !slices.Equal(got, []string{"api://anvil-gateway/tools.read", "api://anvil-gateway/tools.write"}) {
		t.Errorf("scopes supported %v", got)
	}
	if got := p.Unprefixed([]string{"api://anvil-gateway/tools.read", "openid"}); !slices.Equal(got, []string{"tools.read", "openid"}) {
		t.Errorf("unprefixed %v", got)
	}
}

const minimal = `version: 1
issuers: [{issuer: "https://idp.example"}]
rules:
  - name: readers
    match: {groups: [eng], scopes: [tools:read]}
    grants: [{connector: github, operations: ["issues.*"], mode: read}]
  - name: writers
    match: {groups: [eng], scopes: [tools:write]}
    grants: [{connector: github, operations: ["*"], mode: write}]
  - name: admins
    match: {roles: [admin], scopes: [tools:write, admin]}
    grants: [{connector: jira, operations: ["*"], mode: write}]
    connect: true
`

func decode(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Decode("p.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecide: deny by default; every stated condition must hold; the
// grant is the matching rules' entries in rule order; callers matching the
// same rules share one list.
func TestDecide(t *testing.T) {
	p := decode(t, minimal)
	none := p.Decide(policy.Claims{Issuer: "https://idp.example", Subject: "x"})
	if len(none.Grants) != 0 || none.Grants == nil || none.Connect || len(none.Rules) != 0 {
		t.Errorf("no rule: %+v", none)
	}
	eng := policy.Claims{Issuer: "https://idp.example", Subject: "ada", Groups: []string{"eng"}, Scopes: []string{"tools:read", "tools:write"}}
	d := p.Decide(eng)
	if !slices.Equal(d.Rules, []string{"readers", "writers"}) || len(d.Grants) != 2 || d.Grants[0].Mode != "read" || d.Grants[1].Mode != "write" || d.Connect {
		t.Errorf("eng: %+v", d)
	}
	again := p.Decide(policy.Claims{Subject: "bob", Groups: []string{"eng", "ops"}, Scopes: []string{"tools:write", "tools:read"}})
	if &again.Grants[0] != &d.Grants[0] {
		t.Error("two callers matching the same rules got two lists")
	}
	// A wildcard in a claim is a value like any other, never a pattern.
	if d := p.Decide(policy.Claims{Groups: []string{"*"}, Roles: []string{"*"}, Scopes: []string{"*", "tools:write", "admin"}}); len(d.Grants) != 0 {
		t.Errorf("wildcard claims were granted %v", d.Grants)
	}
	admin := p.Decide(policy.Claims{Roles: []string{"admin"}, Scopes: []string{"admin", "tools:write"}})
	if !admin.Connect || len(admin.Grants) != 1 || admin.Grants[0].Connector != "jira" {
		t.Errorf("admin: %+v", admin)
	}
	if d := p.Decide(policy.Claims{Roles: []string{"admin"}, Scopes: []string{"admin"}}); len(d.Grants) != 0 {
		t.Errorf("admin without tools:write: %+v", d)
	}
}

// TestStepUp: the options name each rule's whole scope set and the grant
// the caller would hold with it, fewest missing scopes first; rules whose
// other conditions fail, and rules already matched, are no option.
func TestStepUp(t *testing.T) {
	p := decode(t, minimal)
	opts := p.StepUp(policy.Claims{Groups: []string{"eng"}, Roles: []string{"admin"}, Scopes: []string{"tools:read"}})
	if len(opts) != 2 {
		t.Fatalf("options %+v", opts)
	}
	if !slices.Equal(opts[0].Scopes, []string{"tools:write"}) || len(opts[0].Grants) != 2 || opts[0].Grants[1].Mode != "write" {
		t.Errorf("first option %+v", opts[0])
	}
	if !slices.Equal(opts[1].Scopes, []string{"tools:write", "admin"}) || len(opts[1].Grants) != 3 || opts[1].Grants[2].Connector != "jira" {
		t.Errorf("second option %+v", opts[1])
	}
	if opts := p.StepUp(policy.Claims{Groups: []string{"ops"}}); len(opts) != 0 {
		t.Errorf("a caller no rule admits has options %+v", opts)
	}
	var l grant.List = opts[0].Grants
	if d := l.Decide(grant.Op{Connector: "github", ID: "github.issues.create", Mutation: true}); !d.IsAllowed() {
		t.Errorf("the option's grant does not allow a write: %+v", d)
	}
}

// TestProblems: each defect is refused with its code at its position, and
// a file with several gets them all, in order.
func TestProblems(t *testing.T) {
	issuer := "issuers: [{issuer: \"https://idp.example\"}]\n"
	rule := "rules: [{name: r, match: {}, connect: true}]\n"
	for _, c := range []struct {
		name, doc, want string
	}{
		{"empty", "", "p.yaml:0:0: policy/missing_key: the policy is empty"},
		{"not yaml", "version: [1\n", "p.yaml:1:1: policy/parse_error: did not find expected ',' or ']'"},
		{"two documents", "version: 1\n---\nversion: 1\n", "p.yaml:2:1: policy/parse_error: the file holds more than one YAML document"},
		{"alias", "version: 1\n" + issuer + "rules: &r []\nupstreams: *r\n", "p.yaml:3:8: policy/parse_error: anchors and aliases are not allowed"},
		{"unknown key", "version: 1\n" + issuer + rule + "isuers: []\n", "p.yaml:4:1: policy/unknown_key: the policy has no key \"isuers\" (its keys: version, resource, issuers, rules, upstreams)"},
		{"duplicate key", "version: 1\nversion: 1\n" + issuer + rule, "p.yaml:2:1: policy/duplicate_key: key \"version\" appears twice in the policy (first at line 1)"},
		{"version", "version: 2\n" + issuer + rule, "p.yaml:1:10: policy/invalid_value: version must be 1"},
		{"missing", "version: 1\n" + rule, "p.yaml:1:1: policy/missing_key: the policy needs issuers"},
		{"no issuer", "version: 1\nissuers: []\n" + rule, "p.yaml:2:10: policy/invalid_value: issuers must list at least one issuer"},
		{"http issuer", "version: 1\nissuers: [{issuer: \"http://idp.example\"}]\n" + rule, "p.yaml:2:20: policy/invalid_value: issuer must be https: (http: only on a loopback host"},
		{"issuer query", "version: 1\nissuers: [{issuer: \"https://idp.example/?x=1\"}]\n" + rule, "p.yaml:2:20: policy/invalid_value: issuer must not carry a query"},
		{"algorithm", "version: 1\nissuers: [{issuer: \"https://i\", algorithms: [HS256]}]\n" + rule, "p.yaml:2:46: policy/invalid_value: \"HS256\" is not one of algorithms: RS256, ES256, EdDSA"},
		{"two issuers without prefix", "version: 1\nissuers: [{issuer: \"https://a\"}, {issuer: \"https://b\", subject_prefix: \"b:\"}]\n" + rule,
			"p.yaml:2:11: policy/missing_key: issuer \"https://a\" needs a subject_prefix"},
		{"same prefix", "version: 1\nissuers: [{issuer: \"https://a\", subject_prefix: \"x:\"}, {issuer: \"https://b\", subject_prefix: \"x:\"}]\n" + rule,
			"p.yaml:2:56: policy/invalid_value: subject_prefix \"x:\" is used by two issuers"},
		{"secret in file", "version: 1\nissuers: [{issuer: \"https://a\", introspection: {client_id: g, client_secret_env: \"s3cr3t value\"}}]\n" + rule,
			"p.yaml:2:82: policy/invalid_value: introspection.client_secret_env must name an environment variable"},
		{"rule type", "version: 1\n" + issuer + "rules: [{name: r, match: {groups: eng}, connect: true}]\n", "p.yaml:3:35: policy/type: match.groups must be a list of strings"},
		{"empty condition", "version: 1\n" + issuer + "rules: [{name: r, match: {groups: []}, connect: true}]\n", "p.yaml:3:35: policy/invalid_value: match.groups is empty, so it admits no one"},
		{"rule gives nothing", "version: 1\n" + issuer + "rules: [{name: r, match: {}}]\n", "p.yaml:3:9: policy/missing_key: a rule needs grants, connect or both"},
		{"null match", "version: 1\n" + issuer + "rules: [{name: r, match: , connect: true}]\n", "p.yaml:3:26: policy/type: match must be a mapping"},
		{"grant mode", "version: 1\n" + issuer + "rules: [{name: r, match: {}, grants: [{connector: github, operations: [\"*\"], mode: admin}]}]\n",
			"p.yaml:3:39: policy/invalid_value: grant entry: mode must be read or write"},
		{"grant key", "version: 1\n" + issuer + "rules: [{name: r, match: {}, grants: [{connector: github, operations: [\"*\"], mode: read, scope: x}]}]\n",
			"p.yaml:3:90: policy/unknown_key: a grant has no key \"scope\""},
		{"rule twice", "version: 1\n" + issuer + "rules: [{name: r, match: {}, connect: true}, {name: r, match: {}, connect: true}]\n",
			"p.yaml:3:46: policy/invalid_value: rule name \"r\" is used twice (first at line 3)"},
		{"scope token", "version: 1\n" + issuer + "rules: [{name: r, match: {scopes: [\"a b\"]}, connect: true}]\n", "p.yaml:3:36: policy/invalid_value: scope \"a b\" is not a scope token"},
		{"exchange issuer", "version: 1\n" + issuer + rule + "upstreams: {github: {token_exchange: {issuer: \"https://other\", client_id: g, client_secret_env: S, audience: a}}}\n",
			"p.yaml:4:47: policy/invalid_value: token_exchange.issuer \"https://other\" is not one of the policy's issuers"},
		{"exchange audience", "version: 1\n" + issuer + rule + "upstreams: {github: {token_exchange: {client_id: g, client_secret_env: S}}}\n",
			"p.yaml:4:38: policy/missing_key: a token_exchange block needs audience"},
		{"connector id", "version: 1\n" + issuer + rule + "upstreams: {\"git hub\": {token_exchange: {client_id: g, client_secret_env: S, audience: a}}}\n",
			"p.yaml:4:13: policy/invalid_value: each key of upstreams is a connector id"},
		{"bool", "version: 1\n" + issuer + "rules: [{name: r, match: {}, connect: yes}]\n", "p.yaml:3:39: policy/type: connect must be true or false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := policy.Decode("p.yaml", []byte(c.doc))
			if p != nil || err == nil {
				t.Fatalf("accepted: %+v", p)
			}
			if !errors.Is(err, policy.ErrInvalid) {
				t.Errorf("%v is not ErrInvalid", err)
			}
			var pe *policy.Error
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Problems[0].String(), c.want) {
				t.Errorf("got\n%v\nwant a first problem starting with\n%s", err, c.want)
			}
		})
	}
}

// TestSeveralProblems: every problem is reported, sorted by position.
func TestSeveralProblems(t *testing.T) {
	_, err := policy.Decode("p.yaml", []byte("rules: [{name: \"bad name\", match: {}, connect: 1}]\nversion: 3\nextra: 1\n"))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	var codes []string
	for _, p := range pe.Problems {
		codes = append(codes, p.Code)
	}
	want := []string{"policy/missing_key", "policy/invalid_value", "policy/type", "policy/invalid_value", "policy/unknown_key"}
	if !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v\n%v", codes, want, err)
	}
}

// TestLoadLimits: an unreadable or oversized file is a read error naming
// the file.
func TestLoadLimits(t *testing.T) {
	_, err := policy.Load("testdata/absent.yaml")
	if err == nil || !strings.Contains(err.Error(), "testdata/absent.yaml:0:0: policy/read_error: cannot read the policy: no such file or directory") {
		t.Errorf("absent file: %v", err)
	}
	_, err = policy.Decode("big.yaml", make([]byte, policy.MaxFileBytes+1))
	if err == nil || !strings.Contains(err.Error(), "policy/read_error: the file is larger than") {
		t.Errorf("big file: %v", err)
	}
	deep := strings.Repeat("[", 50) + strings.Repeat("]", 50)
	if _, err := policy.Decode("deep.yaml", []byte("version: 1\nrules: "+deep+"\n")); err == nil || !strings.Contains(err.Error(), "policy/parse_error: the document nests deeper") {
		t.Errorf("deep document: %v", err)
	}
}
