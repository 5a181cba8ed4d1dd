package main

import (
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/schemas"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a starting anvil.yaml listing every operation of a description with what Anvil infers",
		ArgsUsage: "<spec>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "anvil.yaml", Usage: "the manifest to write"},
			&cli.StringFlag{Name: "service", Usage: "service id (default: derived from the description's title)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing file"},
			&cli.StringFlag{Name: "schema", Value: schemas.ManifestLocalName, Usage: "path (relative to the manifest) or URL of the manifest JSON Schema for the editor line; `anvil schema manifest` prints the schema"},
		},
		Action: func(c *cli.Context) error { return runInit(e, c) },
	}
}

func runInit(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(1, "init takes one spec file (usage: anvil init <spec> [--out anvil.yaml] [--service id] [--force])")
	}
	specPath, out := c.Args().First(), c.String("out")
	if !c.Bool("force") {
		if _, err := os.Lstat(out); err == nil {
			return fail(1, "%s already exists; pass --force to replace it", out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fail(1, "%s: %v", out, err)
		}
	}
	load, shown := specPath, specPath
	if isSpecURL(specPath) {
		shown = shownURL(specPath)
		p, cleanup, err := fetchSpec(c.Context, specPath)
		if err != nil {
			return fail(1, "%v", err)
		}
		defer cleanup()
		load = p
	}
	var spec *openapi.Spec
	in, opts := compiler.Inputs{Spec: load}, compiler.Options{ServiceID: c.String("service"), OnLoaded: func(s *openapi.Spec) { spec = s }}
	doc, ds := compiler.Compile(in, opts)
	if load != specPath {
		nameURL(ds, load, shown) // the fetched file is temporary: name the URL
	}
	if doc == nil {
		printDiagnostics(e, ds, false)
		if spec == nil {
			return fail(1, "%s cannot be read as an OpenAPI description", shown)
		}
		return fail(1, "%s cannot be compiled", shown)
	}
	// The description's own errors are shown (warnings are compile's to
	// print); the starting manifest is written all the same.
	printDiagnostics(e, ds.Errors(), false)
	so := manifest.ScaffoldOptions{SchemaRef: c.String("schema"), SpecName: filepath.Base(load)}
	so.Auth, so.AuthNote = initAuth(spec, doc)
	data := manifest.Scaffold(doc, so)

	// The scaffold must compile as written: any diagnostic it causes is a
	// bug here, reported instead of writing a file that does not work. It
	// is compiled where it will be written, so positions name it.
	in.Manifest, in.ManifestData = out, data
	opts.OnLoaded = nil
	with, wd := compiler.Compile(in, opts)
	for _, d := range wd {
		if d.Level == diag.Error && (with == nil || d.Pos.File == in.Manifest) {
			return fail(1, "internal error: the starting manifest does not compile: %s", d.String())
		}
	}
	if err := writeNew(out, data, c.Bool("force")); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}
	fmt.Fprintf(e.stdout, "Wrote %s: %d operations of %s (%s), all review_required.\n", out, len(doc.Operations), doc.Service.ID, shown)
	for _, l := range manifest.AuthSummary(doc) {
		fmt.Fprintf(e.stdout, "  auth %s\n", l)
	}
	fmt.Fprintf(e.stdout, "  next: anvil compile %s --manifest %s --out <bundle>, then anvil approve <bundle> '<glob>'\n", specPath, out)
	if ref := c.String("schema"); !isSpecURL(ref) && !filepath.IsAbs(ref) {
		local := filepath.Join(filepath.Dir(out), filepath.FromSlash(ref))
		if _, err := os.Stat(local); err != nil {
			fmt.Fprintf(e.stdout, "  editor: anvil schema manifest > %s (the manifest's first line points there)\n", local)
		}
	}
	return nil
}

// initAuth chooses the top-level auth a starting manifest writes when the
// inferred one cannot run: a description whose service or operations use
// only the OAuth2 implicit or password flow would not compile. Another
// scheme the description declares that the gateway runs (an API key, then
// HTTP basic) is written instead, with a note; with none, the flow's
// endpoints are written as an authorization code (or, for the password
// flow, client credentials) block with a note saying what to complete. It
// returns nil when the inferred auth can be written as it is.
func initAuth(spec *openapi.Spec, doc *air.Document) (*air.Auth, string) {
	bad := ""
	var flow air.Provider
	check := func(a *air.Auth) {
		if a != nil && a.Provider != nil && bad == "" && a.Provider.Grant.GatewayCannotRun() {
			bad = fmt.Sprintf("the description's scheme %q offers only the OAuth2 %s flow, which the gateway cannot run", a.Scheme, a.Provider.Grant)
			flow = *a.Provider
		}
	}
	check(&doc.Service.Auth)
	for i := range doc.Operations {
		check(doc.Operations[i].Auth)
	}
	if bad == "" {
		return nil, ""
	}
	names := make([]string, 0, len(spec.SecuritySchemes))
	for n := range spec.SecuritySchemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, want := range []string{"apikey", "basic"} {
		for _, n := range names {
			ss := spec.SecuritySchemes[n]
			switch {
			case want == "apikey" && strings.EqualFold(ss.Type, "apiKey") && ss.ParamName != "":
				return &air.Auth{Type: air.AuthAPIKey, Scheme: n, Carrier: &air.Carrier{In: air.Location(ss.In), Name: ss.ParamName}},
					bad + fmt.Sprintf("; its API key scheme %q is used instead. To use OAuth, replace this block with {type: oauth2_authorization_code, provider: {authorization_endpoint, token_endpoint}} (docs/manifest.md).", n)
			case want == "basic" && strings.EqualFold(ss.Type, "http") && strings.EqualFold(ss.Scheme, "basic"):
				return &air.Auth{Type: air.AuthBasic, Scheme: n, Carrier: &air.Carrier{In: air.InHeader, Name: "Authorization", Scheme: "Basic"}},
					bad + fmt.Sprintf("; its HTTP basic scheme %q is used instead (docs/manifest.md).", n)
			}
		}
	}
	if flow.Grant == air.GrantPassword {
		return &air.Auth{Type: air.AuthOAuth2ClientCredentials, Provider: &air.Provider{TokenEndpoint: flow.TokenEndpoint}},
			bad + ", and it declares no other. Check that the token endpoint below issues client credentials tokens, or replace the block with the auth the API takes (docs/manifest.md)."
	}
	return &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Provider: &air.Provider{AuthorizationEndpoint: flow.AuthorizationEndpoint}},
		bad + ", and it declares no other. Add the provider's token_endpoint below (an authorization code flow), or replace the block with the auth the API takes (docs/manifest.md)."
}

// writeNew writes the manifest. With force it replaces path atomically
// (files.Tree.WriteFiles); without, it creates path exclusively, so an existing
// file is never replaced, even one created meanwhile, and removes what it
// wrote if writing fails.
func writeNew(path string, data []byte, force bool) error {
	if force {
		return files.Tree{filepath.Base(path): {Data: data}}.WriteFiles(filepath.Dir(path))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; pass --force to replace it", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
