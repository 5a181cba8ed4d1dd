// Package compiler is the one entry point of the Anvil compiler: Compile
// turns an OpenAPI description (with its $refs) and an optional manifest
// into an AIR document and its diagnostics. The CLI (`anvil compile`), the
// spec sweep and tests all call it, so every caller gets the same document
// for the same inputs; writing the bundle (air.Files, emit/files) and
// source snapshots (compiler/sources) stay with the caller.
package compiler

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Inputs names what one compile reads.
type Inputs struct {
	// Spec is the entry document of the description: an operating-system
	// path, or a slash-separated path inside FS.
	Spec string
	// FS, when set, is the file system Spec and every file its $refs name
	// are read from (a source snapshot's files). Nil: the operating system's.
	FS fs.FS
	// Manifest is the anvil.yaml to apply; "" compiles without one.
	Manifest string
	// ManifestData, when set, is the manifest's text, decoded under the
	// name Manifest instead of reading that file (anvil init checks the
	// starting manifest it is about to write).
	ManifestData []byte
}

// Options configures Compile. The zero value compiles as `anvil compile
// <spec>` does with no flags. New settings are added as fields whose zero
// value keeps today's behaviour.
type Options struct {
	// ServiceID is the service id used when the manifest names none
	// (--service); "" derives it from the description's title.
	ServiceID string
	// HumanApproval is the --human-approval policy: "none" (or ""),
	// "unsafe" or "all" (lower.Options.HumanApproval).
	HumanApproval string
	// Endpoint, when set, replaces the description's servers with this one
	// upstream base URL (--endpoint). It must pass CheckEndpoint.
	Endpoint string
	// Base is the directory every local $ref must resolve inside
	// (--spec-base); "" is the entry document's directory. A $ref leaving it
	// is refused with openapi.CodeRefOutsideBase before anything is read.
	Base string
	// OnRead is called with every file the loader reads, once per file, with
	// the exact bytes it then parses (compiler/sources.Recorder.Record
	// builds a source snapshot from it).
	OnRead func(name string, data []byte)
	// AllMediaTypes also loads every media type of request bodies and
	// responses, not only the JSON one the gateway calls (anvil diff
	// compares them all; openapi.Options.AllMediaTypes).
	AllMediaTypes bool
	// MaxFileSize caps each file the loader reads; zero is the loader's
	// default (openapi.Options.MaxFileSize).
	MaxFileSize int64
	// NamesAsRead makes AIR name source files as they were read instead of
	// relative to the spec's directory: anvil diff reports locations as
	// the person named the specs. A document compiled so is not portable;
	// bundles are never written from one.
	NamesAsRead bool
	// OnLoaded, when set, is called once with the loaded description before
	// it is lowered (tools that check lowering against its input, or time
	// the stages).
	OnLoaded func(spec *openapi.Spec)
	// Pins are the names anvil.lock keeps for approved operations
	// (compiler/lock.Lock.Pins; lower.Pin); nil derives every name afresh.
	Pins []lower.Pin
}

// Code of an Endpoint that CheckEndpoint refuses.
const CodeInvalidEndpoint = "compile/invalid_endpoint"

// CheckEndpoint reports whether s can replace a description's servers: an
// absolute http(s) URL with a host.
func CheckEndpoint(s string) error {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an absolute http(s) URL, not %q", s)
	}
	return nil
}

// Compile loads the description in, decodes the manifest and lowers both
// into an AIR document.
//
// The document is nil when nothing can be compiled: the description cannot
// be read or is refused (its spec/* diagnostics), the manifest has an
// error, or Endpoint is invalid. Otherwise it is complete, possibly with
// error diagnostics; the caller decides whether to write it.
//
// The returned list holds, sorted, the loader's findings, the manifest's
// and lowering's, with positions naming files as they were read. The
// document records lowering's diagnostics with file paths relative to the
// spec's directory (a file outside it by its base name), as its source URI
// and each operation's sourceRef.file are, so the same inputs give the same
// bytes wherever they are compiled from.
func Compile(in Inputs, opts Options) (*air.Document, diag.List) {
	var all diag.List
	if opts.Endpoint != "" {
		if err := CheckEndpoint(opts.Endpoint); err != nil {
			all.Errorf(diag.Pos{}, CodeInvalidEndpoint, "the endpoint %v", err)
			return nil, all
		}
	}
	spec, err := openapi.Load(in.Spec, &openapi.Options{FS: in.FS, OnRead: opts.OnRead, Base: opts.Base,
		AllMediaTypes: opts.AllMediaTypes, MaxFileSize: opts.MaxFileSize})
	if err != nil {
		var f *diag.Failure
		if !errors.As(err, &f) {
			f = diag.Fail(diag.Pos{File: in.Spec}, openapi.CodeUnreadable, "%v", err)
		}
		all = append(all, f.Diagnostics...)
		all.Sort()
		return nil, all
	}
	all = append(all, spec.Diagnostics...)
	if opts.OnLoaded != nil {
		opts.OnLoaded(spec)
	}

	var man *manifest.Manifest
	if in.Manifest != "" {
		var m *manifest.Manifest
		var l diag.List
		if in.ManifestData != nil {
			m, l = manifest.Decode(in.Manifest, in.ManifestData)
		} else {
			m, l = manifest.Load(in.Manifest)
		}
		all = append(all, l...)
		if l.HasErrors() {
			all.Sort()
			return nil, all
		}
		man = m
	}

	lo := &lower.Options{ServiceID: opts.ServiceID, HumanApproval: opts.HumanApproval, Pins: opts.Pins}
	if !opts.NamesAsRead {
		lo.SourceName = portableName(in.Spec)
	}
	doc, l := lower.Lower(spec, man, lo)
	all = append(all, l...)
	all.Sort()
	if doc != nil && opts.Endpoint != "" {
		doc.Service.Servers = []air.Server{{URL: opts.Endpoint}}
	}
	return doc, all
}

// portableName names a file relative to the directory of the entry
// document spec (slash-separated), or by its base name when it lies
// outside that directory.
func portableName(spec string) func(string) string {
	base := filepath.Dir(spec)
	return func(p string) string {
		rel, err := filepath.Rel(base, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Base(p)
		}
		return filepath.ToSlash(rel)
	}
}
