package gateway

import (
	"testing"
)

func TestFormatGrouped(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"mixed", "package p\nimport (\n\"github.com/x/y\"\nz \"net/http\"\n\"context\"\n\"example.com/a\"\n)\nvar _ = 1\n",
			"package p\n\nimport (\n\t\"context\"\n\tz \"net/http\"\n\n\t\"example.com/a\"\n\t\"github.com/x/y\"\n)\n\nvar _ = 1\n"},
		{"only standard", "package p\nimport (\n\"strings\"\n\"bytes\"\n)\n",
			"package p\n\nimport (\n\t\"bytes\"\n\t\"strings\"\n)\n"},
		{"only others", "package p\nimport (\n\"github.com/b\"\n_ \"github.com/a\"\n)\n",
			"package p\n\nimport (\n\t_ \"github.com/a\"\n\t\"github.com/b\"\n)\n"},
		{"single", "package p\nimport \"fmt\"\n", "package p\n\nimport \"fmt\"\n"},
		{"none", "package p\nfunc f(){}\n", "package p\n\nfunc f() {}\n"},
		{"a comment keeps the block", "package p\nimport (\n\"github.com/b\" // b\n\"fmt\"\n)\n",
			"package p\n\nimport (\n\t\"fmt\"\n\t\"github.com/b\" // b\n)\n"},
	}
	for _, c := range cases {
		got, err := formatGrouped([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %q, %v\nwant %q", c.name, got, err, c.want)
		}
	}
	if _, err := formatGrouped([]byte("package p\nimport (\n\"fmt\"\n")); err == nil {
		t.Error("source that does not parse formatted without an error")
	}
}
