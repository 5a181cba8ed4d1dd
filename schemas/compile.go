package schemas

import (
	"bytes"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileManifest compiles the manifest schema (draft 2020-12, as its
// $schema says) for validating manifests converted to JSON.
func CompileManifest() (*jsonschema.Schema, error) { return compile(Manifest, ManifestID) }

// CompilePolicy compiles the identity policy schema.
func CompilePolicy() (*jsonschema.Schema, error) { return compile(Policy, PolicyID) }

func compile(schema []byte, id string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		return nil, err
	}
	return c.Compile(id)
}
