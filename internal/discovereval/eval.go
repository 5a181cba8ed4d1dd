// Package discovereval measures runtime/discover's ranking: it compiles a
// real API description to AIR with the compiler's own pipeline (no
// manifest), indexes every operation and scores a set of plain-language
// tasks by recall@1 and recall@5. It lives under internal/ because the
// runtime may not import the compiler.
package discovereval

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
)

// Task is one plain-language request and the operations that answer it
// (source operationIds, as the description names them).
type Task struct {
	Line     int
	Query    string
	Expected []string
}

// ParseTasks reads tasks, one a line: "<query> => <operationId>[, ...]".
// Blank lines and lines starting with # are skipped.
func ParseTasks(r io.Reader) ([]Task, error) {
	var out []Task
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, exp, ok := strings.Cut(line, "=>")
		q = strings.TrimSpace(q)
		if !ok || q == "" {
			return nil, fmt.Errorf("line %d: want <query> => <operationId>[, ...]", n)
		}
		t := Task{Line: n, Query: q}
		for _, e := range strings.Split(exp, ",") {
			if e = strings.TrimSpace(e); e != "" {
				t.Expected = append(t.Expected, e)
			}
		}
		if len(t.Expected) == 0 {
			return nil, fmt.Errorf("line %d: no expected operation", n)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// Compile compiles the description at path to AIR with compiler.Compile,
// as `anvil compile` does without a manifest. Its error diagnostics (the
// loader's included) fail it: the error counts them and names the first.
func Compile(path, serviceID string) (*air.Document, error) {
	doc, ds := compiler.Compile(compiler.Inputs{Spec: path}, compiler.Options{ServiceID: serviceID, HumanApproval: "none"})
	if errs := ds.Errors(); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %d error diagnostic(s), first: %s", path, len(errs), errs[0])
	}
	if doc == nil { // Compile returns no document without an error diagnostic
		return nil, fmt.Errorf("%s cannot be compiled", path)
	}
	return doc, nil
}

// Index indexes every operation of the document under the connector,
// whatever its review state: the evaluation asks whether ranking finds the
// right operation, not which ones a manifest approved.
func Index(connector string, doc *air.Document) (*discover.Index, error) {
	b := discover.NewBuilder()
	for i := range doc.Operations {
		if err := b.Add(connector, &doc.Operations[i]); err != nil {
			return nil, err
		}
	}
	return b.Build(), nil
}

// Outcome is how one task ranked.
type Outcome struct {
	Task Task
	// Rank is the 1-based position of the first expected operation, 0 when
	// it is not among the first discover.MaxLimit results.
	Rank int
	// Top holds the AIR operation ids of the first five results.
	Top []string
}

// Report sums up an evaluation.
type Report struct {
	Outcomes []Outcome
	Recall1  float64
	Recall5  float64
}

// ErrUnknownOperation is returned when a task names an operation the
// document lacks (a typo would otherwise count as a miss).
var ErrUnknownOperation = errors.New("task names an operation the document does not have")

// Evaluate runs every task against the index built from doc.
func Evaluate(ix *discover.Index, doc *air.Document, tasks []Task) (Report, error) {
	bySource := map[string]string{} // source operationId → AIR id
	for i := range doc.Operations {
		op := &doc.Operations[i]
		bySource[op.SourceRef.OperationID] = op.ID
	}
	var rep Report
	var at1, at5 int
	for _, t := range tasks {
		want := map[string]bool{}
		for _, e := range t.Expected {
			id, ok := bySource[e]
			if !ok {
				return Report{}, fmt.Errorf("line %d: %w: %s", t.Line, ErrUnknownOperation, e)
			}
			want[id] = true
		}
		o := Outcome{Task: t}
		for i, r := range ix.Search(t.Query, discover.Options{Limit: discover.MaxLimit}) {
			if i < 5 {
				o.Top = append(o.Top, r.Entry.OperationID)
			}
			if o.Rank == 0 && want[r.Entry.OperationID] {
				o.Rank = i + 1
			}
		}
		if o.Rank == 1 {
			at1++
		}
		if o.Rank >= 1 && o.Rank <= 5 {
			at5++
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	if n := len(tasks); n > 0 {
		rep.Recall1 = float64(at1) / float64(n)
		rep.Recall5 = float64(at5) / float64(n)
	}
	return rep, nil
}
