//go:build linux

package fswatch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// newWatcher returns a live Watcher closed at the end of the test.
func newWatcher(t testing.TB) *Watcher {
	t.Helper()
	w := New()
	if w.c == nil {
		t.Fatal("New returned an inert Watcher on Linux (out of inotify instances?)")
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestConstantsMatchSyscall(t *testing.T) {
	pairs := []struct {
		name      string
		ours, sys uint32
	}{
		{"IN_MODIFY", inModify, syscall.IN_MODIFY},
		{"IN_ATTRIB", inAttrib, syscall.IN_ATTRIB},
		{"IN_CLOSE_WRITE", inCloseWrite, syscall.IN_CLOSE_WRITE},
		{"IN_MOVED_FROM", inMovedFrom, syscall.IN_MOVED_FROM},
		{"IN_MOVED_TO", inMovedTo, syscall.IN_MOVED_TO},
		{"IN_CREATE", inCreate, syscall.IN_CREATE},
		{"IN_DELETE", inDelete, syscall.IN_DELETE},
		{"IN_DELETE_SELF", inDeleteSelf, syscall.IN_DELETE_SELF},
		{"IN_MOVE_SELF", inMoveSelf, syscall.IN_MOVE_SELF},
		{"IN_UNMOUNT", inUnmount, syscall.IN_UNMOUNT},
		{"IN_Q_OVERFLOW", inQOverflow, syscall.IN_Q_OVERFLOW},
		{"IN_IGNORED", inIgnored, syscall.IN_IGNORED},
		{"IN_ONLYDIR", inOnlyDir, syscall.IN_ONLYDIR},
		{"IN_DONT_FOLLOW", inDontFollow, syscall.IN_DONT_FOLLOW},
		{"IN_EXCL_UNLINK", inExclUnlink, 0x04000000}, // not in package syscall
		{"IN_MASK_ADD", inMaskAdd, syscall.IN_MASK_ADD},
		{"IN_ISDIR", inIsDir, syscall.IN_ISDIR},
	}
	for _, p := range pairs {
		if p.ours != p.sys {
			t.Errorf("%s = %#x, syscall has %#x", p.name, p.ours, p.sys)
		}
	}
}

// TestEvents runs every event kind against every handle kind on the same
// directory: the file itself with and without content, a sibling file (no
// cross-talk) and the directory with and without content.
func TestEvents(t *testing.T) {
	const name, sibling = "jwks.json", "audit.jsonl"
	type handles struct{ file, fileContent, sibling, dir, dirContent bool }
	all := handles{true, true, false, true, true}
	contentOnly := handles{false, true, false, false, true}
	tests := []struct {
		name   string
		exists bool // create the file before the handles
		act    func(t *testing.T, dir, path string)
		want   handles // which stamps change
	}{
		{"create", false, func(t *testing.T, dir, path string) { writeFile(t, path, "{}") }, all},
		{"create empty", false, func(t *testing.T, dir, path string) {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o600)
			must(t, err)
			must(t, f.Close())
		}, all},
		{"write in place", true, func(t *testing.T, dir, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteAt([]byte("[]"), 0)
			must(t, err)
			must(t, f.Close())
		}, contentOnly},
		{"append without close", true, func(t *testing.T, dir, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			t.Cleanup(func() { f.Close() })
			_, err = f.Write([]byte("\n"))
			must(t, err)
		}, contentOnly},
		{"truncate", true, func(t *testing.T, dir, path string) { must(t, os.Truncate(path, 0)) }, contentOnly},
		{"rewrite with O_TRUNC", true, func(t *testing.T, dir, path string) { writeFile(t, path, "{}") }, contentOnly},
		{"chmod", true, func(t *testing.T, dir, path string) { must(t, os.Chmod(path, 0o400)) }, contentOnly},
		{"touch", true, func(t *testing.T, dir, path string) {
			now := time.Now().Add(time.Hour)
			must(t, os.Chtimes(path, now, now))
		}, contentOnly},
		{"rename away", true, func(t *testing.T, dir, path string) {
			must(t, os.Rename(path, filepath.Join(dir, "old.json")))
		}, all},
		{"rename into place", false, func(t *testing.T, dir, path string) {
			tmp := filepath.Join(dir, ".jwks.json.tmp")
			writeFile(t, tmp, "{}")
			must(t, os.Rename(tmp, path))
		}, all},
		{"rename over existing", true, func(t *testing.T, dir, path string) {
			tmp := filepath.Join(dir, ".jwks.json.tmp")
			writeFile(t, tmp, `{"keys":[]}`)
			must(t, os.Rename(tmp, path))
		}, all},
		{"delete", true, func(t *testing.T, dir, path string) { must(t, os.Remove(path)) }, all},
		{"delete and recreate", true, func(t *testing.T, dir, path string) {
			must(t, os.Remove(path))
			writeFile(t, path, "{}")
		}, all},
		{"hard link into place", false, func(t *testing.T, dir, path string) {
			other := filepath.Join(dir, "other")
			writeFile(t, other, "{}")
			must(t, os.Link(other, path))
		}, all},
		{"mkdir at the name", false, func(t *testing.T, dir, path string) { must(t, os.Mkdir(path, 0o700)) }, all},
		{"write to sibling", true, func(t *testing.T, dir, path string) {
			f, err := os.OpenFile(filepath.Join(dir, sibling), os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			_, err = f.Write([]byte("{}\n"))
			must(t, err)
			must(t, f.Close())
		}, handles{sibling: true, dirContent: true}},
		{"chmod sibling", true, func(t *testing.T, dir, path string) {
			must(t, os.Chmod(filepath.Join(dir, sibling), 0o400))
		}, handles{sibling: true, dirContent: true}},
		{"rename sibling", true, func(t *testing.T, dir, path string) {
			must(t, os.Rename(filepath.Join(dir, sibling), filepath.Join(dir, sibling+".1")))
		}, handles{sibling: true, dir: true, dirContent: true}},
		{"create other name", true, func(t *testing.T, dir, path string) {
			writeFile(t, filepath.Join(dir, "jwks.json.bak"), "")
		}, handles{dir: true, dirContent: true}},
		{"chmod directory", true, func(t *testing.T, dir, path string) { must(t, os.Chmod(dir, 0o711)) },
			handles{true, true, true, true, true}},
		{"read only", true, func(t *testing.T, dir, path string) {
			_, err := os.ReadFile(path)
			must(t, err)
		}, handles{}},
		{"nothing", true, func(t *testing.T, dir, path string) {}, handles{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			writeFile(t, filepath.Join(dir, sibling), "")
			if tt.exists {
				writeFile(t, path, "{}")
			}
			w := newWatcher(t)
			hs := []*Handle{
				w.File(path, false), w.File(path, true), w.File(filepath.Join(dir, sibling), true),
				w.Dir(dir, false), w.Dir(dir, true),
			}
			want := []bool{tt.want.file, tt.want.fileContent, tt.want.sibling, tt.want.dir, tt.want.dirContent}
			labels := []string{"File", "File(content)", "sibling File(content)", "Dir", "Dir(content)"}
			before := make([]uint64, len(hs))
			for i, h := range hs {
				if before[i] = h.Stamp(); before[i] == 0 {
					t.Fatalf("%s: unwatched at start", labels[i])
				}
			}
			tt.act(t, dir, path)
			w.Poll()
			for i, h := range hs {
				s := h.Stamp()
				if s == 0 {
					t.Errorf("%s: became unwatched", labels[i])
					continue
				}
				if changed := s != before[i]; changed != want[i] {
					t.Errorf("%s: changed = %v, want %v", labels[i], changed, want[i])
				}
				if s < before[i] {
					t.Errorf("%s: stamp went down %d -> %d", labels[i], before[i], s)
				}
			}
			// A second Poll with nothing new must not move anything.
			after := make([]uint64, len(hs))
			for i, h := range hs {
				after[i] = h.Stamp()
			}
			w.Poll()
			for i, h := range hs {
				if h.Stamp() != after[i] {
					t.Errorf("%s: changed on an idle Poll", labels[i])
				}
			}
		})
	}
}

// TestDirectoryGone covers the loss of the watched directory or of one of
// its ancestors: handles become unwatched for good, handles elsewhere are
// unaffected, and a new handle on the recreated path is watched again.
func TestDirectoryGone(t *testing.T) {
	tests := []struct {
		name string
		act  func(t *testing.T, root, sub string)
	}{
		{"remove", func(t *testing.T, root, sub string) { must(t, os.RemoveAll(sub)) }},
		{"rename", func(t *testing.T, root, sub string) { must(t, os.Rename(sub, sub+".old")) }},
		{"rename ancestor", func(t *testing.T, root, sub string) {
			must(t, os.Rename(filepath.Dir(sub), filepath.Join(root, "moved")))
		}},
		{"remove ancestor", func(t *testing.T, root, sub string) { must(t, os.RemoveAll(filepath.Dir(sub))) }},
		{"replace by a symlink", func(t *testing.T, root, sub string) {
			must(t, os.Rename(sub, sub+".real"))
			must(t, os.Symlink(sub+".real", sub))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			sub := filepath.Join(root, "a", "vault")
			must(t, os.MkdirAll(sub, 0o700))
			path := filepath.Join(sub, "record.json")
			writeFile(t, path, "{}")
			elsewhere := filepath.Join(root, "keys.json")
			w := newWatcher(t)
			hs := []*Handle{w.File(path, false), w.File(path, true), w.Dir(sub, false), w.Dir(sub, true)}
			other := w.File(elsewhere, true)
			otherDir := w.Dir(root, false)
			for i, h := range hs {
				if h.Stamp() == 0 {
					t.Fatalf("handle %d unwatched at start", i)
				}
			}
			tt.act(t, root, sub)
			w.Poll()
			for i, h := range hs {
				if s := h.Stamp(); s != 0 {
					t.Errorf("handle %d: stamp %d after the directory went away, want 0", i, s)
				}
			}
			if other.Stamp() == 0 || otherDir.Stamp() == 0 {
				t.Error("handle outside the lost directory became unwatched")
			}
			// Recreate the same path: old handles stay unwatched for good.
			_ = os.Remove(sub)
			must(t, os.MkdirAll(sub, 0o700))
			writeFile(t, path, "{}")
			w.Poll()
			for i, h := range hs {
				if s := h.Stamp(); s != 0 {
					t.Errorf("handle %d: stamp %d after recreation, want 0 for good", i, s)
				}
			}
			fresh := w.File(path, true)
			if fresh.Stamp() == 0 {
				t.Fatal("new handle on the recreated path is unwatched")
			}
			if fresh == hs[1] {
				t.Fatal("lost handle was handed out again")
			}
			before := fresh.Stamp()
			writeFile(t, path, "[]")
			w.Poll()
			if s := fresh.Stamp(); s == before || s == 0 {
				t.Errorf("new handle not bumped by a write: %d -> %d", before, s)
			}
			checkKernelWatches(t, w)
		})
	}
}

func TestUnwatched(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	must(t, os.Mkdir(real, 0o700))
	writeFile(t, filepath.Join(real, "f"), "x")
	must(t, os.Symlink(real, filepath.Join(root, "link")))
	must(t, os.Symlink(filepath.Join(real, "f"), filepath.Join(real, "flink")))
	must(t, os.Symlink("nowhere", filepath.Join(real, "dangling")))
	must(t, os.MkdirAll(filepath.Join(real, "deep", "er"), 0o700))
	writeFile(t, filepath.Join(root, "plainfile"), "")

	w := newWatcher(t)
	tests := []struct {
		name string
		h    func() *Handle
	}{
		{"symlinked dir", func() *Handle { return w.File(filepath.Join(root, "link", "f"), true) }},
		{"symlinked ancestor", func() *Handle { return w.File(filepath.Join(root, "link", "deep", "er", "f"), false) }},
		{"symlink file", func() *Handle { return w.File(filepath.Join(real, "flink"), false) }},
		{"dangling symlink file", func() *Handle { return w.File(filepath.Join(real, "dangling"), true) }},
		{"Dir on symlink", func() *Handle { return w.Dir(filepath.Join(root, "link"), false) }},
		{"Dir under symlink", func() *Handle { return w.Dir(filepath.Join(root, "link", "deep"), true) }},
		{"missing dir", func() *Handle { return w.File(filepath.Join(root, "missing", "f"), false) }},
		{"missing Dir", func() *Handle { return w.Dir(filepath.Join(root, "missing"), false) }},
		{"dir is a file", func() *Handle { return w.File(filepath.Join(root, "plainfile", "f"), false) }},
		{"Dir on a file", func() *Handle { return w.Dir(filepath.Join(root, "plainfile"), false) }},
		{"root as file", func() *Handle { return w.File("/", false) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h()
			if s := h.Stamp(); s != 0 {
				t.Errorf("stamp = %d, want 0", s)
			}
			w.Poll()
			if s := h.Stamp(); s != 0 {
				t.Errorf("stamp after Poll = %d, want 0", s)
			}
		})
	}
	// Rejected registrations leave no kernel watch or handle behind.
	w.c.mu.Lock()
	nw, nh := len(w.c.watches), len(w.c.handles)
	w.c.mu.Unlock()
	if nw != 0 || nh != 0 {
		t.Errorf("%d watches and %d handles left after rejected registrations", nw, nh)
	}
	checkKernelWatches(t, w)
	// The real path still works.
	if w.File(filepath.Join(real, "f"), true).Stamp() == 0 {
		t.Error("real path unwatched")
	}
	checkKernelWatches(t, w)
}

// TestSymlinkMovedIntoPlace: once a symlink replaces the watched file its
// target's changes are invisible, so the handle falls back to stat.
func TestSymlinkMovedIntoPlace(t *testing.T) {
	for _, how := range []string{"rename", "symlink"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jwks.json")
			writeFile(t, path, "{}")
			target := filepath.Join(t.TempDir(), "keys.json")
			writeFile(t, target, "{}")
			w := newWatcher(t)
			h, hc, d := w.File(path, false), w.File(path, true), w.Dir(dir, false)
			if how == "rename" {
				must(t, os.Symlink(target, path+".tmp"))
				must(t, os.Rename(path+".tmp", path))
			} else {
				must(t, os.Remove(path))
				must(t, os.Symlink(target, path))
			}
			w.Poll()
			if h.Stamp() != 0 || hc.Stamp() != 0 {
				t.Errorf("stamps %d, %d after a symlink took the name, want 0", h.Stamp(), hc.Stamp())
			}
			if d.Stamp() == 0 {
				t.Error("Dir handle became unwatched")
			}
		})
	}
}

func TestDedupAndRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	w := newWatcher(t)
	a := w.File(filepath.Join(dir, "f"), true)
	if b := w.File("f", true); b != a {
		t.Error("relative and absolute path gave different handles")
	}
	if b := w.File(filepath.Join(dir, "x", "..", "f"), true); b != a {
		t.Error("uncleaned path gave a different handle")
	}
	if b := w.File("f", false); b == a {
		t.Error("content flag ignored by deduplication")
	}
	if d := w.Dir(".", false); d == a || d.Stamp() == 0 {
		t.Error("Dir(.) shares the File handle or is unwatched")
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if n := len(w.c.handles); n != 3 {
		t.Errorf("%d handles registered, want 3", n)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	w := newWatcher(t)
	hs := []*Handle{w.File(path, false), w.File(path, true), w.Dir(dir, true)}
	must(t, w.Close())
	for i, h := range hs {
		if s := h.Stamp(); s != 0 {
			t.Errorf("handle %d: stamp %d after Close", i, s)
		}
	}
	writeFile(t, path, "x")
	w.Poll()
	for i, h := range hs {
		if s := h.Stamp(); s != 0 {
			t.Errorf("handle %d: stamp %d after Close and Poll", i, s)
		}
	}
	if s := w.File(path, true).Stamp(); s != 0 {
		t.Errorf("File after Close: stamp %d", s)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestExactness: a change whose system call returned before Poll is
// visible after that single Poll.
func TestExactness(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	tmp := filepath.Join(dir, "jwks.json.tmp")
	writeFile(t, path, "{}")
	w := newWatcher(t)
	h, hc := w.File(path, false), w.File(path, true)
	for i := range 1000 {
		before, beforeC := h.Stamp(), hc.Stamp()
		if i%2 == 0 {
			writeFile(t, tmp, "{}")
			must(t, os.Rename(tmp, path))
		} else {
			must(t, os.Rename(path, tmp))
		}
		w.Poll()
		if s := h.Stamp(); s == before || s == 0 {
			t.Fatalf("iteration %d: File stamp %d -> %d", i, before, s)
		}
		if s := hc.Stamp(); s == beforeC || s == 0 {
			t.Fatalf("iteration %d: File(content) stamp %d -> %d", i, beforeC, s)
		}
	}
	// In-place writes, content handle only.
	f, err := os.OpenFile(tmp, os.O_WRONLY, 0)
	must(t, err)
	defer f.Close()
	tmpH := w.File(tmp, true)
	for i := range 1000 {
		before := tmpH.Stamp()
		_, err := f.WriteAt([]byte{byte(i)}, 0)
		must(t, err)
		w.Poll()
		if s := tmpH.Stamp(); s == before || s == 0 {
			t.Fatalf("write %d: stamp %d -> %d", i, before, s)
		}
	}
}

// TestDispatchSynthetic feeds hand-made event buffers to a live watcher's
// dispatcher: overflow, records split at the end, zero-length names,
// unknown and lost watch descriptors.
func TestDispatchSynthetic(t *testing.T) {
	type setup struct {
		w                      *Watcher
		file, fileC, sib, dirH *Handle
		other                  *Handle // in another directory
		wd                     int32
	}
	mk := func(t *testing.T) setup {
		dir := t.TempDir()
		w := newWatcher(t)
		s := setup{
			w:     w,
			file:  w.File(filepath.Join(dir, "jwks.json"), false),
			fileC: w.File(filepath.Join(dir, "jwks.json"), true),
			sib:   w.File(filepath.Join(dir, "audit.jsonl"), false),
			dirH:  w.Dir(dir, false),
			other: w.File(filepath.Join(t.TempDir(), "x"), true),
		}
		s.wd = s.file.watches[len(s.file.watches)-1].wd
		return s
	}
	const (
		file = 1 << iota
		fileC
		sib
		dirH
		other
		everything = file | fileC | sib | dirH | other
	)
	tests := []struct {
		name string
		buf  func(s setup) []byte
		bump int // handles whose stamp changes
		lost int // handles that become unwatched
	}{
		{"overflow", func(s setup) []byte { return record(-1, inQOverflow, 0, "", 0) }, everything, 0},
		{"modify by name", func(s setup) []byte { return record(s.wd, inModify, 0, "jwks.json", 16) }, fileC, 0},
		{"create by name", func(s setup) []byte { return record(s.wd, inCreate, 0, "jwks.json", 32) }, file | fileC | dirH, 0},
		{"sibling delete", func(s setup) []byte { return record(s.wd, inDelete, 0, "audit.jsonl", 16) }, sib | dirH, 0},
		{"name without padding", func(s setup) []byte {
			b := record(s.wd, inMovedTo, 0, "jwks.json", 0)
			binary := b[:len(b)-1] // drop the NUL, shorten len
			binary[12]--
			return binary
		}, file | fileC | dirH, 0},
		{"prefix of a name", func(s setup) []byte { return record(s.wd, inDelete, 0, "jwks", 16) }, dirH, 0},
		{"zero-length name attrib", func(s setup) []byte { return record(s.wd, inAttrib, 0, "", 0) }, file | fileC | sib | dirH, 0},
		{"zero-length name modify", func(s setup) []byte { return record(s.wd, inModify, 0, "", 0) }, 0, 0},
		{"unknown wd", func(s setup) []byte { return record(s.wd+1000, inCreate, 0, "jwks.json", 16) }, 0, 0},
		{"split at the end", func(s setup) []byte {
			return concat(record(s.wd, inModify, 0, "audit.jsonl", 16), record(s.wd, inModify, 0, "jwks.json", 16)[:20])
		}, everything, 0},
		{"split header", func(s setup) []byte { return record(s.wd, inModify, 0, "jwks.json", 16)[:8] }, everything, 0},
		{"ignored", func(s setup) []byte { return record(s.wd, inIgnored, 0, "", 0) }, 0, file | fileC | sib | dirH},
		{"unmount", func(s setup) []byte { return record(s.wd, inUnmount, 0, "", 0) }, 0, file | fileC | sib | dirH},
		{"move self then events", func(s setup) []byte {
			return concat(record(s.wd, inMoveSelf, 0, "", 0), record(s.wd, inCreate, 0, "jwks.json", 16),
				record(-1, inQOverflow, 0, "", 0))
		}, other, file | fileC | sib | dirH},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mk(t)
			hs := []*Handle{s.file, s.fileC, s.sib, s.dirH, s.other}
			before := make([]uint64, len(hs))
			for i, h := range hs {
				before[i] = h.Stamp()
			}
			s.w.c.mu.Lock()
			s.w.c.apply(tt.buf(s))
			s.w.c.mu.Unlock()
			for i, h := range hs {
				st := h.Stamp()
				switch {
				case tt.lost&(1<<i) != 0:
					if st != 0 {
						t.Errorf("handle %d: stamp %d, want 0", i, st)
					}
				case st == 0:
					t.Errorf("handle %d: unwatched", i)
				case (st != before[i]) != (tt.bump&(1<<i) != 0):
					t.Errorf("handle %d: changed = %v, want %v", i, st != before[i], tt.bump&(1<<i) != 0)
				}
			}
		})
	}
}

// FuzzDispatch feeds arbitrary bytes to a live dispatcher: no panic, and
// every registered handle is either live (non-zero) or lost (zero).
func FuzzDispatch(f *testing.F) {
	f.Add(record(-1, inQOverflow, 0, "", 0))
	f.Add(record(1, inCreate, 0, "f", 16))
	f.Add(concat(record(2, inMoveSelf, 0, "", 0), record(1, inIgnored, 0, "", 0)))
	f.Add(record(1, inModify, 0, "f", 16)[:19])
	dir := f.TempDir()
	w := newWatcher(f)
	hs := []*Handle{w.File(filepath.Join(dir, "f"), true), w.Dir(dir, false)}
	f.Fuzz(func(t *testing.T, b []byte) {
		w.c.mu.Lock()
		w.c.apply(b)
		for _, h := range hs {
			if (h.Stamp() == 0) != h.lost {
				t.Errorf("stamp %d with lost = %v", h.Stamp(), h.lost)
			}
		}
		w.c.mu.Unlock()
	})
}

// TestConcurrent: 8 goroutines Poll and Stamp while another renames files
// and registers handles; stamps never go down, a rename is always visible
// after the renamer's own Poll, and Close ends it all with zeros.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	tmp := filepath.Join(dir, "tmp")
	writeFile(t, path, "{}")
	w := newWatcher(t)
	h := w.File(path, true)
	d := w.Dir(dir, false)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for !stop.Load() {
				w.Poll()
				s := h.Stamp()
				if s == 0 || s < last {
					errs <- "stamp went to 0 or down"
					return
				}
				last = s
				_ = d.Stamp()
				runtime.Gosched() // let the renamer run on this 2-core machine
			}
		}()
	}
	for i := range 300 {
		before := h.Stamp()
		writeFile(t, tmp, "{}")
		must(t, os.Rename(tmp, path))
		if i%50 == 0 {
			// Registration under load, on a new directory each time.
			sub := filepath.Join(dir, "sub", string(rune('a'+i/50)))
			must(t, os.MkdirAll(sub, 0o700))
			if w.File(filepath.Join(sub, "f"), false).Stamp() == 0 {
				t.Error("registration under load gave an unwatched handle")
			}
		}
		w.Poll()
		if s := h.Stamp(); s <= before {
			t.Fatalf("rename %d not visible after Poll: %d -> %d", i, before, s)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// Close racing pollers: afterwards every stamp is 0.
	stop.Store(false)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				w.Poll()
				_ = h.Stamp()
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	must(t, w.Close())
	stop.Store(true)
	wg.Wait()
	if h.Stamp() != 0 || d.Stamp() != 0 {
		t.Error("stamps not 0 after Close")
	}
}

func TestPollDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation")
	}
	dir := t.TempDir()
	w := newWatcher(t)
	w.File(filepath.Join(dir, "f"), true)
	if n := testing.AllocsPerRun(1000, w.Poll); n != 0 {
		t.Errorf("idle Poll allocates %v times", n)
	}
	h := w.File(filepath.Join(dir, "f"), true)
	if n := testing.AllocsPerRun(1000, func() { _ = h.Stamp() }); n != 0 {
		t.Errorf("Stamp allocates %v times", n)
	}
}

// checkKernelWatches compares the kernel's watch list for w's descriptor
// (/proc/self/fdinfo) with the watches w keeps: none may leak.
func checkKernelWatches(t *testing.T, w *Watcher) {
	t.Helper()
	w.Poll()
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", w.c.fd))
	if err != nil {
		t.Skip("no /proc/self/fdinfo")
	}
	kernel := strings.Count(string(info), "inotify wd:")
	if known := len(w.c.watches) + len(w.c.inodes); kernel != known {
		t.Errorf("kernel has %d watches, the watcher knows %d:\n%s", kernel, known, info)
	}
}

// inotifyFDs counts this process's open inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil &&
			strings.Contains(target, "inotify") {
			n++
		}
	}
	return n
}

// TestDroppedWatcherReleasesDescriptor: a Watcher dropped without Close
// gives its descriptor back after garbage collection.
func TestDroppedWatcherReleasesDescriptor(t *testing.T) {
	dir := t.TempDir()
	base := inotifyFDs(t)
	h := func() *Handle {
		w := New()
		if w.c == nil {
			t.Fatal("inert watcher")
		}
		return w.File(filepath.Join(dir, "f"), false)
	}()
	if got := inotifyFDs(t); got != base+1 {
		t.Fatalf("%d inotify descriptors open, want %d", got, base+1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for inotifyFDs(t) != base {
		if time.Now().After(deadline) {
			t.Fatal("descriptor of a dropped Watcher was not released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if s := h.Stamp(); s != 0 {
		t.Errorf("handle of a collected Watcher has stamp %d, want 0", s)
	}
}

// pending reports whether w's inotify queue holds anything, consuming it.
func pending(t *testing.T, w *Watcher) bool {
	t.Helper()
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	n, err := sysRead(w.c.fd, w.c.buf)
	must(t, err)
	return n > 0
}

// TestSiblingWritesQueueNothing: an audit log appended to next to a watched
// JWKS file (Branchyard keeps both in .branchyard/gateway) puts no event in
// the queue, so each Poll stays one empty read; the JWKS file's own writes
// still do.
func TestSiblingWritesQueueNothing(t *testing.T) {
	dir := t.TempDir()
	jwks, log := filepath.Join(dir, "jwks.json"), filepath.Join(dir, "audit.jsonl")
	writeFile(t, jwks, "{}")
	w := newWatcher(t)
	h := w.File(jwks, true)
	lh := w.File(log, false) // as audit.Logger watches its path
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(t, err)
	defer f.Close()
	w.Poll() // the creation of the log
	before, beforeLog := h.Stamp(), lh.Stamp()
	for range 100 {
		_, err := f.Write([]byte("{}\n"))
		must(t, err)
	}
	if pending(t, w) {
		t.Fatal("appends to a sibling queued events")
	}
	if h.Stamp() != before || lh.Stamp() != beforeLog {
		t.Fatal("stamps moved")
	}
	g, err := os.OpenFile(jwks, os.O_WRONLY, 0)
	must(t, err)
	defer g.Close()
	_, err = g.WriteAt([]byte("[]"), 0)
	must(t, err)
	w.Poll()
	if s := h.Stamp(); s == before || s == 0 {
		t.Fatalf("in-place write to the watched file: stamp %d -> %d", before, s)
	}
	checkKernelWatches(t, w)
}

// TestContentFollowsTheName: a content handle reports in-place writes to
// whatever file its name names after each replacement (rename into place,
// delete and recreate, hard link), never writes to the file it named before,
// and keeps reporting writes made through another link to its file.
func TestContentFollowsTheName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	w := newWatcher(t)
	h := w.File(path, true) // no file yet
	step := func(what string, act func(), wantBump bool) {
		t.Helper()
		before := h.Stamp()
		act()
		w.Poll()
		s := h.Stamp()
		if s == 0 {
			t.Fatalf("%s: unwatched", what)
		}
		if (s != before) != wantBump {
			t.Fatalf("%s: changed = %v, want %v", what, s != before, wantBump)
		}
	}
	writeAt := func(p string) func() {
		return func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			must(t, err)
			defer f.Close()
			_, err = f.WriteAt([]byte("x"), 0)
			must(t, err)
		}
	}
	step("create", func() { writeFile(t, path, "{}") }, true)
	step("write in place", writeAt(path), true)
	old := filepath.Join(dir, "old.json")
	step("rename away", func() { must(t, os.Rename(path, old)) }, true)
	step("write to the renamed file", writeAt(old), false)
	tmp := filepath.Join(dir, ".tmp")
	step("rename into place", func() { writeFile(t, tmp, "{}"); must(t, os.Rename(tmp, path)) }, true)
	step("write in place after the rename", writeAt(path), true)
	step("write to the file it replaced", writeAt(old), false)
	step("rename over it", func() { writeFile(t, tmp, "{}"); must(t, os.Rename(tmp, path)) }, true)
	step("write in place after rename over", writeAt(path), true)
	step("delete and recreate", func() { must(t, os.Remove(path)); writeFile(t, path, "{}") }, true)
	step("write in place after recreation", writeAt(path), true)
	step("delete", func() { must(t, os.Remove(path)) }, true)
	link := filepath.Join(dir, "link-source")
	writeFile(t, link, "{}")
	w.Poll()
	step("hard link into place", func() { must(t, os.Link(link, path)) }, true)
	step("write through the other link", writeAt(link), true)
	other := filepath.Join(t.TempDir(), "elsewhere")
	step("link in another directory", func() { must(t, os.Link(path, other)) }, true) // IN_ATTRIB: link count
	step("write through the link elsewhere", writeAt(other), true)
	checkKernelWatches(t, w)
	// Another handle on the same file shares its watch.
	h2 := w.File(link, true)
	w.c.mu.Lock()
	shared := h2.inode != nil && h2.inode == h.inode
	w.c.mu.Unlock()
	if !shared {
		t.Error("handles on hard links of one file do not share its watch")
	}
	checkKernelWatches(t, w)
	must(t, os.Remove(path))
	must(t, os.Remove(link))
	must(t, os.Remove(other))
	w.Poll()
	if h.Stamp() == 0 || h2.Stamp() == 0 {
		t.Fatal("handles unwatched after their file went away")
	}
	checkKernelWatches(t, w)
	step("recreate after all links went", func() { writeFile(t, path, "{}") }, true)
	step("write in place at the end", writeAt(path), true)
	checkKernelWatches(t, w)
}

// TestPollWithin: right after a drain PollWithin skips the read (a change
// made since waits for the next real poll); once the last drain is older
// than the window it polls, and a zero window always polls.
func TestPollWithin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	w := newWatcher(t)
	h := w.File(path, false)
	w.Poll()
	before := h.Stamp()
	writeFile(t, path, "")
	w.PollWithin(time.Hour)
	if h.Stamp() != before {
		t.Fatal("PollWithin read although a drain had just run")
	}
	w.PollWithin(0)
	if h.Stamp() == before {
		t.Fatal("PollWithin(0) did not poll")
	}
	before = h.Stamp()
	must(t, os.Remove(path))
	time.Sleep(5 * time.Millisecond)
	w.PollWithin(2 * time.Millisecond)
	if h.Stamp() == before {
		t.Fatal("PollWithin did not poll after its window")
	}
	var inert *Watcher
	inert.PollWithin(time.Second) // no panic
}
