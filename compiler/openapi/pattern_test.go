package openapi

import (
	"regexp"
	"strings"
	"testing"
)

func TestRunnablePattern(t *testing.T) {
	for _, c := range []struct {
		in, want string
		fix      patternFix
	}{
		// RE2 runs these as written.
		{`^[a-z0-9-\.]+$`, `^[a-z0-9-\.]+$`, patternKept},
		{`\A\S+\z`, `\A\S+\z`, patternKept},
		{`x{0,1000}`, `x{0,1000}`, patternKept},
		// Exact rewrites.
		{`[\u0020-\u007E]+`, `[\x{0020}-\x{007E}]+`, patternRewritten},
		{`\u{1F600}`, `\x{1F600}`, patternRewritten},
		{`\p{XDigit}{8}`, `[[:xdigit:]]{8}`, patternRewritten},
		{`[\p{Upper}\p{Digit}_]+`, `[[:upper:][:digit:]_]+`, patternRewritten},
		{`\P{Alpha}`, `[^[:alpha:]]`, patternRewritten},
		{`([a-z]|\p{IsLetter})*`, `([a-z]|\p{L})*`, patternRewritten},
		{`\A[a-z]\Z`, `\A[a-z]\z`, patternRewritten},
		{`a\cJb\0`, `a\x{0a}b\x{0}`, patternRewritten},
		// Loosenings.
		{`^(?!aws:)[a-z:]+$`, `^[a-z:]+$`, patternLoosened},
		{`^(?=.{3,63}$)(?<!-)[a-z]+(?<=[a-z])$`, `^[a-z]+$`, patternLoosened},
		{`^.{1,1600}$`, `^.{1,}$`, patternLoosened},
		{`^.{0,262144}$`, `^.{0,}$`, patternLoosened},
		{`^x{2000}$`, `^x{1000,}$`, patternLoosened},
		{`^a++b*+$`, `^a+b*$`, patternLoosened},
		{`(?>ab|a)c`, `(?:ab|a)c`, patternLoosened},
		// No rewrite.
		{`^(a)\1$`, ``, patternDropped},
		{`[\p{Print}&&[^|:/]]+`, ``, patternDropped},
		{`(?!unclosed`, ``, patternDropped},
		{`[]`, ``, patternDropped},
		{`\u12`, ``, patternDropped},
	} {
		got, fix := runnablePattern(c.in)
		if got != c.want || fix != c.fix {
			t.Errorf("runnablePattern(%q) = %q, %d; want %q, %d", c.in, got, fix, c.want, c.fix)
		}
		if fix != patternDropped {
			if _, err := regexp.Compile(got); err != nil {
				t.Errorf("%q: result %q does not compile: %v", c.in, got, err)
			}
		}
	}
}

// FuzzRunnablePattern: whatever the input, the result compiles (or is dropped) and nothing panics.
func FuzzRunnablePattern(f *testing.F) {
	for _, s := range []string{`^(?!a)b{1,2000}\u0041\p{Alpha}[\p{L}&&[a]]`, `(?<=x`, `\`, `[`, `{1,2}`, `a{99999999999}`, `\p{`, `\u{`, `(?>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		out, fix := runnablePattern(p)
		if fix == patternDropped {
			if out != "" {
				t.Fatalf("dropped with output %q", out)
			}
			return
		}
		if _, err := regexp.Compile(out); err != nil {
			t.Fatalf("%q -> %q does not compile: %v", p, out, err)
		}
	})
}

func TestLoadRewritesPatterns(t *testing.T) {
	s := mustLoad(t, "testdata/robust/patterns.yaml")
	props := s.Operations[0].RequestBody.Schema.Properties
	for name, want := range map[string]string{
		"key":   `^[a-zA-Z+-=._:/]+$`,
		"arn":   `^arn:.{16,}$`,
		"text":  `[\x{0020}-\x{007E}]+`,
		"hex":   `[[:xdigit:]]{8}`,
		"plain": `^[a-z]+$`,
		"twice": ``,
	} {
		if got := props[name].Pattern; got != want {
			t.Errorf("%s: pattern %q, want %q", name, got, want)
		}
	}
	var warns []string
	for _, d := range s.Diagnostics {
		if d.Code == CodeUnsupportedPattern {
			warns = append(warns, d.String())
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "3 schema pattern(s)") || !strings.Contains(warns[0], "2 loosened") ||
		!strings.Contains(warns[0], "1 dropped") || !strings.HasPrefix(warns[0], "testdata/robust/patterns.yaml:13:") {
		t.Errorf("want one warning counting 3 patterns, first at line 13: %q", warns)
	}
}

// TestLoadLenientRealWorld: constructs real descriptions carry that are not
// worth failing a compile for.
func TestLoadLenientRealWorld(t *testing.T) {
	s := mustLoad(t, "testdata/robust/lenient.yaml")
	if len(s.Servers) != 1 || s.Servers[0].URL != "https://eu.example.com/v2" {
		t.Errorf("servers %+v: a variable without a default takes its enum's first value", s.Servers)
	}
	op := s.Operations[0]
	if got := strings.Join(paramNames(op), ","); got != "path:id" {
		t.Errorf("params %s: parameters with an empty name are skipped", got)
	}
	n := 0
	for _, d := range s.Diagnostics {
		if d.Code == CodeEmptyParameterName {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d %s warnings, want 2: %v", n, CodeEmptyParameterName, s.Diagnostics)
	}
}

func TestLoadLenientSwaggerBody(t *testing.T) {
	s := mustLoad(t, "testdata/robust/lenient-v2.yaml")
	op := s.Operations[0]
	if op.RequestBody == nil || op.RequestBody.Schema == nil || op.RequestBody.Schema.Properties["title"] == nil {
		t.Errorf("a body parameter with an empty name is still the body: %+v", op.RequestBody)
	}
	if len(op.Params) != 0 || len(s.Diagnostics) != 1 || s.Diagnostics[0].Code != CodeEmptyParameterName {
		t.Errorf("params %v, diagnostics %v: the unnamed query parameter is skipped with one warning", paramNames(op), s.Diagnostics)
	}
}
