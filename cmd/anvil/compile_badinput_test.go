package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const miniSpec = `openapi: 3.0.3
info: {title: Mini, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      responses: {"200": {description: ok}}
`

// TestCompileBadInput: every bad spec or manifest gives exit 1, a coded
// diagnostic naming the problem, no panic, and no bundle at all.
func TestCompileBadInput(t *testing.T) {
	cases := []struct {
		name     string
		spec     string // spec contents ("": the file is missing)
		specName string // default openapi.yaml
		extra    map[string]string
		manifest string
		args     []string
		code     string // expected diagnostic code (or message part)
	}{
		{name: "missing spec file", code: "spec/unreadable"},
		{name: "empty spec", spec: " \n", code: "spec/empty"},
		{name: "truncated yaml", spec: "openapi: 3.0.3\ninfo: {title: x, version: \"1\"\npaths:\n  /a:\n    get: [", code: "spec/invalid_yaml"},
		{name: "invalid json", spec: `{"openapi": "3.0.3", "info": {`, specName: "openapi.json", code: "spec/invalid_json"},
		{name: "top level array", spec: "- 1\n- 2\n", code: "spec/not_an_object"},
		{name: "no version", spec: "info: {title: x, version: \"1\"}\npaths: {}\n", code: "spec/missing_version"},
		{name: "openapi 4", spec: strings.Replace(miniSpec, "3.0.3", "4.0.0", 1), code: "spec/unsupported_version"},
		{name: "swagger 1.2", spec: "swagger: \"1.2\"\ninfo: {title: x, version: \"1\"}\npaths: {}\n", code: "spec/unsupported_version"},
		{name: "no paths", spec: "openapi: 3.0.3\ninfo: {title: x, version: \"1\"}\n", code: "spec/no_paths"},
		{name: "empty paths", spec: "openapi: 3.0.3\ninfo: {title: x, version: \"1\"}\npaths: {}\n", code: "spec/no_operations"},
		{name: "dangling local ref", spec: strings.Replace(miniSpec, `responses: {"200": {description: ok}}`,
			"parameters: [{$ref: '#/components/parameters/nope'}]\n      responses: {\"200\": {description: ok}}", 1), code: "spec/dangling_ref"},
		{name: "dangling file ref", spec: strings.Replace(miniSpec, `responses: {"200": {description: ok}}`,
			"responses: {\"200\": {$ref: 'other.yaml#/Ok'}}", 1), code: "spec/dangling_ref"},
		{name: "cyclic parameter refs", spec: strings.Replace(miniSpec, `responses: {"200": {description: ok}}`,
			"parameters: [{$ref: '#/components/parameters/a'}]\n      responses: {\"200\": {description: ok}}", 1) +
			"components:\n  parameters:\n    a: {$ref: '#/components/parameters/b'}\n    b: {$ref: '#/components/parameters/a'}\n", code: "spec/ref_cycle"},
		{name: "remote ref", spec: strings.Replace(miniSpec, `responses: {"200": {description: ok}}`,
			"responses: {\"200\": {$ref: 'https://example.com/r.yaml#/Ok'}}", 1), code: "spec/remote_ref"},
		{name: "duplicate operationId", spec: miniSpec + "  /other:\n    get:\n      operationId: listThings\n      responses: {\"200\": {description: ok}}\n", code: "spec/duplicate_operation_id"},
		{name: "binary garbage", spec: "\x00\x01\x02\xff\xfe openapi", code: "spec/"},
		{name: "paths not an object", spec: "openapi: 3.0.3\ninfo: {title: x, version: \"1\"}\npaths: [1, 2]\n", code: "spec/"},
		{name: "parameters not a list", spec: strings.Replace(miniSpec, `responses: {"200": {description: ok}}`,
			"parameters: {a: 1}\n      responses: {\"200\": {description: ok}}", 1), code: "spec/"},
		{name: "unknown manifest key", spec: miniSpec, manifest: "service: {name: mini}\nopertions: {}\n", code: "manifest/unknown_key"},
		{name: "unknown key inside effect", spec: miniSpec, manifest: "service: {name: mini}\noperations:\n  listThings:\n    effect: {class: read, undo: {}}\n", code: "manifest/unknown_key"},
		{name: "wrong value type", spec: miniSpec, manifest: "service: {name: mini}\noperations:\n  listThings: {reversible: \"yes\"}\n", code: "manifest/type"},
		{name: "operations as a list", spec: miniSpec, manifest: "service: {name: mini}\noperations: [listThings]\n", code: "manifest/type"},
		{name: "invalid state", spec: miniSpec, manifest: "service: {name: mini}\noperations:\n  listThings: {state: shipped}\n", code: "manifest/invalid_value"},
		{name: "max attempts out of range", spec: miniSpec, manifest: "service: {name: mini}\noperations:\n  listThings: {retries: {max_attempts: 9}}\n", code: "manifest/invalid_value"},
		{name: "truncated manifest", spec: miniSpec, manifest: "service: {name: mini\noperations:\n", code: "manifest/parse_error"},
		{name: "duplicate manifest key", spec: miniSpec, manifest: "service: {name: mini}\nservice: {name: other}\n", code: "manifest/duplicate_key"},
		{name: "missing manifest file", spec: miniSpec, manifest: "\x00missing", code: "manifest/read_error"},
		{name: "bad human approval", spec: miniSpec, args: []string{"--human-approval", "some"}, code: "--human-approval"},
		{name: "bad format", spec: miniSpec, args: []string{"--format", "xml"}, code: "--format"},
	}
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			name := tc.specName
			if name == "" {
				name = "openapi.yaml"
			}
			spec := filepath.Join(dir, name)
			if tc.spec != "" {
				if err := os.WriteFile(spec, []byte(tc.spec), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for n, b := range tc.extra {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, "out", "mini")
			args := []string{"compile", spec, "--out", out, "--service", "mini"}
			switch {
			case tc.manifest == "\x00missing":
				args = append(args, "--manifest", filepath.Join(dir, "nope.yaml"))
			case tc.manifest != "":
				m := filepath.Join(dir, "anvil.yaml")
				if err := os.WriteFile(m, []byte(tc.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--manifest", m)
			}
			args = append(args, tc.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.code) {
				t.Errorf("stderr lacks %q:\n%s", tc.code, stderr)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
				t.Errorf("stderr shows a crash:\n%s", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed compile left output at %s", out)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) > 0 {
				t.Errorf("a failed compile left %d entries next to the bundle (temporary directories?)", len(entries))
			}
		})
	}
}

// TestCompileErrorsStillWriteTheBundle: effect/* errors exit 1 but the bundle
// is written, with the operation downgraded.
func TestCompileErrorsStillWriteTheBundle(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	os.WriteFile(spec, []byte(miniSpec+"  /things/{id}:\n    delete:\n      operationId: deleteThing\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      responses: {\"204\": {description: gone}}\n"), 0o644)
	man := filepath.Join(dir, "anvil.yaml")
	os.WriteFile(man, []byte("service: {name: mini}\noperations:\n  deleteThing:\n    state: approved\n    effect: {class: reversible}\n"), 0o644)
	out := filepath.Join(dir, "mini")
	code, stdout, stderr := runCLI(t, "", "compile", spec, "--manifest", man, "--out", out)
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "error effect/reversible_without_inverse") {
		t.Errorf("stderr: %s", stderr)
	}
	if !strings.Contains(stderr, "anvil.yaml:") {
		t.Errorf("diagnostic has no manifest position: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "air.json")); err != nil {
		t.Errorf("bundle not written: %v", err)
	}
	code, stdout, _ = runCLI(t, "", "compile", spec, "--manifest", man, "--out", out, "--format", "json")
	if code != 1 || !strings.Contains(stdout, `"code": "effect/reversible_without_inverse"`) {
		t.Errorf("--format json: exit %d\n%s", code, stdout)
	}
}

// TestApproveRefusesBlocked: a blocked operation stays blocked.
func TestApproveRefusesBlocked(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	os.WriteFile(spec, []byte(miniSpec), 0o644)
	man := filepath.Join(dir, "anvil.yaml")
	os.WriteFile(man, []byte("service: {name: mini}\noperations:\n  listThings: {state: blocked}\n"), 0o644)
	out := filepath.Join(dir, "mini")
	if code, _, stderr := runCLI(t, "", "compile", spec, "--manifest", man, "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := runCLI(t, "", "approve", out, "mini.things.list")
	if code == 0 || !strings.Contains(stderr, "remain blocked") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
