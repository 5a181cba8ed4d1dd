package compiler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/sources"
	"github.com/anvil-dev/anvil/runtime/air"
)

// BuildOptions is one `anvil compile <spec>`: what Compile reads and how,
// and where the bundle and the source snapshot go.
type BuildOptions struct {
	Inputs
	Options
	// Out is the bundle directory; "" is generated/<service id>.
	Out string
	// Root is the workspace root whose .anvil/sources receives the source
	// snapshot of the files read (--root). It is used only when Inputs.FS
	// is nil: a compile of a stored snapshot stores nothing.
	Root string
	// Snapshot is the stored snapshot Inputs.FS holds (--source), reported
	// back in Result.Snapshot; nil when compiling files from disk.
	Snapshot *sources.Snapshot
}

// Result is what Build did.
type Result struct {
	// Doc is the compiled document, with the lock's approvals applied; nil
	// when nothing could be compiled (Diagnostics say why) and nothing was
	// written.
	Doc *air.Document
	// Diagnostics are Compile's and the lock's, sorted.
	Diagnostics diag.List
	// Out is the bundle directory written.
	Out string
	// Files is the number of files written to Out (the bundle's and its
	// origin record).
	Files int
	// Snapshot is the source snapshot the document was compiled from: the
	// one saved from the files read, or BuildOptions.Snapshot.
	Snapshot *sources.Snapshot
}

// Step names the stage of Build that a *StepError comes from.
type Step string

// Build's stages after the compile itself.
const (
	StepLock     Step = "lock"     // reading the anvil.lock beside the manifest
	StepSnapshot Step = "snapshot" // saving the source snapshot
	StepRender   Step = "render"   // rendering the bundle's files
	StepWrite    Step = "write"    // writing the bundle directory
)

// StepError is a Build stage that failed: nothing after it ran, and the
// bundle directory is either untouched or wholly replaced (files.Tree
// writes atomically).
type StepError struct {
	Step Step
	// Path is the file or directory the stage worked on.
	Path string
	Err  error
}

func (e *StepError) Error() string {
	switch e.Step {
	case StepSnapshot:
		return fmt.Sprintf("saving the source snapshot under %s: %v", e.Path, e.Err)
	case StepRender:
		return fmt.Sprintf("rendering the bundle: %v", e.Err)
	case StepWrite:
		return fmt.Sprintf("writing %s: %v", e.Path, e.Err)
	}
	return e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// Build is the compile pipeline every `anvil compile <spec>` runs: Compile
// with the names the anvil.lock beside the manifest pins, then the
// approvals it records, then the
// source snapshot of exactly the bytes read, then the bundle (AIR and
// generation.json, with the record of its manifest) written atomically to
// Out.
//
// A description or manifest that cannot be used is not an error: Result.Doc
// is nil and the diagnostics say why; nothing is written. A document with
// error diagnostics is still written (the caller decides the exit code). The
// error is a *StepError, or ctx's error when ctx ended before writing.
func Build(ctx context.Context, o BuildOptions) (*Result, error) {
	var rec sources.Recorder
	opts := o.Options
	if o.FS == nil { // a stored snapshot is not stored again
		opts.OnRead = chain(opts.OnRead, rec.Record)
		rec.Base = opts.Base // $refs stay inside it (issue 15)
	}
	// Approvals and pinned names recorded by anvil approve, in the
	// anvil.lock beside the manifest: the names go into lowering, the
	// approvals onto its result.
	var lk *lock.Lock
	lockPath := ""
	if o.Manifest != "" && o.ManifestData == nil {
		lockPath = lock.PathFor(o.Manifest)
		var err error
		if lk, err = lock.Load(lockPath); err != nil {
			return &Result{}, &StepError{Step: StepLock, Path: lockPath, Err: err}
		}
		opts.Pins = lk.Pins()
	}
	doc, all := Compile(o.Inputs, opts)
	res := &Result{Doc: doc, Diagnostics: all}
	if doc == nil {
		return res, nil
	}
	if lk != nil {
		all = append(all, lk.Apply(doc, lockPath)...)
		all.Sort()
		res.Diagnostics = all
	}
	res.Snapshot = o.Snapshot
	if o.FS == nil {
		// Lock what was read (the AIR is compiled from exactly these
		// bytes) as a source snapshot: --source <id> compiles it again.
		snap, err := rec.Save(o.Root, o.Spec, string(doc.Service.Source.Kind))
		if err != nil {
			return res, &StepError{Step: StepSnapshot, Path: filepath.Join(o.Root, filepath.FromSlash(sources.Dir)), Err: err}
		}
		res.Snapshot = snap
	}
	res.Out = o.Out
	if res.Out == "" {
		res.Out = filepath.Join("generated", doc.Service.ID)
	}
	tree, err := BundleTree(doc)
	if err != nil {
		return res, &StepError{Step: StepRender, Path: res.Out, Err: err}
	}
	if b := lock.OriginBytes(res.Out, o.Manifest); b != nil {
		tree.Add(lock.OriginFile, b)
	}
	if err := writeTree(ctx, tree, res.Out); err != nil {
		return res, err
	}
	res.Files = len(tree)
	return res, nil
}

// writeTree writes tree as the directory out, atomically (files.Tree.WriteTo),
// unless ctx has ended: the last step of every pipeline that replaces a
// whole directory.
func writeTree(ctx context.Context, tree files.Tree, out string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := tree.WriteTo(out); err != nil {
		return &StepError{Step: StepWrite, Path: out, Err: err}
	}
	return nil
}

// Rebundle writes doc again over the bundle in dir (anvil approve, after
// the lock records the approvals), keeping dir's record of its manifest,
// and returns the number of files written.
func Rebundle(doc *air.Document, dir string) (int, error) {
	tree, err := BundleTree(doc)
	if err != nil {
		return 0, &StepError{Step: StepRender, Path: dir, Err: err}
	}
	if b, err := os.ReadFile(filepath.Join(dir, lock.OriginFile)); err == nil {
		tree.Add(lock.OriginFile, b)
	}
	if err := tree.WriteTo(dir); err != nil {
		return 0, &StepError{Step: StepWrite, Path: dir, Err: err}
	}
	return len(tree), nil
}

// BundleTree is the bundle emitter: doc's bundle files (air.Files) as a
// tree, AIR in and files.Tree out like every other emitter.
func BundleTree(doc *air.Document) (files.Tree, error) {
	m, err := air.Files(doc)
	if err != nil {
		return nil, err
	}
	return files.FromBytes(m), nil
}

// chain calls both functions that are set.
func chain(a, b func(string, []byte)) func(string, []byte) {
	if a == nil {
		return b
	}
	return func(name string, data []byte) { a(name, data); b(name, data) }
}
