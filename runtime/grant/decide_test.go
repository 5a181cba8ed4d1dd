package grant

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"*", "", true},
		{"*", "github.issues.list", true},
		{"", "", true},
		{"", "a", false},
		{"issues.*", "issues.list", true},
		{"issues.*", "issues.", true},
		{"issues.*", "issues", false},
		{"*.list", "github.issues.list", true},
		{"github.*", "github.issues.list", true},
		{"github.*.list", "github.issues.comments.list", true},
		{"issues.?et", "issues.get", true},
		{"issues.?et", "issues.gget", false},
		{"issues.???", "issues.get", true},
		{"issues.???", "issues.ge", false},
		{"?", "é", true},
		{"??", "é", false},
		{"*?x", "éx", true},
		{"*??", "é", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"a*b*c", "abcbc", true},
		{"*a*a*a*b", strings.Repeat("a", 40), false},
		{"*a*a*a*b", strings.Repeat("a", 40) + "b", true},
		{"pulls.list", "pulls.list", true},
		{"pulls.list", "pulls.lists", false},
		{"pulls.list", "xpulls.list", false},
		{"[a]", "[a]", true},
		{"[a]", "a", false},
		{"a.b", "aXb", false},
		{"a+", "aa", false},
		{"**", "x", true},
		{"*x*", "abxcd", true},
		{"*x*", "abcd", false},
	}
	for _, tt := range tests {
		if got := MatchGlob(tt.glob, tt.name); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tt.glob, tt.name, got, tt.want)
		}
	}
}

// globRegexp is the reference semantics: * is .*, ? is one character,
// everything else literal, anchored.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

func TestMatchGlobAgreesWithRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", ".", "é"}
	globAlphabet := append([]string{"*", "?"}, alphabet...)
	gen := func(alpha []string, n int) string {
		var b strings.Builder
		for range rng.IntN(n + 1) {
			b.WriteString(alpha[rng.IntN(len(alpha))])
		}
		return b.String()
	}
	for range 20000 {
		g, n := gen(globAlphabet, 8), gen(alphabet, 10)
		if want, got := globRegexp(g).MatchString(n), MatchGlob(g, n); got != want {
			t.Fatalf("MatchGlob(%q, %q) = %v, regexp says %v", g, n, got, want)
		}
	}
}

func TestMatchGlobWorstCase(t *testing.T) {
	glob := strings.Repeat("*a", 128)
	name := strings.Repeat("a", 127) + strings.Repeat("b", 4096)
	if MatchGlob(glob, name) {
		t.Fatal("matched")
	}
	if n := testing.AllocsPerRun(100, func() { MatchGlob("github.*.l?st", "github.issues.list") }); n != 0 {
		t.Errorf("MatchGlob allocates %v times", n)
	}
}

func TestShortID(t *testing.T) {
	tests := []struct{ id, service, want string }{
		{"github.issues.list", "github", "issues.list"},
		{"github.issues.list", "", "issues.list"},
		{"github.issues.list", "gitlab", "github.issues.list"},
		{"github.issues.list", "git", "github.issues.list"},
		{"plain", "", "plain"},
		{"github", "github", "github"},
	}
	for _, tt := range tests {
		if got := ShortID(tt.id, tt.service); got != tt.want {
			t.Errorf("ShortID(%q, %q) = %q, want %q", tt.id, tt.service, got, tt.want)
		}
	}
}

func mustParse(t testing.TB, s string) List {
	t.Helper()
	l, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return l
}

func TestDecide(t *testing.T) {
	list := func(s string) string { return "[" + s + "]" }
	listIssues := Op{Connector: "github", ID: "github.issues.list", ServiceID: "github"}
	createIssue := Op{Connector: "github", ID: "github.issues.create", ServiceID: "github", Mutation: true, NeedsConfirm: true}
	createLabel := Op{Connector: "github", ID: "github.labels.create", ServiceID: "github", Mutation: true}
	listTickets := Op{Connector: "tracker", ID: "tickets.tickets.list", ServiceID: "tickets"}
	tests := []struct {
		name    string
		grant   string
		op      Op
		outcome string
		index   int
		account string
		code    string
		rule    string
	}{
		{"empty grant", `[]`, listIssues, Denied, -1, "", CodeDenied, "null"},
		{"other connector", list(`{"connector":"jira","operations":["*"],"mode":"write"}`), listIssues, Denied, -1, "", CodeDenied, "null"},
		{"no glob names it", list(`{"connector":"github","operations":["pulls.*"],"mode":"write"}`), listIssues, Denied, -1, "", CodeDenied, "null"},
		{"read allows read", list(`{"connector":"github","operations":["*"],"mode":"read"}`), listIssues, Allowed, 0, "default", "", `{"index":0,"connector":"github","operations":["*"],"mode":"read"}`},
		{"write allows read", list(`{"connector":"github","operations":["issues.list"],"mode":"write","account":"work"}`), listIssues, Allowed, 0, "work", "", `{"index":0,"connector":"github","operations":["issues.list"],"mode":"write","account":"work"}`},
		{"full id glob", list(`{"connector":"github","operations":["github.issues.*"],"mode":"read"}`), listIssues, Allowed, 0, "default", "", ""},
		{"read denies mutation", list(`{"connector":"github","operations":["*"],"mode":"read"}`), createIssue, Denied, 0, "default", CodeDenied, `{"index":0,"connector":"github","operations":["*"],"mode":"read"}`},
		{"rule is first naming read entry", list(`{"connector":"jira","operations":["*"],"mode":"write"},{"connector":"github","operations":["pulls.*"],"mode":"read"},{"connector":"github","operations":["issues.*"],"mode":"read","account":"a"},{"connector":"github","operations":["*"],"mode":"read","account":"b"}`), createIssue, Denied, 2, "a", CodeDenied, ""},
		{"write allows mutation", list(`{"connector":"github","operations":["*"],"mode":"write"}`), createLabel, Allowed, 0, "default", "", ""},
		{"write without confirm", list(`{"connector":"github","operations":["*"],"mode":"write"}`), createIssue, ConfirmationRequired, 0, "default", CodeConfirmationRequired, `{"index":0,"connector":"github","operations":["*"],"mode":"write"}`},
		{"confirm rule is first passing entry", list(`{"connector":"github","operations":["*"],"mode":"read","confirm":"allow"},{"connector":"github","operations":["issues.*"],"mode":"write","account":"w1"},{"connector":"github","operations":["*"],"mode":"write","account":"w2"}`), createIssue, ConfirmationRequired, 1, "w1", CodeConfirmationRequired, ""},
		{"later entry with confirm allows", list(`{"connector":"github","operations":["*"],"mode":"write","account":"w1"},{"connector":"github","operations":["issues.create"],"mode":"write","confirm":"allow","account":"w2"}`), createIssue, Allowed, 1, "w2", "", ""},
		{"read entry with confirm does not allow mutation", list(`{"connector":"github","operations":["*"],"mode":"read","confirm":"allow"}`), createIssue, Denied, 0, "default", CodeDenied, ""},
		{"first allowing entry picks account", list(`{"connector":"github","operations":["pulls.*"],"mode":"read","account":"x"},{"connector":"github","operations":["issues.*"],"mode":"read","account":"y"},{"connector":"github","operations":["*"],"mode":"read","account":"z"}`), listIssues, Allowed, 1, "y", "", ""},
		{"without service prefix", list(`{"connector":"github","operations":["*"],"mode":"read"},{"connector":"tracker","operations":["tickets.list"],"mode":"read"}`), listTickets, Allowed, 1, "default", "", ""},
		{"glob does not cross connectors", list(`{"connector":"github","operations":["tickets.list"],"mode":"read"}`), listTickets, Denied, -1, "", CodeDenied, "null"},
		{"question mark", list(`{"connector":"github","operations":["issues.l?st"],"mode":"read"}`), listIssues, Allowed, 0, "default", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustParse(t, tt.grant)
			d := l.Decide(tt.op)
			if d.Outcome != tt.outcome || d.Index != tt.index || d.Account != tt.account || d.Code != tt.code {
				t.Errorf("Decide = %+v, want outcome %s index %d account %q code %q", d, tt.outcome, tt.index, tt.account, tt.code)
			}
			if (d.Entry == nil) != (tt.index < 0) || (d.Entry != nil && d.Entry != &l[tt.index]) {
				t.Errorf("Entry = %v for index %d", d.Entry, tt.index)
			}
			if tt.rule != "" && string(d.Rule()) != tt.rule {
				t.Errorf("Rule = %s, want %s", d.Rule(), tt.rule)
			}
			if got := l.Visible(tt.op); got != (tt.outcome == Allowed) {
				t.Errorf("Visible = %v", got)
			}
			c := Compile(l, []Op{tt.op})
			if cd := c.Decide(0); cd.Outcome != d.Outcome || cd.Index != d.Index || cd.Account != d.Account || cd.Code != d.Code || string(cd.Rule()) != string(d.Rule()) {
				t.Errorf("Compiled = %+v, List = %+v", cd, d)
			}
		})
	}
}

// TestVisible pins the tools/list filter the gateway tests describe.
func TestVisible(t *testing.T) {
	listIssues := Op{Connector: "github", ID: "github.issues.list", ServiceID: "github"}
	createIssue := Op{Connector: "github", ID: "github.issues.create", ServiceID: "github", Mutation: true, NeedsConfirm: true}
	createLabel := Op{Connector: "github", ID: "github.labels.create", ServiceID: "github", Mutation: true}
	listTickets := Op{Connector: "tracker", ID: "tickets.tickets.list", ServiceID: "tickets"}
	ops := []Op{listIssues, createIssue, createLabel, listTickets}
	visible := func(l List) []bool {
		var out []bool
		for _, op := range ops {
			out = append(out, l.Visible(op))
		}
		return out
	}
	read := mustParse(t, `[{"connector":"github","operations":["*"],"mode":"read"}]`)
	if got := fmt.Sprint(visible(read)); got != "[true false false false]" {
		t.Errorf("read grant shows %s", got)
	}
	write := mustParse(t, `[{"connector":"github","operations":["*"],"mode":"write"},{"connector":"tracker","operations":["tickets.list"],"mode":"read"}]`)
	if got := fmt.Sprint(visible(write)); got != "[true false true true]" {
		t.Errorf("write grant shows %s", got)
	}
	confirm := mustParse(t, `[{"connector":"github","operations":["*"],"mode":"write","confirm":"allow"}]`)
	if got := fmt.Sprint(visible(confirm)); got != "[true true true false]" {
		t.Errorf("confirm grant shows %s", got)
	}
}

func TestCompiledOutOfRange(t *testing.T) {
	c := Compile(mustParse(t, `[{"connector":"c","operations":["*"],"mode":"write"}]`), []Op{{Connector: "c", ID: "s.a"}})
	for _, i := range []int{-1, 1, 100} {
		d := c.Decide(i)
		if d.Outcome != Denied || d.Index != -1 || d.Entry != nil || string(d.Rule()) != "null" || c.Visible(i) {
			t.Errorf("Decide(%d) = %+v", i, d)
		}
	}
	if c.Len() != 1 || !c.Visible(0) {
		t.Errorf("Len %d Visible(0) %v", c.Len(), c.Visible(0))
	}
	if n := testing.AllocsPerRun(100, func() { c.Decide(0).Rule() }); n != 0 {
		t.Errorf("Compiled.Decide allocates %v times", n)
	}
}

func TestCompileCopies(t *testing.T) {
	l := mustParse(t, `[{"connector":"c","operations":["*"],"mode":"read"}]`)
	c := Compile(l, []Op{{Connector: "c", ID: "s.a"}})
	l[0].Operations[0] = "none"
	l[0].Mode = ModeWrite
	if d := c.Decide(0); !d.IsAllowed() || d.Entry.Operations[0] != "*" || d.Entry.Mode != ModeRead {
		t.Errorf("compiled grant changed with its source: %+v", d.Entry)
	}
}

// randomGrant builds a random, valid grant over a small vocabulary so that
// entries collide often.
func randomGrant(rng *rand.Rand) List {
	connectors := []string{"github", "jira", "team_github"}
	globs := []string{"*", "issues.*", "*.list", "github.*", "issues.?et", "pulls.list", "github.issues.create", "?", "*e*", "labels.create", "tickets.*"}
	accounts := []string{"", "", "work", "personal"}
	n := rng.IntN(6)
	l := make(List, n)
	for i := range l {
		e := Entry{Connector: connectors[rng.IntN(len(connectors))], Mode: ModeRead, Account: accounts[rng.IntN(len(accounts))]}
		for range 1 + rng.IntN(3) {
			e.Operations = append(e.Operations, globs[rng.IntN(len(globs))])
		}
		if rng.IntN(2) == 0 {
			e.Mode = ModeWrite
		}
		if rng.IntN(3) == 0 {
			e.Confirm = ConfirmAllow
		}
		l[i] = e
	}
	return l
}

func randomTable(rng *rand.Rand) []Op {
	connectors := []string{"github", "jira", "team_github"}
	ids := []string{"github.issues.list", "github.issues.get", "github.issues.create", "github.labels.create", "github.pulls.list", "jira.tickets.list", "jira.tickets.set", "x"}
	n := rng.IntN(12)
	table := make([]Op, n)
	for i := range table {
		id := ids[rng.IntN(len(ids))]
		svc := ""
		if rng.IntN(2) == 0 {
			svc, _, _ = strings.Cut(id, ".")
		}
		table[i] = Op{Connector: connectors[rng.IntN(len(connectors))], ID: id, ServiceID: svc, Mutation: rng.IntN(2) == 0, NeedsConfirm: rng.IntN(3) == 0}
	}
	return table
}

// TestCompiledAgreesWithDecide is a property test: on random grants and
// tables, the precompiled decision equals List.Decide.
func TestCompiledAgreesWithDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	outcomes := map[string]int{}
	for range 3000 {
		l, table := randomGrant(rng), randomTable(rng)
		c := Compile(l, table)
		if c.Len() != len(table) {
			t.Fatalf("Len %d, table %d", c.Len(), len(table))
		}
		for i, op := range table {
			want, got := l.Decide(op), c.Decide(i)
			outcomes[want.Outcome]++
			if got.Outcome != want.Outcome || got.Index != want.Index || got.Account != want.Account || got.Code != want.Code ||
				string(got.Rule()) != string(want.Rule()) || c.Visible(i) != l.Visible(op) {
				t.Fatalf("grant %v op %+v: compiled %+v, list %+v", l, op, got, want)
			}
			if want.Entry != nil && want.Entry.Connector != op.Connector {
				t.Fatalf("rule from another connector: %+v for %+v", want, op)
			}
		}
	}
	for _, o := range []string{Allowed, Denied, ConfirmationRequired} {
		if outcomes[o] == 0 {
			t.Errorf("property test never produced %s: %v", o, outcomes)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	l := mustParse(b, `[{"connector":"jira","operations":["*"],"mode":"write"},{"connector":"github","operations":["pulls.*","issues.*","comments.*"],"mode":"write","confirm":"allow","account":"work"}]`)
	op := Op{Connector: "github", ID: "github.comments.create", ServiceID: "github", Mutation: true}
	b.Run("List", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.Decide(op)
		}
	})
	c := Compile(l, []Op{op})
	b.Run("Compiled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Decide(0)
		}
	})
}
