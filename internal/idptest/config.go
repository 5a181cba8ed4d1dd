package idptest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	yaml "go.yaml.in/yaml/v3"
)

// maxConfigBytes bounds a config file: a handful of clients and users.
const maxConfigBytes = 1 << 20

// LoadOptions reads Options from a YAML or JSON file (JSON is YAML), with
// the keys of Options' yaml tags; durations are Go durations ("90s",
// "5m"). An unknown key is an error naming its line, so a misspelt setting
// does not silently fall back to a default.
func LoadOptions(path string) (Options, error) {
	f, err := os.Open(path)
	if err != nil {
		return Options{}, fmt.Errorf("idptest: config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return Options{}, fmt.Errorf("idptest: config %s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return Options{}, fmt.Errorf("idptest: config %s is larger than %d bytes", path, maxConfigBytes)
	}
	return ParseOptions(b, path)
}

// ParseOptions is LoadOptions on a file's bytes; name is for messages.
func ParseOptions(b []byte, name string) (Options, error) {
	var o Options
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil && !errors.Is(err, io.EOF) {
		return Options{}, fmt.Errorf("idptest: config %s: %w", name, err)
	}
	if err := o.validate(); err != nil {
		return Options{}, fmt.Errorf("idptest: config %s: %w", name, err)
	}
	return o, nil
}
