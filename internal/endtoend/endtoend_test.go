// Package endtoend runs the anvil binary, as a user does, on the case folders
// under testdata/ and compares everything it observably does: its exit code,
// stdout, stderr and every file it writes or changes. It is the one home of
// the scenario tests of the command line (a command on fixed inputs and its
// output); golden/ keeps the byte goldens of the emitters' trees.
//
// A case folder testdata/<name>/ holds:
//
//   - cmd: the command, its arguments after "anvil" on one line, split at
//     white space ('single' or "double" quotes keep a space inside one
//     argument). Several lines are several steps run in order: every step but
//     the last is setup and must exit 0; exit, stdout.txt and stderr.txt
//     describe the last one. Lines starting with # are comments (say there
//     what the case shows). $ROOT in an argument is the repository's root,
//     for the bundled examples.
//   - env (optional): KEY=VALUE lines added to the command's environment,
//     which otherwise holds only PATH and HOME (the working directory, so
//     anything a command writes under the user's home or cache directory
//     shows up as a file the case did not expect).
//   - stdin (optional): what the last step reads on its standard input
//     (every other step reads nothing).
//   - exit (optional, default 0): the expected exit code of the last step.
//   - stdout.txt, stderr.txt (optional, default empty): the expected output,
//     byte for byte.
//   - expected/ (optional): every file the last step wrote or changed in the
//     working directory, by its path there (what setup steps wrote is its
//     input). No expected/ means the command writes nothing at all, which is
//     what a bad-input case asserts: a failed command loses nothing and
//     leaves no partial output. A file it removes, and a directory it
//     creates and leaves empty, fail the case whatever expected/ holds.
//   - any other file or folder: the inputs (spec, manifest, lock, ...). The
//     case folder, without the files above, is copied to a fresh temporary
//     directory, which is the command's working directory.
//
// Before comparing, the working directory's absolute path is replaced with
// $WORK and the repository's root with $ROOT, in the output and in the files
// written, so that an expected file never holds a machine's paths.
//
// ANVIL_UPDATE=1 go test ./internal/endtoend/ (or make golden, which sets
// ANVIL_UPDATE_GOLDEN=1) rewrites exit, stdout.txt, stderr.txt and expected/
// from what the binary does now; review the change with git diff. A crash
// (a Go panic's trace in the output) or a step that runs past the time
// limit fails even then.
package endtoend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/golden"
)

// stepTimeout bounds one run of the binary: a step that runs longer hangs
// (the slowest case takes well under a second on a quiet machine).
const stepTimeout = 2 * time.Minute

// caseFiles are the files of a case folder that describe the case; every
// other entry is an input.
var caseFiles = []string{"cmd", "env", "stdin", "exit", "stdout.txt", "stderr.txt", "expected"}

func updating() bool { return os.Getenv("ANVIL_UPDATE") == "1" || golden.Updating() }

// repoRoot is the module's root: this file sits two levels below it.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// buildAnvil builds cmd/anvil once for the whole run.
func buildAnvil(t *testing.T, root string) string {
	bin := filepath.Join(t.TempDir(), "anvil")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	fmt.Fprintln(os.Stderr, "endtoend: building the anvil binary (go build ./cmd/anvil)")
	start := time.Now()
	cmd := exec.Command(gobin, "build", "-o", bin, "./cmd/anvil")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/anvil: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "endtoend: built in %.1fs; running the cases\n", time.Since(start).Seconds())
	return bin
}

func TestEndToEnd(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) == 0 {
		t.Fatal("no case folders in testdata/")
	}
	bin := buildAnvil(t, root)
	start := time.Now()
	t.Cleanup(func() { // after every parallel case has finished
		fmt.Fprintf(os.Stderr, "endtoend: %d cases ran in %.1fs\n", len(cases), time.Since(start).Seconds())
	})
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := readCase(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			c.run(t, bin, root)
		})
	}
}

// testCase is one case folder, read.
type testCase struct {
	dir   string
	steps [][]string
	env   []string
	stdin []byte
	exit  int
}

func readCase(dir string) (*testCase, error) {
	c := &testCase{dir: dir}
	raw, err := os.ReadFile(filepath.Join(dir, "cmd"))
	if err != nil {
		return nil, fmt.Errorf("the case has no cmd file: %w", err)
	}
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args, err := splitArgs(line)
		if err != nil {
			return nil, fmt.Errorf("cmd:%d: %w", i+1, err)
		}
		c.steps = append(c.steps, args)
	}
	if len(c.steps) == 0 {
		return nil, errors.New("cmd holds no command")
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "env")); err == nil {
		for i, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if k, _, ok := strings.Cut(line, "="); !ok || k == "" {
				return nil, fmt.Errorf("env:%d: %q is not KEY=VALUE", i+1, line)
			}
			c.env = append(c.env, line)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if c.stdin, err = readOptional(filepath.Join(dir, "stdin")); err != nil {
		return nil, err
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "exit")); err == nil {
		if c.exit, err = strconv.Atoi(strings.TrimSpace(string(raw))); err != nil {
			return nil, fmt.Errorf("exit: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return c, nil
}

// splitArgs splits a cmd line at white space; quotes keep spaces inside one
// argument and are removed.
func splitArgs(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// result is what the last step did.
type result struct {
	exit           int
	stdout, stderr []byte
}

func (c *testCase) run(t *testing.T, bin, root string) {
	work := t.TempDir()
	if _, err := copyInputs(c.dir, work); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}, c.env...)
	var last result
	var before map[string][]byte // the tree as the last step finds it
	for i, args := range c.steps {
		for j, a := range args {
			args[j] = strings.ReplaceAll(a, "$ROOT", root)
		}
		if i == len(c.steps)-1 {
			var err error
			if before, err = snapshot(work); err != nil {
				t.Fatal(err)
			}
		}
		var stdin []byte
		if i == len(c.steps)-1 {
			stdin = c.stdin
		}
		last = runStep(t, bin, work, env, stdin, args)
		crashed := crash(last.stdout) || crash(last.stderr)
		if crashed {
			t.Errorf("step %d (anvil %s) crashed:\n%s%s", i+1, strings.Join(args, " "), last.stdout, last.stderr)
		}
		if i < len(c.steps)-1 && (last.exit != 0 || crashed) {
			t.Fatalf("setup step %d (anvil %s): exit %d\nstdout:\n%s\nstderr:\n%s", i+1, strings.Join(args, " "), last.exit, last.stdout, last.stderr)
		}
	}
	norm := normalizer(work, root)
	last.stdout, last.stderr = norm(last.stdout), norm(last.stderr)
	written, problems, err := changedFiles(work, before)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range written {
		written[name] = norm(b)
	}
	if updating() {
		if err := c.update(last, written); err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
		return
	}
	if last.exit != c.exit {
		t.Errorf("exit %d, want %d", last.exit, c.exit)
	}
	for _, f := range []struct {
		name string
		got  []byte
	}{{"stdout.txt", last.stdout}, {"stderr.txt", last.stderr}} {
		want, err := readOptional(filepath.Join(c.dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, f.got) {
			t.Errorf("%s differs (-want +got):\n%s", f.name, golden.TextDiff(want, f.got))
		}
	}
	expected, err := readTree(filepath.Join(c.dir, "expected"))
	if err != nil {
		t.Fatal(err)
	}
	problems = append(problems, golden.CompareTrees(expected, written, "expected", "written")...)
	for _, p := range problems {
		t.Error(p)
	}
	if t.Failed() {
		t.Logf("to accept what the binary does now: ANVIL_UPDATE=1 go test ./internal/endtoend/ -run 'TestEndToEnd/%s$'", filepath.Base(c.dir))
	}
}

// runStep runs the binary once, bounded in time.
func runStep(t *testing.T, bin, work string, env []string, stdin []byte, args []string) result {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = work, env, bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("anvil %s ran past %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stepTimeout, stdout.Bytes(), stderr.Bytes())
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && exitErr.ExitCode() >= 0:
	default:
		t.Fatalf("anvil %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return result{exit: cmd.ProcessState.ExitCode(), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
}

// crash reports a Go panic's trace in b.
func crash(b []byte) bool {
	return bytes.Contains(b, []byte("panic: ")) && bytes.Contains(b, []byte("goroutine "))
}

// normalizer replaces the working directory's and the repository's absolute
// paths with $WORK and $ROOT (the longer first, should one hold the other).
func normalizer(work, root string) func([]byte) []byte {
	type sub struct{ from, to string }
	var subs []sub
	for _, s := range []sub{{work, "$WORK"}, {root, "$ROOT"}} {
		subs = append(subs, s)
		if real, err := filepath.EvalSymlinks(s.from); err == nil && real != s.from {
			subs = append(subs, sub{real, s.to})
		}
	}
	sort.SliceStable(subs, func(i, j int) bool { return len(subs[i].from) > len(subs[j].from) })
	return func(b []byte) []byte {
		for _, s := range subs {
			b = bytes.ReplaceAll(b, []byte(s.from), []byte(s.to))
		}
		return b
	}
}

// copyInputs copies the case folder's inputs to work and returns them, as
// snapshot does.
func copyInputs(dir, work string) (map[string][]byte, error) {
	inputs := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if !strings.Contains(filepath.ToSlash(rel), "/") && slices.Contains(caseFiles, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(work, rel)
		if d.IsDir() {
			inputs[filepath.ToSlash(rel)+"/"] = nil
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		inputs[filepath.ToSlash(rel)] = b
		return os.WriteFile(dst, b, 0o644)
	})
	return inputs, err
}

// snapshot returns every file under work by slash path, and every
// directory as its path with a trailing slash.
func snapshot(work string) (map[string][]byte, error) {
	tree := map[string][]byte{}
	err := filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(work, p)
		switch rel = filepath.ToSlash(rel); {
		case rel == ".":
		case d.IsDir():
			tree[rel+"/"] = nil
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree[rel] = b
		}
		return nil
	})
	return tree, err
}

// changedFiles returns the files under work that are not in before (a
// snapshot) as they were there, and the problems no expected tree can
// express: a file removed, a directory created and left empty, an entry
// that is no regular file.
func changedFiles(work string, before map[string][]byte) (map[string][]byte, []string, error) {
	written := map[string][]byte{}
	seen := map[string]bool{}
	var problems []string
	err := filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(work, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, existed := before[rel+"/"]; !existed {
				if ents, err := os.ReadDir(p); err == nil && len(ents) == 0 {
					problems = append(problems, "an empty directory was left behind: "+rel)
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			problems = append(problems, "not a regular file: "+rel)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		seen[rel] = true
		if old, existed := before[rel]; !existed || !bytes.Equal(old, b) {
			written[rel] = b
		}
		return nil
	})
	for name := range before {
		if !strings.HasSuffix(name, "/") && !seen[name] {
			problems = append(problems, "a file was removed: "+name)
		}
	}
	sort.Strings(problems)
	return written, problems, err
}

// readTree reads every file under dir by slash path; a missing dir is an
// empty tree.
func readTree(dir string) (map[string][]byte, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	tree, err := files.Read(dir)
	if err != nil {
		return nil, err
	}
	return tree.Bytes(), nil
}

func readOptional(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// update rewrites the case's expectations from r and written: a default
// (exit 0, empty output, nothing written) is stored as no file.
func (c *testCase) update(r result, written map[string][]byte) error {
	put := func(name string, b []byte) error {
		p := filepath.Join(c.dir, name)
		if len(b) == 0 {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}
		return os.WriteFile(p, b, 0o644)
	}
	exit := []byte(nil)
	if r.exit != 0 {
		exit = []byte(strconv.Itoa(r.exit) + "\n")
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"exit", exit}, {"stdout.txt", r.stdout}, {"stderr.txt", r.stderr}} {
		if err := put(f.name, f.data); err != nil {
			return err
		}
	}
	expected := filepath.Join(c.dir, "expected")
	if err := os.RemoveAll(expected); err != nil {
		return err
	}
	for name, b := range written {
		p := filepath.Join(expected, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
