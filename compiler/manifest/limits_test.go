package manifest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// adversarial is an input built to make decoding slow, with what decoding
// it must report.
type adversarial struct {
	name string
	src  string
	// want is a substring of one diagnostic's text ("" for none wanted);
	// clean says there must be no diagnostic at all.
	want  string
	clean bool
}

// adversarialInputs builds the inputs at a size set by scale: 1 for the
// regression tests (each took seconds to minutes before the decoder
// budgeted its work), smaller for the fuzz seeds.
func adversarialInputs(scale float64) []adversarial {
	n := func(x int) int { return max(2, int(float64(x)*scale)) }
	var out []adversarial
	add := func(name, want string, build func(b *strings.Builder)) {
		var b strings.Builder
		build(&b)
		out = append(out, adversarial{name: name, src: b.String(), want: want})
	}
	list := func(b *strings.Builder, count int, item string) {
		for i := 0; i < count; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(item)
		}
	}
	keys := func(b *strings.Builder, count int, format string) {
		for i := 0; i < count; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, format, i)
		}
	}
	const tooMany = "parse_error: the document expands too many aliases"

	// Billion laughs: ten lists of ten aliases to the list before.
	add("alias bomb", tooMany, func(b *strings.Builder) {
		b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(b, "a%d: &a%d [", i, i)
			list(b, 10, fmt.Sprintf("*a%d", i-1))
			b.WriteString("]\n")
		}
		b.WriteString("query_templates: *a9\n")
	})
	// One merge key listing a large anchor many times: each listing used to
	// walk every key again, outside the walk budget (about 35 s for 130 KB).
	add("merge fan-out", tooMany, func(b *strings.Builder) {
		b.WriteString("query_templates:\n  a: &a {")
		keys(b, n(1000), "k%d: 1")
		b.WriteString("}\n  b: {<<: [")
		list(b, n(1000), "*a")
		b.WriteString("]}\n")
	})
	// Merge keys merging the previous mapping twice, 40 deep.
	add("merge doubling", tooMany, func(b *strings.Builder) {
		b.WriteString("query_templates:\n  m0: &m0 {a: 1}\n")
		for i := 1; i < 40; i++ {
			fmt.Fprintf(b, "  m%d: &m%d {<<: [*m%d, *m%d], k%d: 1}\n", i, i, i-1, i-1, i)
		}
	})
	// An operation with many unknown keys, aliased by many operations: each
	// key was reported (with a suggestion search) once per operation.
	add("unknown keys through aliases", tooMany, func(b *strings.Builder) {
		b.WriteString("operations:\n  o: &o {")
		keys(b, n(200), "stat%d: 1")
		b.WriteString("}\n")
		for i := 0; i < n(2000); i++ {
			fmt.Fprintf(b, "  p%d: *o\n", i)
		}
	})
	// A mapping with many duplicate keys, aliased many times.
	add("duplicate keys through aliases", tooMany, func(b *strings.Builder) {
		b.WriteString("query_templates:\n  a: &a {")
		list(b, n(500), "k: 1")
		b.WriteString("}\n  b: [")
		list(b, n(2000), "*a")
		b.WriteString("]\n")
	})
	// A long string repeated into a JSON value by many aliases.
	add("long string through aliases", tooMany, func(b *strings.Builder) {
		b.WriteString("s: &s " + strings.Repeat("x", n(64<<10)) + "\nquery_templates: [")
		list(b, n(2000), "*s")
		b.WriteString("]\n")
	})
	// The same with a long mapping key.
	add("long key through aliases", tooMany, func(b *strings.Builder) {
		b.WriteString("s: &s\n  ? " + strings.Repeat("x", n(64<<10)) + "\n  : 1\nquery_templates: [")
		list(b, n(2000), "*s")
		b.WriteString("]\n")
	})
	// A const argument holding a large mapping, aliased by many arguments.
	add("const through aliases", tooMany, func(b *strings.Builder) {
		b.WriteString("version: &c {const: {")
		keys(b, n(1000), "k%d: 1")
		b.WriteString("}}\noperations:\n  o:\n    effect:\n      inverse:\n        operation: y\n        arguments: {")
		keys(b, n(2000), "a%d: *c")
		b.WriteString("}\n")
	})
	// Each list holds the one before: expanding the last nests deeper than
	// YAML lets a document nest (it is not walked where it is defined:
	// version takes a string).
	add("alias chain", "parse_error: the document nests more than", func(b *strings.Builder) {
		count := n(21000)
		if scale < 1 {
			count = 30
		}
		b.WriteString("version: [&a0 [1]")
		for i := 1; i <= count; i++ {
			fmt.Fprintf(b, ", &a%d [*a%d]", i, i-1)
		}
		fmt.Fprintf(b, "]\nquery_templates: *a%d\n", count)
	})
	// A value nested deep inside a JSON value: building the path of every
	// level was quadratic in the depth.
	add("deep path", "has no JSON form", func(b *strings.Builder) {
		depth := n(5000)
		b.WriteString("query_templates: " + strings.Repeat("[", depth) + ".nan" + strings.Repeat("]", depth) + "\n")
	})
	// A long operation key heads the path of every problem under it.
	add("long key in paths", "unknown key \"bogus1\"", func(b *strings.Builder) {
		b.WriteString("operations:\n  ? " + strings.Repeat("k", n(10000)) + "\n  : {")
		keys(b, n(1000), "bogus%d: 1")
		b.WriteString("}\n")
	})
	// An argument written as a mapping with many keys: the message listed
	// them all, built by repeated concatenation.
	add("argument with many keys", "more", func(b *strings.Builder) {
		b.WriteString("operations:\n  o:\n    effect:\n      inverse:\n        operation: y\n        arguments:\n          a: {")
		keys(b, n(20000), "k%d: 1")
		b.WriteString("}\n")
	})
	// Many unknown keys near the valid ones: one suggestion search each.
	add("many unknown keys", "did you mean \"idempotency\"", func(b *strings.Builder) {
		b.WriteString("operations:\n  o:\n")
		for i := 0; i < n(5000); i++ {
			fmt.Fprintf(b, "    idempotenc%d: 1\n", i)
		}
	})
	// Honest use of anchors stays far below the budget.
	var b strings.Builder
	b.WriteString("operations:\n")
	for i := 0; i < n(300); i++ {
		fmt.Fprintf(&b, "  op%d:\n    state: approved\n    effect:\n      class: reversible\n      inverse:\n        operation: undo%d\n", i, i)
		if i == 0 {
			b.WriteString("        arguments: &args {")
			keys(&b, 10, "a%d: request.a")
			b.WriteString("}\n")
		} else {
			b.WriteString("        arguments: {<<: *args, id: response.id}\n")
		}
	}
	out = append(out, adversarial{name: "honest anchors", src: b.String(), clean: true})
	return out
}

// TestAdversarialInputs checks that inputs built to make decoding slow
// cost work linear in their size: the walk stays within the alias budget,
// it walks each node a bounded number of times plus what the budget pays
// for, and the diagnostics are few and short.
func TestAdversarialInputs(t *testing.T) {
	for _, tt := range adversarialInputs(1) {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.src) > 1<<20 {
				t.Fatalf("input of %d bytes; keep them under 1 MiB", len(tt.src))
			}
			d := &decoder{file: "a.yaml"}
			_, diags := d.decode([]byte(tt.src))
			if d.expansion > d.maxExpansion+len(tt.src)/bytesPerUnit+diagnosticCost {
				t.Errorf("spent %d units of a %d budget", d.expansion, d.maxExpansion)
			}
			if limit := 4*d.nodes + d.expansion; d.steps > limit {
				t.Errorf("walked %d steps for %d nodes and %d units of expansion", d.steps, d.nodes, d.expansion)
			}
			if limit := d.nodes + d.maxExpansion/diagnosticCost + 1; len(diags) > limit {
				t.Errorf("%d diagnostics for %d nodes", len(diags), d.nodes)
			}
			found := false
			for _, x := range diags {
				if len(x.Message) > 1024 {
					t.Errorf("message of %d bytes: %.200s…", len(x.Message), x.Message)
				}
				if tt.want != "" && strings.Contains(x.String(), tt.want) {
					found = true
				}
			}
			switch {
			case tt.clean && len(diags) > 0:
				t.Errorf("diagnostics: %.5q", render(diags))
			case tt.want != "" && !found:
				t.Errorf("no diagnostic with %q in %.5q", tt.want, render(diags))
			}
		})
	}
}

// BenchmarkAdversarialInputs times each adversarial input.
func BenchmarkAdversarialInputs(b *testing.B) {
	for _, tt := range adversarialInputs(1) {
		b.Run(strings.ReplaceAll(tt.name, " ", "_"), func(b *testing.B) {
			data := []byte(tt.src)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Decode("a.yaml", data)
			}
		})
	}
}

func TestPathsAreCut(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	tests := []struct{ path, step, want string }{
		{"", "key", "key"},
		{"a", ".b", "a.b"},
		{"", long, strings.Repeat("é", 127) + "…"},
		{strings.Repeat("a", maxLabel-2), ".b", strings.Repeat("a", maxLabel-3) + "…"},
		{strings.Repeat("a", maxLabel-3) + "…", ".b", strings.Repeat("a", maxLabel-3) + "…"},
	}
	for _, tt := range tests {
		got := extend(tt.path, tt.step)
		if got != tt.want {
			t.Errorf("extend(%.20q…, %.20q) = %.20q… (%d bytes), want %d bytes", tt.path, tt.step, got, len(got), len(tt.want))
		}
		if !utf8.ValidString(got) || len(got) > maxLabel+3 {
			t.Errorf("extend(%.20q…, %.20q): %d bytes, valid UTF-8 %v", tt.path, tt.step, len(got), utf8.ValidString(got))
		}
	}

	// Deep inside a JSON value: the path is cut, the position exact.
	src := "query_templates: " + strings.Repeat("[", 3000) + ".nan" + strings.Repeat("]", 3000) + "\n"
	_, diags := Decode("d.yaml", []byte(src))
	label := "query_templates" + strings.Repeat("[0]", 3000)
	want := "d.yaml:1:3018: error manifest/type: " + label[:maxLabel-3] + "…: .nan has no JSON form"
	if d := render(diags); len(d) != 1 || d[0] != want {
		t.Errorf("diagnostics %.300q, want %.300q", d, want)
	}
}

func TestCanonicalScalarsMatchTheYAMLLibrary(t *testing.T) {
	for _, s := range []string{"0", "7", "-7", "+7", "-0", "+0", "007", "0x1F", "0o17", "1_000", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "18446744073709551615", "18446744073709551616", "true", "false",
		"True", "FALSE", "1.5", "-0.0", ".inf", "1e3"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("v: "+s), &doc); err != nil {
			t.Fatal(err)
		}
		r := doc.Content[0].Content[1]
		d := &decoder{file: "x"}
		got, ok := d.scalarAny(r, r, "v")
		var x any
		if err := r.Decode(&x); err != nil || !ok {
			continue
		}
		want := fmt.Sprint(x)
		if f, isFloat := x.(float64); isFloat && f == 0 {
			want = "0"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s: got %v, the YAML library %v", s, got, want)
		}
	}
}
