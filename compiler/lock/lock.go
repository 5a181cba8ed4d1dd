// Package lock keeps approvals across recompiles. `anvil approve` records
// each approved operation in anvil.lock beside the manifest, with a
// fingerprint of its contract (diff.Contract: method, path, inputs, outputs,
// auth, effect); `anvil compile` applies the lock: an approval whose
// fingerprint still matches the freshly compiled operation approves it
// again, and one whose contract changed leaves the operation in review with
// a warning that names what changed (the change kinds of `anvil diff`).
//
// The lock stores each approved contract, not only its hash, so it can say
// what changed without the old spec. Documentation (titles, descriptions,
// examples) is not part of it: rewording does not revoke an approval. Its bytes are canonical JSON (entries
// sorted by operation id, maps by key), so it diffs and merges well in git.
// Since anvil.lock/v2 the named schemas the contracts reach are stored once
// for the whole lock, not in every contract (shared.go); since v3 each entry
// also records the names the operation was approved under (Names), which
// compile gives back to it (Pins, lower.Pin). v1 and v2 are still read.
package lock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/runtime/air"
)

// FileName is the lock's name beside the manifest.
const FileName = "anvil.lock"

// Schema is the lock format's version string, the one Marshal writes.
// v3 adds each entry's names (Entry.Names) to v2, which stores each named
// schema the approvals reach once, in "schemas", and each entry's contract
// without them (shared.go). Fingerprints are the same in every version.
const Schema = "anvil.lock/v3"

// SchemaV2 is the version v3 replaced, still read: its entries have no
// names, so only their AIR ids are pinned (Pins). The next approve
// rewrites it as v3.
const SchemaV2 = "anvil.lock/v2"

// SchemaV1 is the version v2 replaced, still read: each contract carried
// every named schema it reaches, so a lock repeated each once per
// operation (Microsoft Graph beta: 1.64 GB). The next approve rewrites it
// as v2; fingerprints are the same in both.
const SchemaV1 = "anvil.lock/v1"

// maxSize bounds the lock file read (it is an input like the manifest).
// A v2 lock of every operation of Microsoft Graph beta, the largest
// description measured (22,361 operations), takes 49 MB (45 MB of entries,
// 4 MB of shared schemas), and one of a 100,000-operation synthetic API
// about 72 MB (715 bytes an operation); 256 MB leaves room for several
// times either while keeping the read, and the memory it decodes into,
// bounded. (v1 repeated the named schemas per operation: 1.64 GB for Graph.)
const maxSize = 256 << 20

// Diagnostic codes.
const (
	CodeChanged = "lock/contract_changed"  // warning: an approval no longer matches
	CodeMissing = "lock/operation_missing" // warning: an approval names no operation
	CodeBlocked = "lock/operation_blocked" // info: the manifest blocks a locked operation
)

// Lock is anvil.lock.
type Lock struct {
	Schema    string  `json:"schema"`
	Approvals []Entry `json:"approvals"`
	// Schemas (v2) holds, each once and without documentation, the named
	// schemas the approvals' contracts reach.
	Schemas map[string]*air.Schema `json:"schemas,omitempty"`
}

// Entry is one approved operation.
type Entry struct {
	Operation string `json:"operation"` // the AIR id
	Method    string `json:"method"`
	Path      string `json:"path"`
	// Names (v3) are the other names the operation was approved under;
	// nil in a v1 or v2 lock.
	Names       *Names `json:"names,omitempty"`
	Fingerprint string `json:"fingerprint"` // "sha256:<hex>" of the canonical contract
	// Contract is what was approved: self-contained (diff.Contract.Closure)
	// in a v1 lock, and in a v2 lock when it carries "defs"; else the
	// named schemas it reaches are left out, found in the lock's Schemas
	// (table). An entry Record makes leaves it nil and keeps op instead:
	// its contract is encoded from the document when the lock is written.
	Contract *diff.Contract `json:"contract"`

	enc *encoder
	op  *air.Operation
	// table is the v2 lock's Schemas when Contract leaves them out.
	table map[string]*air.Schema
}

// Names are the names of an approved operation besides its AIR id, kept
// across recompiles (Pins) while its method, path and operationId stay.
type Names struct {
	// OperationID is the spec's operationId ("" when it has none).
	OperationID   string `json:"operationId"`
	CanonicalName string `json:"canonicalName"`
	Tool          string `json:"tool"`
	CLI           string `json:"cli"`
}

// namesOf are an operation's names as a v3 entry records them.
func namesOf(op *air.Operation) *Names {
	return &Names{OperationID: op.SourceRef.OperationID, CanonicalName: op.CanonicalName, Tool: op.MCP.ToolName, CLI: op.CLI.Command}
}

// Pins are the names the lock keeps, in entry order, for lowering to give
// back to the operations (lower.Options.Pins): every entry pins its AIR id
// by method and path; a v3 entry also its canonical name, tool name and CLI
// command, while the operationId is the one recorded.
func (l *Lock) Pins() []lower.Pin {
	pins := make([]lower.Pin, 0, len(l.Approvals))
	for _, e := range l.Approvals {
		p := lower.Pin{Method: e.Method, Path: e.Path, ID: e.Operation}
		if n := e.Names; n != nil {
			p.OperationID, p.CanonicalName, p.Tool, p.CLI = n.OperationID, n.CanonicalName, n.Tool, n.CLI
		}
		pins = append(pins, p)
	}
	return pins
}

// contract is the entry's self-contained contract, built from the
// document for an entry Record made and from the lock's schemas for a v2
// entry that leaves them out.
func (e Entry) contract() *diff.Contract {
	if e.Contract == nil && e.op != nil {
		return canonical(e.enc.doc, e.op)
	}
	if e.table != nil {
		return restore(e.Contract, e.table)
	}
	return e.Contract
}

// PathFor is the lock beside a manifest.
func PathFor(manifest string) string { return filepath.Join(filepath.Dir(manifest), FileName) }

// Load reads a lock; a missing file is an empty lock.
func Load(path string) (*Lock, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Schema: Schema}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var l Lock
	dec := json.NewDecoder(&limited{f: f, left: maxSize})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s is not a valid %s: %v", path, FileName, err)
	}
	switch l.Schema {
	case Schema:
	case SchemaV1, SchemaV2:
		if l.Schema == SchemaV1 && l.Schemas != nil {
			return nil, fmt.Errorf("%s is not a valid %s: %s has no \"schemas\"", path, FileName, SchemaV1)
		}
		for _, e := range l.Approvals {
			if e.Names != nil {
				return nil, fmt.Errorf("%s is not a valid %s: %s entries have no \"names\"", path, FileName, l.Schema)
			}
		}
	default:
		return nil, fmt.Errorf("%s has schema %q; this anvil reads %q, %q and %q", path, l.Schema, Schema, SchemaV2, SchemaV1)
	}
	if err := l.verify(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &l, nil
}

// limited reads at most left bytes and then fails, so an oversized lock is
// an error rather than a truncated document.
type limited struct {
	f    *os.File
	left int64
}

func (r *limited) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, fmt.Errorf("larger than %d bytes", maxSize)
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	return n, err
}

// Fingerprint is the sha256 of the contract's canonical JSON.
func Fingerprint(c *diff.Contract) string {
	b, err := air.MarshalCompact(c)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Record adds or replaces the entries of the operations ids of doc. It
// fingerprints each contract and keeps the operation, not the contract:
// the contracts of a large API run to gigabytes (see encoder).
// It stops with ctx's error when ctx ends.
func (l *Lock) Record(ctx context.Context, doc *air.Document, ids []string) error {
	enc := newEncoder(doc)
	ops := operationsByID(doc)
	at := make(map[string]int, len(l.Approvals))
	for i, e := range l.Approvals {
		at[e.Operation] = i
	}
	for n, id := range ids {
		if n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		op := ops[id]
		if op == nil {
			return fmt.Errorf("no operation %q", id)
		}
		c, err := enc.contract(op)
		if err != nil {
			return err
		}
		e := Entry{Operation: id, Method: op.SourceRef.Method, Path: op.SourceRef.Path, Names: namesOf(op), Fingerprint: fingerprintOf(c), enc: enc, op: op}
		if i, ok := at[id]; ok {
			l.Approvals[i] = e
		} else {
			at[id] = len(l.Approvals)
			l.Approvals = append(l.Approvals, e)
		}
	}
	slices.SortFunc(l.Approvals, func(a, b Entry) int { return strings.Compare(a.Operation, b.Operation) })
	return nil
}

// operationsByID indexes doc's operations by AIR id; the first of two
// with one id wins, as doc.Operation finds it.
func operationsByID(doc *air.Document) map[string]*air.Operation {
	ops := make(map[string]*air.Operation, len(doc.Operations))
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if _, dup := ops[op.ID]; !dup {
			ops[op.ID] = op
		}
	}
	return ops
}

// Marshal returns the lock's canonical bytes (WriteFile streams them).
func (l *Lock) Marshal() ([]byte, error) {
	var b bytes.Buffer
	if err := l.write(context.Background(), &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Apply approves the operations of doc whose locked contract still matches
// and returns a warning for each one that changed or vanished. It never
// un-approves: an operation the manifest approves stays approved, and a
// blocked one stays blocked. lockPath positions the diagnostics.
func (l *Lock) Apply(doc *air.Document, lockPath string) diag.List {
	var out diag.List
	pos := diag.Pos{File: filepath.ToSlash(lockPath)}
	ops := operationsByID(doc)
	enc := newEncoder(doc)
	for _, e := range l.Approvals {
		op := ops[e.Operation]
		if op == nil {
			out.Warnf(pos, CodeMissing, "%s (%s %s) is approved in %s but the compiled service has no such operation; its approval is not applied",
				e.Operation, e.Method, e.Path, FileName)
			continue
		}
		if op.State == air.StateBlocked {
			out.Infof(pos, CodeBlocked, "%s is approved in %s but the manifest blocks it", e.Operation, FileName)
			continue
		}
		c, err := enc.contract(op)
		if err == nil && fingerprintOf(c) == e.Fingerprint {
			op.State = air.StateApproved
			continue
		}
		var what []string
		for _, f := range diff.CompareContracts(e.contract(), canonical(doc, op)) {
			what = append(what, f.Kind+": "+f.Detail)
		}
		if len(what) == 0 {
			what = append(what, "the contract's encoding changed")
		}
		state := "returns to review"
		if op.State == air.StateApproved {
			state = "stays approved by the manifest"
		} else {
			op.State = air.StateReviewRequired
		}
		out.Warnf(pos, CodeChanged, "%s was approved in %s but its contract changed (%s); it %s: approve it again with anvil approve",
			e.Operation, FileName, strings.Join(what, "; "), state)
	}
	return out
}
