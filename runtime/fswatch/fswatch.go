package fswatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// seq hands out stamps. One process-wide counter makes every stamp unique, so
// a stamp cached from one handle never equals the stamp of another, and each
// handle's stamps increase.
var seq atomic.Uint64

func nextStamp() uint64 { return seq.Add(1) }

// Watcher delivers change stamps for files and directories from one inotify
// instance. The zero value and a nil *Watcher are inert: every handle they
// return is unwatched.
type Watcher struct {
	c       *core
	cleanup runtime.Cleanup
}

// New returns a Watcher. It never fails: when inotify is unavailable (not
// Linux, out of instances, any error) the Watcher is inert and every handle
// it returns is unwatched (Stamp() == 0).
//
// A Watcher that becomes unreachable without Close releases its inotify
// descriptor (and unwatches its handles) on a later garbage collection.
func New() *Watcher {
	fd, err := sysInit()
	if err != nil {
		return &Watcher{}
	}
	c := &core{
		fd:      fd,
		buf:     make([]byte, bufSize),
		watches: make(map[int32]*dirWatch),
		inodes:  make(map[int32]*fileWatch),
		handles: make(map[handleKey]*Handle),
	}
	w := &Watcher{c: c}
	w.cleanup = runtime.AddCleanup(w, func(c *core) { _ = c.close() }, c)
	return w
}

// Poll consumes every pending notification with non-blocking reads (until
// EAGAIN) and bumps the stamps of the handles they concern. It is safe for
// concurrent use: when Poll returns, every event queued before it was called
// has been applied, by this call or by a concurrent one. When nothing is
// pending it costs one read system call and does not allocate. Poll is a
// no-op on an inert or closed Watcher.
func (w *Watcher) Poll() {
	if w == nil || w.c == nil {
		return
	}
	w.c.poll()
}

// PollWithin is Poll for a caller content with changes made before a recent
// drain: when a drain (by any caller) began less than d ago it returns at
// once, without a system call; otherwise it polls. Either way, every change
// whose system call returned more than d before PollWithin was called has
// been applied when it returns. A server that polls at the start of every
// request can so check a file again at the end of a short request for free.
func (w *Watcher) PollWithin(d time.Duration) {
	if w == nil || w.c == nil {
		return
	}
	if last := w.c.drained.Load(); last != 0 && monotonic()-last < int64(d) {
		return
	}
	w.c.poll()
}

// epoch anchors monotonic.
var epoch = time.Now()

// monotonic returns nanoseconds on the monotonic clock (never 0).
func monotonic() int64 { return int64(time.Since(epoch)) + 1 }

// File returns a handle for the file at path (made absolute and cleaned). Its
// stamp changes when the name is created, deleted, or renamed to or from in
// its directory, or when the directory itself is deleted, moved or
// unmounted; with content true also on IN_MODIFY, IN_CLOSE_WRITE and
// IN_ATTRIB of the file the name currently names. The file need not exist.
//
// Handles on the same directory share one inotify watch and events are
// dispatched by name. Content events come from a second watch, on the file
// itself (moved along when the name is replaced), so that writes to the other
// entries of its directory — an audit log next to a JWKS file — put nothing in
// the queue for Poll to read. File may return the same *Handle for the same path and
// content flag. The handle is unwatched (Stamp always 0) when the watcher is
// inert or closed, when the directory cannot be watched or is not on a local
// file system, or when the path or its directory involves a symbolic link.
func (w *Watcher) File(path string, content bool) *Handle {
	abs, err := filepath.Abs(path)
	if err != nil || w == nil || w.c == nil {
		return &Handle{lost: true}
	}
	dir, name := filepath.Dir(abs), filepath.Base(abs)
	if dir == abs || name == "" || name == string(filepath.Separator) || name == "." || name == ".." {
		return &Handle{lost: true}
	}
	return w.c.register(handleKey{path: abs, content: content}, dir, name)
}

// Dir returns a handle whose stamp changes on any entry event in directory
// dir (created, deleted, renamed to or from; with content true also modify,
// close-write and attrib of any entry), or when dir itself goes away. The
// same rules as for File make it unwatched.
func (w *Watcher) Dir(dir string, content bool) *Handle {
	abs, err := filepath.Abs(dir)
	if err != nil || w == nil || w.c == nil {
		return &Handle{lost: true}
	}
	return w.c.register(handleKey{path: abs, dir: true, content: content}, abs, "")
}

// Close releases the inotify descriptor; afterwards every handle is
// unwatched (Stamp 0). Close is idempotent and safe to call concurrently with
// Poll, File, Dir and Stamp.
func (w *Watcher) Close() error {
	if w == nil || w.c == nil {
		return nil
	}
	w.cleanup.Stop()
	return w.c.close()
}

// Handle is a watched file or directory. Its methods are safe for concurrent
// use.
type Handle struct {
	stamp atomic.Uint64

	// Guarded by the owning core's mutex.
	key     handleKey
	name    string      // entry name in its directory; "" for Dir handles
	lost    bool        // unwatched for good
	watches []*dirWatch // own directory last, ancestors before it
	inode   *fileWatch  // content File handles: the watch on the file the name names; nil while there is none
}

// Stamp returns the handle's current stamp: a non-zero value that changes
// (increases) whenever Poll applied a relevant event; 0 means unwatched — the
// caller must check the file itself every time. A handle whose directory
// watch was lost (IN_IGNORED, IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, also
// of an ancestor directory) becomes unwatched for good. An IN_Q_OVERFLOW
// bumps every handle. A nil *Handle returns 0. Stamp never blocks: it is one
// atomic load.
func (h *Handle) Stamp() uint64 {
	if h == nil {
		return 0
	}
	return h.stamp.Load()
}

// handleKey identifies a handle so repeated registrations share it.
type handleKey struct {
	path    string // absolute, cleaned
	dir     bool   // Dir handle rather than File handle
	content bool
}

// dirWatch is one inotify watch descriptor on a directory.
type dirWatch struct {
	wd    int32
	mask  uint32               // union of the masks requested so far
	dead  bool                 // removed from core.watches
	deps  []*Handle            // every handle that relies on this directory
	files map[string][]*Handle // File handles whose directory this is, by name
	dirs  []*Handle            // Dir handles on this directory
	path  string               // path the watch was first added under
}

// fileWatch is one inotify watch descriptor on a file (an inode), carrying
// the content events of the content File handles whose names name it (more
// than one through hard links).
type fileWatch struct {
	wd      int32
	dead    bool // removed from core.inodes
	handles []*Handle
}

// core is the state shared by a Watcher and its cleanup. It must not point
// back to the Watcher, or the cleanup would never run.
type core struct {
	// arrive counts Poll calls; covered is the largest arrival number that
	// a completed drain is known to satisfy (see poll).
	arrive atomic.Uint64
	// drained is the monotonic time at which the last completed drain
	// began (0: none yet); see PollWithin.
	drained atomic.Int64

	mu      sync.Mutex
	covered uint64
	fd      int // -1 once closed
	buf     []byte
	watches map[int32]*dirWatch
	inodes  map[int32]*fileWatch
	handles map[handleKey]*Handle
}

// poll drains the queue. A caller whose arrival number is covered by a drain
// that began after it arrived returns without reading again: that drain
// started reading after this call began, so it consumed every event queued
// before it.
func (c *core) poll() {
	ticket := c.arrive.Add(1)
	c.mu.Lock()
	if c.covered < ticket {
		c.drainLocked()
	}
	c.mu.Unlock()
}

// drainLocked reads until EAGAIN and applies the events. Any read error
// other than EINTR/EAGAIN makes the watcher inert: silently missing events
// would be worse than falling back to stat.
func (c *core) drainLocked() {
	if c.fd < 0 {
		return
	}
	upTo := c.arrive.Load()
	began := monotonic()
	for {
		n, err := sysRead(c.fd, c.buf)
		if err != nil {
			c.closeLocked()
			return
		}
		if n <= 0 {
			break
		}
		c.apply(c.buf[:min(n, len(c.buf))])
		if n <= len(c.buf)-maxEvent {
			// The read had room for another event and returned none: the
			// queue was empty when it was taken, so everything queued before
			// this drain began is applied (a read for EAGAIN would only cost
			// another system call).
			break
		}
	}
	c.covered = upTo
	c.drained.Store(began) // after the events are applied: PollWithin relies on them
}

// apply dispatches every record in b. A record cut short (never produced by
// the kernel) is treated like a queue overflow.
func (c *core) apply(b []byte) {
	for {
		ev, rest, st := nextEvent(b)
		switch st {
		case parseEnd:
			return
		case parseTruncated:
			c.bumpAll()
			return
		}
		c.dispatch(ev)
		b = rest
	}
}

// dispatch applies one event.
func (c *core) dispatch(ev rawEvent) {
	if ev.mask&inQOverflow != 0 {
		c.bumpAll()
		return
	}
	if fw := c.inodes[ev.wd]; fw != nil {
		c.dispatchFile(fw, ev.mask)
		return
	}
	dw := c.watches[ev.wd]
	if dw == nil {
		return // a watch already dropped, or not ours
	}
	if ev.mask&lostMask != 0 {
		c.dropWatch(dw, ev.mask&inIgnored == 0)
		return
	}
	if len(ev.name) == 0 {
		// The directory's own attributes changed: its permissions decide
		// whether the entries can be reached, so everything on it is stale.
		if ev.mask&inAttrib != 0 {
			for _, hs := range dw.files {
				for _, h := range hs {
					bump(h)
				}
			}
			for _, h := range dw.dirs {
				bump(h)
			}
		}
		return
	}
	if hs := dw.files[string(ev.name)]; len(hs) > 0 {
		if ev.mask&(inCreate|inMovedTo) != 0 && symlinkOrUnknown(hs[0].key.path) {
			// A symlink now stands at the name: its target's changes are
			// invisible here, so the handles must fall back to stat.
			name := string(ev.name)
			for len(dw.files[name]) > 0 {
				c.lose(dw.files[name][0])
			}
		} else {
			if ev.mask&entryMask != 0 {
				// The name now names another file, or none: content
				// events must come from the new one.
				for _, h := range slices.Clone(hs) {
					if h.key.content && !c.follow(h) {
						c.lose(h)
					}
				}
			}
			for _, h := range dw.files[string(ev.name)] {
				if relevant(ev.mask, h.key.content) {
					bump(h)
				}
			}
		}
	}
	for _, h := range dw.dirs {
		if relevant(ev.mask, h.key.content) {
			bump(h)
		}
	}
}

// dispatchFile applies an event of a file watch: content events bump its
// handles. IN_IGNORED (the file is gone, or the watch was removed) ends the
// watch; its handles are bumped too, and a file that takes the name later is
// reported by the directory watch, which moves them to it.
func (c *core) dispatchFile(fw *fileWatch, mask uint32) {
	if mask&inIgnored != 0 {
		c.forgetFile(fw, false)
		for _, h := range fw.handles {
			h.inode = nil
			bump(h)
		}
		fw.handles = nil
		return
	}
	if mask&(contentMask|inDeleteSelf|inMoveSelf) != 0 {
		for _, h := range fw.handles {
			bump(h)
		}
	}
}

// follow points the content handle h at the file its path names now: a
// watch on that file (shared with handles naming the same file) replaces the
// one on the file it named before. No file at the path leaves h without one
// until the directory watch reports a new entry. It returns false when the
// file cannot be watched, so h must fall back to stat.
func (c *core) follow(h *Handle) bool {
	wd, err := sysAddWatch(c.fd, h.key.path, contentMask|inDontFollow|inMaskAdd)
	if err != nil {
		c.unfollow(h)
		return errors.Is(err, fs.ErrNotExist)
	}
	if h.inode != nil && h.inode.wd == wd {
		return true
	}
	c.unfollow(h)
	if c.watches[wd] != nil {
		// A watched directory stands at the name; its events are not
		// dispatched as a file's.
		return false
	}
	fw := c.inodes[wd]
	if fw == nil {
		fw = &fileWatch{wd: wd}
		c.inodes[wd] = fw
	}
	fw.handles = append(fw.handles, h)
	h.inode = fw
	return true
}

// unfollow detaches h from its file watch, removing the watch from the
// kernel once no handle uses it.
func (c *core) unfollow(h *Handle) {
	fw := h.inode
	if fw == nil {
		return
	}
	h.inode = nil
	fw.handles = remove(fw.handles, h)
	if len(fw.handles) == 0 {
		c.forgetFile(fw, true)
	}
}

// forgetFile removes fw from the table, optionally removing the kernel
// watch. A later IN_IGNORED for its descriptor is then ignored.
func (c *core) forgetFile(fw *fileWatch, rm bool) {
	retire(c, c.inodes, fw, fw.wd, &fw.dead, rm)
}

// relevant reports whether an entry event with mask concerns a handle with
// the given content flag.
func relevant(mask uint32, content bool) bool {
	return mask&entryMask != 0 || content && mask&contentMask != 0
}

// symlinkOrUnknown reports whether path is a symbolic link, or cannot be
// examined for a reason other than not existing.
func symlinkOrUnknown(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return !os.IsNotExist(err)
	}
	return fi.Mode()&os.ModeSymlink != 0
}

// bump gives a live handle a fresh stamp. Callers hold the mutex, which
// makes the load-then-store safe against Close and lose.
func bump(h *Handle) {
	if !h.lost {
		h.stamp.Store(nextStamp())
	}
}

// bumpAll bumps every live handle (queue overflow).
func (c *core) bumpAll() {
	for _, h := range c.handles {
		bump(h)
	}
}

// dropWatch forgets a watch whose directory went away and makes every handle
// relying on it unwatched. rm asks the kernel to drop the watch too (needed
// after IN_MOVE_SELF, where the kernel keeps watching the moved directory).
func (c *core) dropWatch(dw *dirWatch, rm bool) {
	c.forget(dw, rm)
	for _, h := range slices.Clone(dw.deps) {
		c.lose(h)
	}
}

// forget removes dw from the table, optionally removing the kernel watch.
// A later IN_IGNORED for its descriptor is then ignored.
func (c *core) forget(dw *dirWatch, rm bool) {
	retire(c, c.watches, dw, dw.wd, &dw.dead, rm)
}

// retire marks the watch record w (descriptor wd) dead, removes it from
// table and, with rm, removes the kernel watch. A record already dead is
// left alone.
func retire[W comparable](c *core, table map[int32]W, w W, wd int32, dead *bool, rm bool) {
	if *dead {
		return
	}
	*dead = true
	if table[wd] == w {
		delete(table, wd)
	}
	if rm && c.fd >= 0 {
		sysRmWatch(c.fd, wd)
	}
}

// lose makes h unwatched for good and unregisters it. Watches left without
// any handle are removed from the kernel.
func (c *core) lose(h *Handle) {
	if h.lost {
		return
	}
	h.lost = true
	h.stamp.Store(0)
	c.unfollow(h)
	if c.handles[h.key] == h {
		delete(c.handles, h.key)
	}
	for _, dw := range h.watches {
		dw.deps = remove(dw.deps, h)
		if hs, ok := dw.files[h.name]; ok && h.name != "" {
			if hs = remove(hs, h); len(hs) == 0 {
				delete(dw.files, h.name)
			} else {
				dw.files[h.name] = hs
			}
		}
		dw.dirs = remove(dw.dirs, h)
		if len(dw.deps) == 0 {
			c.forget(dw, true)
		}
	}
	h.watches = nil
}

// remove deletes h from hs in place, keeping order.
func remove(hs []*Handle, h *Handle) []*Handle {
	if i := slices.Index(hs, h); i >= 0 {
		return slices.Delete(hs, i, i+1)
	}
	return hs
}

// register creates (or returns the existing) handle for key. dir is the
// directory to watch and name the entry within it ("" for a Dir handle).
func (c *core) register(key handleKey, dir, name string) *Handle {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Apply what is already queued first, so a watch whose directory has
	// just gone away is not handed to a new handle.
	c.drainLocked()
	if c.fd < 0 {
		return &Handle{lost: true}
	}
	if h := c.handles[key]; h != nil {
		return h
	}
	h := &Handle{key: key, name: name}
	h.stamp.Store(nextStamp())
	c.handles[key] = h

	// Ancestors first (top-down), for IN_DELETE_SELF/IN_MOVE_SELF only: a
	// renamed ancestor changes what the path names just as surely.
	for _, a := range ancestors(dir) {
		dw := c.addWatch(a, selfMask)
		if dw == nil {
			c.lose(h)
			return h
		}
		dw.deps = append(dw.deps, h)
		h.watches = append(h.watches, dw)
	}
	mask := entryMask | selfMask | inAttrib | inExclUnlink
	if key.content && key.dir {
		mask |= contentMask
	}
	dw := c.addWatch(dir, mask)
	if dw == nil {
		c.lose(h)
		return h
	}
	dw.deps = append(dw.deps, h)
	h.watches = append(h.watches, dw)
	if key.dir {
		dw.dirs = append(dw.dirs, h)
	} else {
		dw.files[name] = append(dw.files[name], h)
		if key.content && !c.follow(h) {
			c.lose(h)
			return h
		}
	}

	// Checked after the watches exist, so a swap that happens after the
	// check is reported by them.
	if !c.acceptable(key, dir) {
		c.lose(h)
	}
	return h
}

// acceptable reports whether a freshly watched handle can be trusted: no
// symbolic link in the directory or at the file, and a local file system.
func (c *core) acceptable(key handleKey, dir string) bool {
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return false
	}
	if !sysLocalFS(dir) {
		return false
	}
	if !key.dir && symlinkOrUnknown(key.path) {
		return false
	}
	return true
}

// addWatch adds (or extends) the watch on directory path and returns its
// record, or nil when the directory cannot be watched.
func (c *core) addWatch(path string, mask uint32) *dirWatch {
	wd, err := sysAddWatch(c.fd, path, mask|watchFlags)
	if err != nil || c.inodes[wd] != nil {
		return nil
	}
	dw := c.watches[wd]
	if dw == nil {
		dw = &dirWatch{wd: wd, files: make(map[string][]*Handle), path: path}
		c.watches[wd] = dw
	}
	dw.mask |= mask
	return dw
}

// ancestors returns the proper ancestors of the absolute directory dir, from
// the top down, without the root (which can be neither moved nor deleted).
func ancestors(dir string) []string {
	var out []string
	for d := filepath.Dir(dir); d != dir; dir, d = d, filepath.Dir(d) {
		if filepath.Dir(d) == d {
			break // d is the root
		}
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// close unwatches every handle and releases the descriptor. Idempotent.
func (c *core) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeLocked()
}

func (c *core) closeLocked() error {
	if c.fd < 0 {
		return nil
	}
	for _, h := range c.handles {
		h.lost = true
		h.stamp.Store(0)
		h.watches = nil
		h.inode = nil
	}
	c.handles = map[handleKey]*Handle{}
	c.watches = map[int32]*dirWatch{}
	c.inodes = map[int32]*fileWatch{}
	err := sysClose(c.fd)
	c.fd = -1
	c.buf = nil
	if err != nil {
		return fmt.Errorf("fswatch: closing the inotify descriptor: %w", err)
	}
	return nil
}
