package naming

import "testing"

func TestNames(t *testing.T) {
	cases := []struct{ in, snake, kebab, pascal, camel string }{
		{"listIssues", "list_issues", "list-issues", "ListIssues", "listIssues"},
		{"create_comment", "create_comment", "create-comment", "CreateComment", "createComment"},
		{"Idempotency-Key", "idempotency_key", "idempotency-key", "IdempotencyKey", "idempotencyKey"},
		{"HTTPServer2Go", "http_server2_go", "http-server2-go", "HttpServer2Go", "httpServer2Go"},
		{"", "", "", "", ""},
	}
	for _, c := range cases {
		if got := Snake(c.in); got != c.snake {
			t.Errorf("Snake(%q) = %q, want %q", c.in, got, c.snake)
		}
		if got := Kebab(c.in); got != c.kebab {
			t.Errorf("Kebab(%q) = %q, want %q", c.in, got, c.kebab)
		}
		if got := Pascal(c.in); got != c.pascal {
			t.Errorf("Pascal(%q) = %q, want %q", c.in, got, c.pascal)
		}
		if got := Camel(c.in); got != c.camel {
			t.Errorf("Camel(%q) = %q, want %q", c.in, got, c.camel)
		}
	}
	for in, want := range map[string]string{"class": "class_", "2fa": "_2fa", "": "value", "Owner": "owner"} {
		if got := PyIdent(in); got != want {
			t.Errorf("PyIdent(%q) = %q, want %q", in, got, want)
		}
	}
	taken := map[string]bool{}
	if a, b, c := Unique("x", taken, "_"), Unique("x", taken, "_"), Unique("x", taken, "_"); a != "x" || b != "x_2" || c != "x_3" {
		t.Errorf("Unique: %q %q %q", a, b, c)
	}
	if EnvName("team-github.v2") != "TEAM_GITHUB_V2" {
		t.Errorf("EnvName: %q", EnvName("team-github.v2"))
	}
	if !IsJSIdent("$a1") || IsJSIdent("1a") || IsJSIdent("a-b") {
		t.Error("IsJSIdent")
	}
}

func TestGoNames(t *testing.T) {
	for in, want := range map[string]string{"issue_number": "IssueNumber", "a-b.c": "ABC", "9lives": "F9lives", "": "Field", "øcto": "Xcto", "X-Trace": "XTrace"} {
		if got := GoExported(in); got != want {
			t.Errorf("GoExported(%q) = %q, want %q", in, got, want)
		}
	}
	if got := GoUnexported("github.comments.create"); got != "githubCommentsCreate" {
		t.Errorf("GoUnexported: %q", got)
	}
	used := map[string]bool{}
	if a, b := Unique("X", used, ""), Unique("X", used, ""); a != "X" || b != "X2" {
		t.Errorf("Unique: %q %q", a, b)
	}
}

// TestSnakeContract pins the snakeCase rule lowering derives names with.
func TestSnakeContract(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"listIssues", "list_issues"},
		{"createIssueComment", "create_issue_comment"},
		{"getReleaseByTag", "get_release_by_tag"},
		{"issues/list-for-repo", "issues_list_for_repo"},
		{"HTTPServer", "http_server"},
		{"getV2Thing", "get_v2_thing"},
		{"Idempotency-Key", "idempotency_key"},
		{"already_snake", "already_snake"},
		{"  spaced  out  ", "spaced_out"},
		{"GitHub Mini", "git_hub_mini"},
		{"oauth2", "oauth2"},
		{"ÉtéCafé", "été_café"},
		{"--", ""},
		{"", ""},
		{"A", "a"},
		{"ABC", "abc"},
	} {
		if got := Snake(c.in); got != c.want {
			t.Errorf("Snake(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
