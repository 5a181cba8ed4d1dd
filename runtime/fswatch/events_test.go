package fswatch

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// record encodes one inotify_event with name NUL padded to a multiple of pad
// bytes (pad 0: no name bytes at all unless name is non-empty, then one NUL).
func record(wd int32, mask, cookie uint32, name string, pad int) []byte {
	nameLen := 0
	if name != "" || pad > 0 {
		nameLen = len(name) + 1
		if pad > 0 && nameLen%pad != 0 {
			nameLen += pad - nameLen%pad
		}
	}
	b := make([]byte, eventHeader+nameLen)
	binary.NativeEndian.PutUint32(b[0:4], uint32(wd))
	binary.NativeEndian.PutUint32(b[4:8], mask)
	binary.NativeEndian.PutUint32(b[8:12], cookie)
	binary.NativeEndian.PutUint32(b[12:16], uint32(nameLen))
	copy(b[eventHeader:], name)
	return b
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestNextEvent(t *testing.T) {
	type want struct {
		wd     int32
		mask   uint32
		cookie uint32
		name   string
	}
	tests := []struct {
		name      string
		buf       []byte
		want      []want
		truncated bool
	}{
		{name: "empty", buf: nil},
		{
			name: "one record padded name",
			buf:  record(3, inCreate, 0, "jwks.json", 16),
			want: []want{{3, inCreate, 0, "jwks.json"}},
		},
		{
			name: "zero-length name",
			buf:  record(1, inDeleteSelf, 0, "", 0),
			want: []want{{1, inDeleteSelf, 0, ""}},
		},
		{
			name: "name of NULs only",
			buf:  record(1, inAttrib, 0, "", 16),
			want: []want{{1, inAttrib, 0, ""}},
		},
		{
			name: "name exactly filling its length",
			buf: func() []byte {
				b := record(2, inModify, 0, "abcd", 0) // len 5 with one NUL
				binary.NativeEndian.PutUint32(b[12:16], 4)
				return b[:eventHeader+4]
			}(),
			want: []want{{2, inModify, 0, "abcd"}},
		},
		{
			name: "overflow and several records",
			buf: concat(
				record(-1, inQOverflow, 0, "", 0),
				record(7, inMovedFrom, 42, "a", 16),
				record(7, inMovedTo, 42, "b", 32),
			),
			want: []want{{-1, inQOverflow, 0, ""}, {7, inMovedFrom, 42, "a"}, {7, inMovedTo, 42, "b"}},
		},
		{
			name:      "header cut short",
			buf:       concat(record(1, inCreate, 0, "x", 16), record(1, inDelete, 0, "y", 16)[:10]),
			want:      []want{{1, inCreate, 0, "x"}},
			truncated: true,
		},
		{
			name:      "name cut short",
			buf:       concat(record(1, inCreate, 0, "x", 16), record(1, inDelete, 0, "y", 16)[:eventHeader+3]),
			want:      []want{{1, inCreate, 0, "x"}},
			truncated: true,
		},
		{
			name: "huge length",
			buf: func() []byte {
				b := record(1, inCreate, 0, "x", 16)
				binary.NativeEndian.PutUint32(b[12:16], 0xFFFFFFFF)
				return b
			}(),
			truncated: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []want
			b := tt.buf
			truncated := false
		loop:
			for {
				ev, rest, st := nextEvent(b)
				switch st {
				case parseEnd:
					break loop
				case parseTruncated:
					truncated = true
					break loop
				}
				got = append(got, want{ev.wd, ev.mask, ev.cookie, string(ev.name)})
				b = rest
			}
			if truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", truncated, tt.truncated)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %+v, want %+v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// FuzzNextEvent checks that arbitrary bytes never make the parser panic or
// loop, and that every record it accepts lies inside the buffer.
func FuzzNextEvent(f *testing.F) {
	f.Add([]byte{})
	f.Add(record(1, inCreate, 0, "jwks.json", 16))
	f.Add(concat(record(-1, inQOverflow, 0, "", 0), record(2, inModify, 0, "a", 0)))
	f.Add(record(1, inCreate, 0, "x", 16)[:20])
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		limit := len(b)/eventHeader + 1
		for steps := 0; ; steps++ {
			if steps > limit {
				t.Fatalf("parser did not make progress on %x", b)
			}
			ev, rest, st := nextEvent(b)
			if st != parseOK {
				return
			}
			used := len(b) - len(rest)
			if used < eventHeader || used > len(b) || len(ev.name) > used-eventHeader {
				t.Fatalf("record of %d bytes, name %d, buffer %d", used, len(ev.name), len(b))
			}
			if bytes.IndexByte(ev.name, 0) >= 0 {
				t.Fatalf("name %q keeps a NUL", ev.name)
			}
			b = rest
		}
	})
}
