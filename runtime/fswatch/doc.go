// Package fswatch answers "did this file change?" cheaply and exactly, for
// hot paths that would otherwise os.Stat the same few files on every request.
//
// A [Watcher] owns one inotify instance. [Watcher.File] and [Watcher.Dir]
// return a [Handle] whose [Handle.Stamp] is a non-zero number that increases
// whenever [Watcher.Poll] applied an event concerning that file or directory.
// Poll drains the inotify queue with non-blocking reads, so a change whose
// system call returned before Poll was called is reflected in the stamps once
// Poll returns. When nothing is pending Poll costs one read system call and
// does not allocate; Stamp is a single atomic load.
//
// A stamp of 0 means "unwatched": the caller must check the file itself every
// time. Handles are unwatched when inotify is unavailable (not Linux, out of
// instances, any error), after [Watcher.Close], when the path or its directory
// involves a symbolic link (symlink swaps are invisible to a directory watch),
// when the directory is not on a local file system (remote changes to NFS,
// SMB, FUSE, 9p and similar are not reported by inotify), and for good once
// the directory or one of its ancestors has been deleted, moved or unmounted,
// or a symbolic link has been put in place of a watched file.
//
// # Consumer pattern
//
// Read the stamp after the owner's Poll and before looking at the file. A
// change racing the stat then bumps the stamp later, so the next request sees
// a mismatch and reloads:
//
//	w.Poll()                       // once per request, by the owner
//	s := h.Stamp()
//	if s != 0 && s == cached.stamp {
//		// use cached
//	} else {
//		// stat/read the file; cached = ...; cached.stamp = s
//	}
//
// # What a handle reports
//
// A File handle is bumped when its name is created, deleted, or renamed to or
// from in its directory, when the directory's own attributes change
// (permissions may make the file unreachable), and, with content true, on
// IN_MODIFY, IN_CLOSE_WRITE and IN_ATTRIB of the file the name names. Entry
// events are dispatched by name, so writes to a sibling never bump it; content
// events come from a watch on the file itself, moved to the new file whenever
// the name is replaced, so writes to a sibling (an audit log appended to on
// every request next to a watched JWKS file) do not even reach the queue. A
// Dir handle is bumped on any entry event in the directory (content adds
// modify/close-write/attrib of any entry, and so does queue them). An
// IN_Q_OVERFLOW, or a malformed read, bumps every handle.
//
// [Watcher.PollWithin] skips the read when a drain began less than a given
// time ago: a server polling at the start of each request can rely on that
// poll again at the end of a short one.
//
// Not reported, so keep to a plain stat if they matter: content written
// through memory mappings; for a Dir handle, content written through a hard
// link living in another directory or to the target of a symbolic link entry;
// a file system mounted over the path after the handle was made; permission
// changes on ancestors above the file's own directory.
package fswatch
