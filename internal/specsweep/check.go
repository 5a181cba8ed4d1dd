package specsweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Outcomes of one file.
const (
	// OutcomeOK: the description compiled (it may still have error
	// diagnostics or failed checks; see Result.Errors and Result.Problems).
	OutcomeOK = "ok"
	// OutcomeFatal: compiler.Compile refused the description (Result.Fatal
	// holds the codes of its errors).
	OutcomeFatal = "fatal"
	// OutcomePanic: the pipeline panicked (recovered; Result.Panic holds the
	// value and stack).
	OutcomePanic = "panic"
	// OutcomeTimeout: the file took longer than the per-file timeout; its
	// worker was killed.
	OutcomeTimeout = "timeout"
	// OutcomeCrash: the worker process died on the file (a fatal runtime
	// error such as a stack overflow, or the memory watchdog).
	OutcomeCrash = "crash"
)

// Checks a compiled file is held to (Problem.Check).
const (
	CheckRender        = "render"             // air.Files failed
	CheckUniqueID      = "unique_id"          // two operations share an AIR id
	CheckUniqueTool    = "unique_tool"        // two operations share a tool name
	CheckUniqueCLI     = "unique_cli"         // two operations share a CLI command
	CheckToolPattern   = "tool_pattern"       // a tool name outside ^[A-Za-z0-9_.-]{1,128}$
	CheckServedLength  = "served_name_length" // <connector>__<tool> longer than 128
	CheckFileName      = "schema_file_name"   // schemas/<id>.schema.json is not a portable file name
	CheckInputSchema   = "input_schema"       // an input schema does not compile (draft 2020-12)
	CheckAIRSchema     = "air_schema"         // air.json does not validate against runtime/air/air.schema.json
	CheckDeterministic = "deterministic"      // a second compile differs
	CheckOperations    = "operation_count"    // the document and the spec disagree on the operation count
	CheckCLI           = "cli"                // the anvil binary misbehaved (see CLIResult)
)

// Problem is one failed check.
type Problem struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Result is what sweeping one file found.
type Result struct {
	File       string         `json:"file"`
	Outcome    string         `json:"outcome"`
	Kind       string         `json:"kind,omitempty"`
	Operations int            `json:"operations,omitempty"`
	Fatal      []string       `json:"fatal,omitempty"`         // fatal codes, sorted and unique
	FatalMsgs  []string       `json:"fatalMessages,omitempty"` // the first few fatal diagnostics
	Errors     map[string]int `json:"errors,omitempty"`        // error diagnostics of a compiled file, by code
	ErrorMsgs  []string       `json:"errorMessages,omitempty"` // the first few of them
	Warnings   map[string]int `json:"warnings,omitempty"`      // warnings, by code
	Problems   []Problem      `json:"problems,omitempty"`
	Panic      string         `json:"panic,omitempty"`
	BundleHash string         `json:"bundleHash,omitempty"` // of the in-process bundle (air.HashFiles)
	Millis     int64          `json:"ms"`
	LoadMillis int64          `json:"loadMs,omitempty"`
	PeakRSSMiB int64          `json:"peakRssMiB,omitempty"`
	CLI        *CLIResult     `json:"cli,omitempty"`
}

// CheckOptions configures CheckFile.
type CheckOptions struct {
	// ServiceID is passed to compiler.Options (--service); empty derives
	// the service id from the description's title.
	ServiceID string
	// ConnectorLen is the length of the connector id assumed when checking
	// that a served name <connector>__<tool> stays within 128 characters.
	ConnectorLen int
	// SkipDeterminism leaves out the second compile.
	SkipDeterminism bool
}

const (
	maxProblemsPerCheck = 3
	maxMessages         = 5
	maxDetail           = 400
)

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// CheckFile compiles one file as `anvil compile` does (compiler.Compile
// with no manifest, then air.Files) and checks the result. A panic anywhere
// is recovered into OutcomePanic.
func CheckFile(path string, opts CheckOptions) (res Result) {
	start := time.Now()
	res = Result{File: path}
	defer func() {
		if v := recover(); v != nil {
			res.Outcome = OutcomePanic
			res.Panic = fmt.Sprintf("%v\n%s", v, trimStack(debug.Stack()))
		}
		res.Millis = time.Since(start).Milliseconds()
	}()
	if opts.ConnectorLen <= 0 {
		opts.ConnectorLen = 32
	}

	first := compileOnce(path, opts.ServiceID)
	res.LoadMillis = first.loadMillis
	if first.doc == nil {
		res.Outcome = OutcomeFatal
		codes := map[string]bool{}
		for _, d := range first.diags {
			if d.Level != diag.Error {
				continue
			}
			codes[d.Code] = true
			if len(res.FatalMsgs) < maxMessages {
				res.FatalMsgs = append(res.FatalMsgs, clip(d.String()))
			}
		}
		res.Fatal = sortedSet(codes)
		return res
	}
	res.Outcome = OutcomeOK
	res.Kind = string(first.doc.Service.Source.Kind)
	res.Operations = len(first.doc.Operations)
	for _, d := range first.diags {
		switch d.Level {
		case diag.Error:
			if res.Errors == nil {
				res.Errors = map[string]int{}
			}
			res.Errors[d.Code]++
			if len(res.ErrorMsgs) < maxMessages {
				res.ErrorMsgs = append(res.ErrorMsgs, clip(d.String()))
			}
		case diag.Warning:
			if res.Warnings == nil {
				res.Warnings = map[string]int{}
			}
			res.Warnings[d.Code]++
		}
	}
	var probs problems
	if len(first.doc.Operations) != first.specOps {
		probs.add(CheckOperations, "%d AIR operations for %d in the description", len(first.doc.Operations), first.specOps)
	}
	if first.renderErr != nil {
		probs.add(CheckRender, "%v", first.renderErr)
	}
	checkNames(first.doc, opts.ConnectorLen, &probs)
	checkInputSchemas(first.doc, &probs)
	if b, ok := first.files[air.DocumentFile]; ok {
		if err := validateAIRDoc(first.doc, b); err != nil {
			probs.add(CheckAIRSchema, "%s", err)
		}
	}
	if first.renderErr == nil {
		res.BundleHash = air.HashFiles(first.files)
	}
	if !opts.SkipDeterminism && first.renderErr == nil {
		sums := digests(first.files)
		first = compiled{} // the largest renders take gigabytes: keep only their digests
		second := compileOnce(path, opts.ServiceID)
		switch {
		case second.doc == nil:
			probs.add(CheckDeterministic, "the second compile failed: %s", (&diag.Failure{Diagnostics: second.diags}).Error())
		case second.renderErr != nil:
			probs.add(CheckDeterministic, "the second render failed: %v", second.renderErr)
		default:
			if diff := diffFiles(sums, digests(second.files)); diff != "" {
				probs.add(CheckDeterministic, "%s", diff)
			}
		}
	}
	res.Problems = probs.list
	return res
}

// compiled is one run of the pipeline.
type compiled struct {
	doc        *air.Document
	diags      diag.List
	files      map[string][]byte
	renderErr  error
	loadMillis int64
	specOps    int // the operations of the loaded description
}

// compileOnce is `anvil compile <file> [--service id]` without writing:
// compiler.Compile, as the CLI calls it, and the rendered bundle. A nil doc
// means the description was refused (c.diags holds why).
func compileOnce(path, service string) compiled {
	var c compiled
	t := time.Now()
	doc, diags := compiler.Compile(compiler.Inputs{Spec: path}, compiler.Options{
		ServiceID: service,
		OnLoaded: func(spec *openapi.Spec) {
			c.loadMillis = time.Since(t).Milliseconds()
			c.specOps = len(spec.Operations)
		},
	})
	c.doc, c.diags = doc, diags
	if doc != nil {
		c.files, c.renderErr = air.Files(doc)
	}
	return c
}

type problems struct {
	list  []Problem
	count map[string]int
}

func (p *problems) add(check, format string, args ...any) {
	if p.count == nil {
		p.count = map[string]int{}
	}
	p.count[check]++
	if p.count[check] > maxProblemsPerCheck {
		if p.count[check] == maxProblemsPerCheck+1 {
			p.list = append(p.list, Problem{Check: check, Detail: "(more of this check left out)"})
		}
		return
	}
	p.list = append(p.list, Problem{Check: check, Detail: clip(fmt.Sprintf(format, args...))})
}

// checkNames: ids, tool names and CLI commands are unique; tool names match
// the REST route's pattern; the served name fits; the schema file name fits.
func checkNames(doc *air.Document, connectorLen int, probs *problems) {
	ids, tools, clis := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		where := op.SourceRef.Method + " " + op.SourceRef.Path
		if j, ok := ids[op.ID]; ok {
			probs.add(CheckUniqueID, "id %q shared by %s and %s", op.ID, opWhere(doc, j), where)
		} else {
			ids[op.ID] = i
		}
		if j, ok := tools[op.MCP.ToolName]; ok {
			probs.add(CheckUniqueTool, "tool %q shared by %s and %s", op.MCP.ToolName, opWhere(doc, j), where)
		} else {
			tools[op.MCP.ToolName] = i
		}
		if j, ok := clis[op.CLI.Command]; ok {
			probs.add(CheckUniqueCLI, "CLI command %q shared by %s and %s", op.CLI.Command, opWhere(doc, j), where)
		} else {
			clis[op.CLI.Command] = i
		}
		if !toolNamePattern.MatchString(op.MCP.ToolName) {
			probs.add(CheckToolPattern, "tool %q (%s) does not match %s", op.MCP.ToolName, where, toolNamePattern)
		}
		if n := connectorLen + 2 + len(op.MCP.ToolName); n > 128 {
			probs.add(CheckServedLength, "served name of tool %q (%s) is %d characters with a %d-character connector", op.MCP.ToolName, where, n, connectorLen)
		}
		name := op.ID + ".schema.json"
		if len(name) > 255 || strings.ContainsAny(name, "/\\\x00") {
			probs.add(CheckFileName, "schema file name %q (%s) is not a portable file name", name, where)
		}
	}
}

func opWhere(doc *air.Document, i int) string {
	op := &doc.Operations[i]
	return op.SourceRef.Method + " " + op.SourceRef.Path
}

// checkInputSchemas compiles every operation's published input schema as the
// gateway does (draft 2020-12).
func checkInputSchemas(doc *air.Document, probs *problems) {
	if len(doc.Operations) > bigDocument {
		checkInputSchemasTogether(doc, probs)
		return
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Input.Schema == nil {
			probs.add(CheckInputSchema, "%s has no input schema", op.ID)
			continue
		}
		if err := compileSchema(op.Input.Schema); err != nil {
			probs.add(CheckInputSchema, "%s: %v", op.ID, err)
		}
	}
}

// bigDocument is the operation count above which input schemas are
// compiled together (each one's $defs is a subset of the document's
// schemas, and compiling thousands of copies would take minutes).
const bigDocument = 1000

// checkInputSchemasTogether compiles every input schema (without its $defs)
// as a property of one schema whose $defs are the document's named schemas,
// so that each named schema is compiled once.
func checkInputSchemasTogether(doc *air.Document, probs *problems) {
	all := &air.Schema{Defs: doc.Schemas, Properties: map[string]*air.Schema{}}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Input.Schema == nil {
			probs.add(CheckInputSchema, "%s has no input schema", op.ID)
			continue
		}
		c := *op.Input.Schema
		for name := range c.Defs {
			if doc.Schemas[name] == nil {
				probs.add(CheckInputSchema, "%s: $defs/%s is not among the document's schemas", op.ID, name)
			}
		}
		c.Defs = nil
		all.Properties[op.ID] = &c
	}
	if err := compileSchema(all); err != nil {
		probs.add(CheckInputSchema, "(input schemas compiled together) %v", err)
	}
}

func compileSchema(s *air.Schema) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("anvil:///tool.json", v); err != nil {
		return err
	}
	_, err = c.Compile("anvil:///tool.json")
	return err
}

var (
	airSchemaOnce sync.Once
	airSchema     *jsonschema.Schema
	airSchemaErr  error
)

// bigAIR is the air.json size above which validateAIRDoc validates the
// document in parts (a whole one would take many times its size in memory).
const bigAIR = 64 << 20

// validateAIRDoc validates air.json (b, the rendering of doc) against
// runtime/air's JSON Schema: whole, or for a big one, the document without
// its operations and then each operation against #/$defs/operation.
func validateAIRDoc(doc *air.Document, b []byte) error {
	if len(b) <= bigAIR {
		return validateAIR(b)
	}
	head := *doc
	head.Operations = []air.Operation{}
	hb, err := air.Marshal(&head)
	if err != nil {
		return err
	}
	if err := validateAIR(hb); err != nil {
		return err
	}
	opSchema, err := airSubschema("#/$defs/operation")
	if err != nil {
		return err
	}
	for i := range doc.Operations {
		ob, err := air.Marshal(&doc.Operations[i])
		if err != nil {
			return err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(ob))
		if err != nil {
			return err
		}
		if err := opSchema.Validate(v); err != nil {
			return fmt.Errorf("operations[%d]: %w", i, err)
		}
	}
	return nil
}

var (
	subMu      sync.Mutex
	subSchemas = map[string]*jsonschema.Schema{}
)

// airSubschema compiles a part of the AIR schema (a JSON pointer fragment).
func airSubschema(frag string) (*jsonschema.Schema, error) {
	subMu.Lock()
	defer subMu.Unlock()
	if s := subSchemas[frag]; s != nil {
		return s, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(air.JSONSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("air.schema.json", v); err != nil {
		return nil, err
	}
	s, err := c.Compile("air.schema.json" + frag)
	if err != nil {
		return nil, err
	}
	subSchemas[frag] = s
	return s, nil
}

// validateAIR validates an air.json against runtime/air's JSON Schema.
func validateAIR(b []byte) error {
	airSchemaOnce.Do(func() {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(air.JSONSchema))
		if err != nil {
			airSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("air.schema.json", v); err != nil {
			airSchemaErr = err
			return
		}
		airSchema, airSchemaErr = c.Compile("air.schema.json")
	})
	if airSchemaErr != nil {
		return fmt.Errorf("compiling the AIR schema: %w", airSchemaErr)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return airSchema.Validate(v)
}

// digests maps each rendered file to its SHA-256.
func digests(files map[string][]byte) map[string][32]byte {
	out := make(map[string][32]byte, len(files))
	for n, b := range files {
		out[n] = sha256.Sum256(b)
	}
	return out
}

// diffFiles describes how two renders (file digests) differ, or returns "".
func diffFiles(a, b map[string][32]byte) string {
	var out []string
	for _, n := range sortedKeys(a) {
		bb, ok := b[n]
		switch {
		case !ok:
			out = append(out, n+" only in the first")
		case a[n] != bb:
			out = append(out, n+" differs")
		}
	}
	for _, n := range sortedKeys(b) {
		if _, ok := a[n]; !ok {
			out = append(out, n+" only in the second")
		}
	}
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("and %d more", len(out)-5))
	}
	return strings.Join(out, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedSet(m map[string]bool) []string { return sortedKeys(m) }

func clip(s string) string {
	if len(s) > maxDetail {
		return s[:maxDetail] + "…"
	}
	return s
}

// trimStack keeps the first 40 lines of a stack trace.
func trimStack(b []byte) string {
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[:40]
	}
	return strings.Join(lines, "\n")
}

// Bundle returns the files of the bundle the sweep compiles for the
// description at path (nil when it is refused), with the diagnostics: the
// bytes `anvil compile <path> --service <service>` writes, since both go
// through compiler.Compile.
func Bundle(path, service string) (map[string][]byte, diag.List, error) {
	c := compileOnce(path, service)
	return c.files, c.diags, c.renderErr
}
