package fswatch

import (
	"bytes"
	"encoding/binary"
)

// inotify mask bits (Linux ABI, <sys/inotify.h>). They are spelled out here
// rather than taken from package syscall so that the event parser and the
// dispatcher build and can be tested on every system.
const (
	inModify     uint32 = 0x00000002
	inAttrib     uint32 = 0x00000004
	inCloseWrite uint32 = 0x00000008
	inMovedFrom  uint32 = 0x00000040
	inMovedTo    uint32 = 0x00000080
	inCreate     uint32 = 0x00000100
	inDelete     uint32 = 0x00000200
	inDeleteSelf uint32 = 0x00000400
	inMoveSelf   uint32 = 0x00000800
	inUnmount    uint32 = 0x00002000
	inQOverflow  uint32 = 0x00004000
	inIgnored    uint32 = 0x00008000
	inOnlyDir    uint32 = 0x01000000
	inDontFollow uint32 = 0x02000000
	inExclUnlink uint32 = 0x04000000
	inMaskAdd    uint32 = 0x20000000
	inIsDir      uint32 = 0x40000000
)

const (
	// entryMask: a name appeared in or left the directory.
	entryMask = inCreate | inDelete | inMovedFrom | inMovedTo
	// contentMask: the data or attributes of an entry changed.
	contentMask = inModify | inCloseWrite | inAttrib
	// selfMask: the watched directory itself went away.
	selfMask = inDeleteSelf | inMoveSelf
	// lostMask: events after which a watch no longer describes the path.
	lostMask = inIgnored | inDeleteSelf | inMoveSelf | inUnmount
	// watchFlags are added to every inotify_add_watch call: directories
	// only, never through a symlink, and union with any existing mask.
	watchFlags = inOnlyDir | inDontFollow | inMaskAdd
)

// eventHeader is sizeof(struct inotify_event) without the name:
// int wd; uint32 mask; uint32 cookie; uint32 len.
const eventHeader = 16

// maxEvent is the largest event record: eventHeader + NAME_MAX + 1.
const maxEvent = eventHeader + 255 + 1

// bufSize holds many events per read (the minimum for one is maxEvent).
const bufSize = 8192

// rawEvent is one decoded inotify_event. name aliases the read buffer and has
// its NUL padding removed; it is empty for events on the watched directory
// itself and for queue-wide events.
type rawEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   []byte
}

// parseStatus says what nextEvent found.
type parseStatus uint8

const (
	parseOK        parseStatus = iota // ev is valid, continue with rest
	parseEnd                          // the buffer is exhausted
	parseTruncated                    // the buffer ends inside a record
)

// nextEvent decodes the first inotify_event record of b. It never panics: a
// header or name running past the end of b yields parseTruncated.
func nextEvent(b []byte) (ev rawEvent, rest []byte, st parseStatus) {
	if len(b) == 0 {
		return rawEvent{}, nil, parseEnd
	}
	if len(b) < eventHeader {
		return rawEvent{}, nil, parseTruncated
	}
	n := binary.NativeEndian.Uint32(b[12:16])
	if uint64(n) > uint64(len(b)-eventHeader) {
		return rawEvent{}, nil, parseTruncated
	}
	end := eventHeader + int(n)
	name := b[eventHeader:end]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	ev = rawEvent{
		wd:     int32(binary.NativeEndian.Uint32(b[0:4])),
		mask:   binary.NativeEndian.Uint32(b[4:8]),
		cookie: binary.NativeEndian.Uint32(b[8:12]),
		name:   name,
	}
	return ev, b[end:], parseOK
}
