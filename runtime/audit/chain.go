package audit

import (
	"bufio"
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// The audit chain (docs/state.md, "The audit chain"). Every line the
// Logger writes ends with two fields after the contract's:
//
//	..."staged_for":null,"seq":7,"prev":"hmac-sha256:<64 hex>"}
//
// seq numbers the file's records from 1; prev is the MAC of the previous
// line's bytes (without its newline), or Genesis on the first. The MAC is
// HMAC-SHA256 under a key derived from the vault key (ChainKey) when the
// gateway has one ("hmac-sha256:"), else plain SHA-256 ("sha256:"). So a
// line edited, removed, inserted or moved breaks the link of the line after
// it, a gap or a step back in seq shows a missing or reordered record, and
// a line cut short is not a record. What the chain cannot show by itself:
// records removed from the end (the last line links to nothing after it),
// and a whole file rewritten by someone holding the key (or, unkeyed, by
// anyone); anchoring the head (Verify's Head, printed by anvil audit
// verify) somewhere the writer cannot change covers both.

// Chain algorithms, the prefix of a link.
const (
	AlgHMAC   = "hmac-sha256"
	AlgSHA256 = "sha256"
)

// chainInfo is the HKDF info of the chain key: derived from the vault key,
// never the key itself, and never usable to open a vault record.
const chainInfo = "anvil/audit/chain/v1"

// ChainKey derives the audit chain's HMAC key from the vault key.
func ChainKey(vaultKey []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, vaultKey, nil, chainInfo, 32)
}

// Genesis is the first record's prev under alg: the link to nothing.
func Genesis(alg string) string { return alg + ":" + strings.Repeat("0", 64) }

// Link is the link (MAC) of data under key: "hmac-sha256:<hex>" with a
// key, "sha256:<hex>" without. The shared audit table chains its rows with
// it too.
func Link(key, data []byte) string {
	k := linker{key: key}
	return k.link(data)
}

// Alg is the chain algorithm of key: AlgHMAC with a key, else AlgSHA256.
func Alg(key []byte) string { return linker{key: key}.alg() }

// linker computes links: the MAC of a line under the chain's key. It keeps
// its hash between lines (a Logger links one line at a time, under its
// mutex), so a line's link costs no new hash state; a linker is not safe
// for concurrent use.
type linker struct {
	key []byte
	h   hash.Hash // made on first use, Reset before each line
}

func (k linker) alg() string {
	if k.key != nil {
		return AlgHMAC
	}
	return AlgSHA256
}

// link is the MAC of line (without its newline), as the next line's prev.
func (k *linker) link(line []byte) string {
	if k.h == nil {
		if k.key != nil {
			k.h = hmac.New(sha256.New, k.key)
		} else {
			k.h = sha256.New()
		}
	}
	k.h.Reset()
	k.h.Write(line)
	var sum [sha256.Size]byte
	alg := k.alg()
	out := make([]byte, 0, len(alg)+1+2*sha256.Size)
	out = append(append(out, alg...), ':')
	out = hex.AppendEncode(out, k.h.Sum(sum[:0]))
	return string(out)
}

// appendChain appends the chain fields to record (a JSON object ending in
// '}') and returns the line.
func appendChain(record []byte, seq uint64, prev string) []byte {
	b := append(record[:len(record)-1], `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"prev":"`...)
	b = append(b, prev...)
	return append(b, `"}`...)
}

// chainTail matches the chain fields at the end of a line.
var chainTail = regexp.MustCompile(`,"seq":([1-9][0-9]{0,18}),"prev":"((?:hmac-sha256|sha256):[0-9a-f]{64})"\}$`)

// ParseChained returns a line's seq and prev, ok false for a line that
// does not end with the chain fields (or is not one JSON object).
func ParseChained(line []byte) (seq uint64, prev string, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return 0, "", false
	}
	m := chainTail.FindSubmatch(line)
	if m == nil {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(string(m[1]), 10, 64)
	if err != nil {
		return 0, "", false
	}
	return seq, string(m[2]), true
}

// Record is a line without its chain fields: the contract's record.
func Record(line []byte) []byte {
	if loc := chainTail.FindIndex(line); loc != nil {
		out := append([]byte(nil), line[:loc[0]]...)
		return append(out, '}')
	}
	return line
}

// maxTail bounds how far back resume reads for the file's last line.
const maxTail = 8 << 20

// lastLine returns the last complete line of f (size bytes), without its
// newline; nil when f holds none.
func lastLine(f *os.File, size int64) ([]byte, error) {
	end := size
	// The file may end in a fragment (torn): the last complete line ends
	// at the last newline.
	var buf []byte
	for pos := size; pos > 0 && size-pos < maxTail; {
		n := int64(64 << 10)
		if n > pos {
			n = pos
		}
		pos -= n
		chunk := make([]byte, n)
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(chunk, buf...)
		if end == size {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				continue
			}
			end = pos + int64(i)
			buf = buf[:i]
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return buf[i+1:], nil
		}
		if pos == 0 && end != size {
			return buf, nil
		}
	}
	if end == size {
		return nil, nil
	}
	return nil, fmt.Errorf("the last audit line is longer than %d bytes", maxTail)
}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Key is the chain key (ChainKey of the vault key) for hmac-sha256
	// chains; nil checks sha256 chains only.
	Key []byte
	// Head, when set, is a link anchored elsewhere earlier (an earlier
	// Report.Head): the file must still hold the record it names, or
	// records were removed from its end or the file was rewritten.
	Head string
}

// Report is what Verify found in an intact file.
type Report struct {
	Records  int    // chained records
	Leading  int    // unchained lines before the first chained one (written before the chain existed)
	FirstSeq uint64 // the first chained record's seq
	LastSeq  uint64
	Head     string // the link of the last record: anchor it elsewhere
	Alg      string
}

// VerifyError is the first problem Verify found.
type VerifyError struct {
	Line    int // 1-based line of the file
	Problem string
}

func (e *VerifyError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Problem) }

// maxLine bounds one audit line as Verify reads it.
const maxLine = 16 << 20

// Verify reads an audit file's lines and checks its chain: each record's
// seq follows the previous one's, each prev is the MAC of the line before,
// the first record is seq 1 with the genesis link, and the file ends with
// a newline. It returns the first problem as a *VerifyError: an edited
// record (the next line's link does not match it), a missing record (a
// gap in seq, or a file starting past seq 1), a reordered record (seq
// steps back), a truncated record (a line that is not a complete chained
// record), or a head anchor that is not in the file.
func Verify(r io.Reader, o VerifyOptions) (Report, error) {
	var rep Report
	br := bufio.NewReaderSize(r, 64<<10)
	var prevLine []byte
	var want uint64
	var k linker
	headSeen := o.Head == ""
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		full := err == nil
		if errors.Is(err, bufio.ErrBufferFull) {
			acc := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(acc) < maxLine {
				line, err = br.ReadSlice('\n')
				acc = append(acc, line...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				return rep, &VerifyError{n, fmt.Sprintf("the line is longer than %d bytes: not a record", maxLine)}
			}
			line, full = acc, err == nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, err
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if !full {
			return rep, &VerifyError{n, "the file ends in a truncated record (no newline)"}
		}
		line = line[:len(line)-1]
		seq, prev, ok := ParseChained(line)
		if !ok {
			if rep.Records == 0 && len(line) > 0 && line[0] == '{' && bytes.HasSuffix(line, []byte("}")) && !bytes.Contains(line, []byte(`"prev":"`)) {
				rep.Leading++ // written before the chain existed
				continue
			}
			return rep, &VerifyError{n, "not a complete chained record (truncated, or its chain fields were edited)"}
		}
		alg, _, _ := strings.Cut(prev, ":")
		if rep.Records == 0 {
			rep.Alg = alg
			if alg == AlgHMAC {
				if o.Key == nil {
					return rep, &VerifyError{n, "the chain is keyed (hmac-sha256): give the vault key to verify it"}
				}
				k.key = o.Key
			}
			rep.FirstSeq = seq
			if seq != 1 || prev != Genesis(alg) {
				return rep, &VerifyError{n, fmt.Sprintf("the file starts at record %d: records 1 to %d are missing", seq, seq-1)}
			}
		} else {
			switch {
			case alg != rep.Alg:
				return rep, &VerifyError{n, "the chain changes algorithm: the record was edited"}
			case seq > want:
				return rep, &VerifyError{n, fmt.Sprintf("record %d follows record %d: records %d to %d are missing", seq, want-1, want, seq-1)}
			case seq < want:
				return rep, &VerifyError{n, fmt.Sprintf("record %d follows record %d: records are reordered or repeated", seq, want-1)}
			case prev != k.link(prevLine):
				return rep, &VerifyError{n - 1, fmt.Sprintf("record %d was edited (record %d's link does not match it)", want-1, seq)}
			}
		}
		rep.Records++
		rep.LastSeq = seq
		want = seq + 1
		prevLine = append(prevLine[:0], line...)
		if !headSeen && k.link(prevLine) == o.Head {
			headSeen = true
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if rep.Records > 0 {
		rep.Head = k.link(prevLine)
	}
	if !headSeen {
		return rep, &VerifyError{0, fmt.Sprintf("the anchored head %s is not in the file: records were removed from its end, or it was rewritten", o.Head)}
	}
	return rep, nil
}
