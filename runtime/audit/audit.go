// Package audit writes the gateway's audit log (ANVIL_AUDIT_FILE): one JSON
// line per tool call, with the contract's keys in the contract's order
// (anvil-reference §e "Audit log"). Branchyard tails the file and consumes only
// complete, newline-terminated lines, so every line is written with a single
// write call on a file opened with O_APPEND.
//
// Writing never decides a call's outcome: when Write returns an error the
// caller reports it on stderr and carries on with the call.
package audit

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

// ErrWrite wraps every error Open and Write return.
var ErrWrite = errors.New("audit: cannot write the audit log")

// Decisions recorded in a line's "decision" key.
const (
	DecisionAllowed              = "allowed"
	DecisionDenied               = "denied"
	DecisionConfirmationRequired = "confirmation_required"
)

// DecisionFor returns a line's decision from the call's error code (empty
// for a success): policy_denied (a grant refusal or any other policy
// refusal) is denied, confirmation_required (the grant's or the caller's
// missing confirm) is confirmation_required, and everything else is allowed,
// even when the call failed later (auth_required for a missing connection,
// upstream errors).
func DecisionFor(errorCode string) string {
	switch errorCode {
	case envelope.PolicyDenied:
		return DecisionDenied
	case envelope.ConfirmationRequired:
		return DecisionConfirmationRequired
	}
	return DecisionAllowed
}

// Line is one audit record. MarshalJSON writes exactly the contract's keys in
// the contract's order:
//
//	time, sub, by_tenant, by_branch, by_turn, connector, account, operation,
//	decision, grant, upstream_status, latency_ms, input_sha256, error_code,
//	rule, dry_run, trace_id, effect_class, ledger_id, staged_for
//
// followed by iss for an OIDC caller and replay for a ledger replay.
//
// The keys that may be null are pointer fields (or a RawMessage for Grant):
// nil is written as null, anything else as its value. Optional turns an
// empty string into nil.
type Line struct {
	// Time is when the call was received; Write uses the current time when
	// it is zero. Written as RFC 3339 UTC with milliseconds ("…T…:…:….123Z").
	Time time.Time
	// Sub is the token's subject.
	Sub string
	// ByTenant, ByBranch and ByTurn are the token's attribution claims (nil
	// when absent or empty).
	ByTenant, ByBranch, ByTurn *string
	// Connector is the connector id the tool was served under.
	Connector string
	// Account is the allowed (or refusing) grant entry's account.
	Account *string
	// Operation is the AIR operation id (a staged call: the draft's id).
	Operation string
	// Decision is one of the Decision constants (see DecisionFor).
	Decision string
	// Grant is the deciding entry as {"index": n, ...entry} (see
	// GrantWithIndex); nil or empty is null.
	Grant json.RawMessage
	// UpstreamStatus is the upstream's HTTP status; nil when nothing was
	// sent or no answer came back.
	UpstreamStatus *int
	// LatencyMs is the call's duration in milliseconds.
	LatencyMs int64
	// InputSHA256 is InputSHA256 of the call's arguments.
	InputSHA256 string
	// ErrorCode is the error envelope's code when the call failed.
	ErrorCode *string
	// Rule is a grant sub-code such as "policy/grant_denied".
	Rule *string
	// DryRun marks a dry run.
	DryRun bool
	// TraceID is the call's trace id (NewTraceID).
	TraceID string
	// EffectClass is the operation's effect class; every line carries one.
	EffectClass string
	// LedgerID is the caller's idempotency key, whether or not it was sent upstream.
	LedgerID *string
	// StagedFor is the staged operation's id on a staged call.
	StagedFor *string
	// Replay marks a write answered from the gateway's idempotency ledger
	// (nothing went upstream); written as "replay":true, and only then.
	Replay bool
	// Issuer is the iss of the caller's OIDC access token (inbound auth
	// mode oidc), written as "iss" after staged_for, and only when set: a
	// Branchyard line keeps the contract's keys exactly.
	Issuer string
	// ResolvedBy is "lookup" when a write whose earlier attempt's outcome
	// was unknown was answered by its declared lookup (the earlier attempt
	// had acted); written as "resolved_by", and only then.
	ResolvedBy string
	// ParentTraceID is the trace id of the caller's traceparent, when it
	// sent one and tracing is on: the gateway's call span links to it, but
	// TraceID is always the gateway's own (a caller cannot make two calls
	// share an audit id). Written as "parent_trace_id", and only then.
	ParentTraceID string
}

// Optional returns &s, or nil for the empty string: the value of a nullable
// Line field.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// TimeFormat is the layout of a line's time: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// MarshalJSON renders the line as compact JSON in the contract's key order.
// Strings are escaped as JavaScript's JSON.stringify escapes them (no HTML
// escaping). Grant must be valid JSON when set.
//
// json.Marshal(line) re-escapes '<', '>' and '&' in the result; call
// MarshalJSON directly (as Logger.Write does) for the exact bytes.
func (l Line) MarshalJSON() ([]byte, error) {
	return l.appendJSON(make([]byte, 0, 512))
}

func (l *Line) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"time":"`...)
	b = l.Time.UTC().AppendFormat(b, TimeFormat) // digits and -:.TZ only: nothing to escape
	b = append(b, '"')
	b = appendString(b, "sub", l.Sub)
	b = appendNullable(b, "by_tenant", l.ByTenant)
	b = appendNullable(b, "by_branch", l.ByBranch)
	b = appendNullable(b, "by_turn", l.ByTurn)
	b = appendString(b, "connector", l.Connector)
	b = appendNullable(b, "account", l.Account)
	b = appendString(b, "operation", l.Operation)
	b = appendString(b, "decision", l.Decision)
	b = append(b, `,"grant":`...)
	if len(bytes.TrimSpace(l.Grant)) == 0 {
		b = append(b, "null"...)
	} else {
		buf := bytes.NewBuffer(b) // compact straight onto the line
		if err := json.Compact(buf, l.Grant); err != nil {
			return nil, fmt.Errorf("audit: grant is not valid JSON: %w", err)
		}
		b = buf.Bytes()
	}
	b = append(b, `,"upstream_status":`...)
	if l.UpstreamStatus == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*l.UpstreamStatus), 10)
	}
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendInt(b, l.LatencyMs, 10)
	b = appendString(b, "input_sha256", l.InputSHA256)
	b = appendNullable(b, "error_code", l.ErrorCode)
	b = appendNullable(b, "rule", l.Rule)
	b = append(b, `,"dry_run":`...)
	b = strconv.AppendBool(b, l.DryRun)
	b = appendString(b, "trace_id", l.TraceID)
	b = appendString(b, "effect_class", l.EffectClass)
	b = appendNullable(b, "ledger_id", l.LedgerID)
	b = appendNullable(b, "staged_for", l.StagedFor)
	if l.Issuer != "" {
		b = appendString(b, "iss", l.Issuer)
	}
	if l.Replay {
		b = append(b, `,"replay":true`...)
	}
	if l.ResolvedBy != "" {
		b = appendString(b, "resolved_by", l.ResolvedBy)
	}
	if l.ParentTraceID != "" {
		b = appendString(b, "parent_trace_id", l.ParentTraceID)
	}
	return append(b, '}'), nil
}

// appendString appends ,"key":"v" (key needs no escaping).
func appendString(b []byte, key, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return canon.AppendString(b, v)
}

// appendNullable appends ,"key":null for a nil v, else ,"key":"*v".
func appendNullable(b []byte, key string, v *string) []byte {
	if v == nil {
		b = append(b, ',', '"')
		b = append(b, key...)
		return append(b, `":null`...)
	}
	return appendString(b, key, *v)
}

// GrantWithIndex returns {"index": index, ...entry}: the grant entry that
// decided a call, as a line's Grant. entry must marshal to a JSON object; its
// keys keep their order after "index".
func GrantWithIndex(index int, entry any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(entry); err != nil {
		return nil, fmt.Errorf("audit: grant entry: %w", err)
	}
	obj := bytes.TrimSpace(buf.Bytes())
	if len(obj) < 2 || obj[0] != '{' {
		return nil, errors.New("audit: grant entry is not a JSON object")
	}
	out := make([]byte, 0, len(obj)+16)
	out = append(out, `{"index":`...)
	out = strconv.AppendInt(out, int64(index), 10)
	if rest := bytes.TrimSpace(obj[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, obj[1:]...)
	return out, nil
}

// Logger appends lines to the audit file. A nil *Logger discards lines, so a
// gateway without ANVIL_AUDIT_FILE can call Write unconditionally. A Logger is
// safe for concurrent use.
//
// The file is opened once (O_APPEND|O_CREATE|O_RDWR, mode 0600 when
// created) and each Write writes one complete line with a single write call.
// A short write (disk full, file-size limit) is undone by truncating the file
// back to where the line started when the file still ends with that
// fragment, and otherwise terminated with a newline; when neither succeeds,
// or the file was found ending in a fragment when opened, the next line
// starts with a newline. Every complete record is so its own line.
// Before each write the path is checked to still name the open file, so a
// log that is moved or removed is re-created on the next line rather than
// written into an unlinked file (as the earlier gateway's appendFileSync did). A mutex keeps writers of one Logger from interleaving;
// O_APPEND keeps whole lines from different processes apart.
type Logger struct {
	path string
	mu   sync.Mutex
	now  func() time.Time
	// f is the open log file; it is reopened when the path no longer names
	// it (the log was moved or removed), so appends never go to a file that
	// is gone from the directory.
	f *os.File
	// fi is f's identity, taken by fstat when it was opened (an open file
	// keeps its device and inode), so each write needs only a stat of path.
	fi os.FileInfo
	// watcher and watch, when set (Watch), replace that stat: while the
	// path's stamp is the one seen when the path last named f (stamp), no
	// rename, removal or creation has touched it.
	watcher *fswatch.Watcher
	watch   *fswatch.Handle
	stamp   uint64
	// torn is set when f's last byte is not a newline (a fragment left by
	// a short write this logger could not undo, or by another writer): the
	// next line then starts with a newline, so it is never glued to it.
	torn bool
	// writeFile is f.Write; tests replace it to simulate short writes.
	writeFile func(f *os.File, b []byte) (int, error)

	// The chain (chain.go): the link computer, the last record's seq and
	// link, and the file's size right after this logger's last write (-1:
	// unknown). A file whose size is not end was written by someone else
	// (another process, a rotation): the chain resumes from its last line.
	links linker
	seq   uint64
	prev  string
	end   int64
	// shipper, when set (Ship), is poked after each line.
	shipper *Shipper
}

// Options tune a Logger.
type Options struct {
	// ChainKey keys the chain's MACs (ChainKey of the vault key); nil
	// chains with plain SHA-256.
	ChainKey []byte
}

// WatchFreshness is how recent a poll of the logger's watcher may be for a
// write to rely on it instead of polling again (see Watch).
const WatchFreshness = time.Millisecond

// Watch makes the logger learn from w, instead of a stat before every line,
// that its path still names the open file: each write polls w (one
// non-blocking read, skipped when w was polled less than WatchFreshness ago,
// as a gateway does at the start of every request) and stats the path only
// after w reported a change to it. A log moved or removed more than
// WatchFreshness before a write is so never written to. On a path w cannot
// watch the logger keeps its stat.
func (l *Logger) Watch(w *fswatch.Watcher) {
	if l == nil || w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watcher, l.watch, l.stamp = w, w.File(l.path, false), 0
}

// Open returns a Logger appending to path, creating the file with mode 0600
// now so a bad path is reported at start-up. An existing file's mode is left
// as it is.
func Open(path string) (*Logger, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options: the chain key.
func OpenWith(path string, o Options) (*Logger, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no path", ErrWrite)
	}
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	l := &Logger{path: path, now: time.Now, f: f, links: linker{key: o.ChainKey}, end: -1}
	l.fi, _ = f.Stat() // nil on failure: the first write reopens
	l.torn = endsTorn(f, l.fi)
	return l, nil
}

// Close closes the log file. Later writes reopen it.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.fi, l.stamp = nil, nil, 0
	return err
}

// file returns the open log file, reopening it when the path names another
// file or none. The caller holds l.mu.
func (l *Logger) file() (*os.File, error) {
	var stamp uint64
	if l.watch != nil {
		l.watcher.PollWithin(WatchFreshness)
		stamp = l.watch.Stamp()
	}
	if l.f != nil {
		if stamp != 0 && stamp == l.stamp {
			return l.f, nil
		}
		at, err := os.Stat(l.path)
		if err == nil && l.fi != nil && os.SameFile(l.fi, at) {
			l.stamp = stamp
			return l.f, nil
		}
		l.f.Close()
		l.f, l.fi = nil, nil
	}
	f, err := openAppend(l.path)
	if err != nil {
		return nil, err
	}
	l.f = f
	l.fi, _ = f.Stat() // nil on failure: the next write reopens
	l.torn = endsTorn(f, l.fi)
	l.end = -1
	l.stamp = 0
	if l.fi != nil {
		l.stamp = stamp
	}
	return f, nil
}

// Path returns the file the logger appends to ("" for a nil Logger).
func (l *Logger) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// endsTorn reports whether the non-empty file f (of info fi) does not end
// with a newline, or cannot be read to tell.
func endsTorn(f *os.File, fi os.FileInfo) bool {
	if fi == nil || fi.Size() == 0 {
		return false
	}
	var last [1]byte
	_, err := f.ReadAt(last[:], fi.Size()-1)
	return err != nil || last[0] != '\n'
}

// recoverShortWrite undoes the fragment frag that a short write left at the
// end of f: it truncates f back when f still ends with frag (no other writer
// appended since), else it terminates the fragment with a newline. Either
// may fail (the disk is still full); the file is then reopened for the next
// line, which finds the fragment (endsTorn) and starts with a newline.
func recoverShortWrite(f *os.File, frag []byte) {
	if fi, err := f.Stat(); err == nil && fi.Size() >= int64(len(frag)) {
		start := fi.Size() - int64(len(frag))
		tail := make([]byte, len(frag))
		if _, err := f.ReadAt(tail, start); err == nil && bytes.Equal(tail, frag) && f.Truncate(start) == nil {
			return
		}
	}
	_, _ = f.Write([]byte{'\n'})
}

func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return f, nil
}

// Write appends line as one JSON line. A zero line.Time is set to now. On a
// nil Logger it does nothing and returns nil. An error (wrapping ErrWrite)
// means the line was not recorded; the caller reports it on stderr and does
// not fail the call because of it.
func (l *Logger) Write(line Line) error {
	if l == nil {
		return nil
	}
	if line.Time.IsZero() {
		line.Time = l.now()
	}
	b, err := line.appendJSON(make([]byte, 0, 512))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.file()
	if err != nil {
		return err
	}
	if lockFile(f) {
		defer unlockFile(f)
	}
	if err := l.resume(f); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	b = appendChain(b, l.seq+1, l.prev)
	link := l.links.link(b)
	b = append(b, '\n')
	if l.torn {
		b = append(b, 0)
		copy(b[1:], b)
		b[0] = '\n'
	}
	write := l.writeFile
	if write == nil {
		write = (*os.File).Write
	}
	n, werr := write(f, b)
	if werr == nil && n != len(b) {
		werr = fmt.Errorf("short write (%d of %d bytes)", n, len(b))
	}
	if werr == nil {
		l.torn = false
		l.seq, l.prev = l.seq+1, link
		if l.end >= 0 {
			l.end += int64(n)
		}
		if l.shipper != nil {
			l.shipper.poke()
		}
		return nil
	}
	l.end = -1
	if n > 0 && n < len(b) {
		recoverShortWrite(f, b[:n])
	}
	f.Close() // the next line reopens the file and checks how it ends
	l.f, l.fi, l.stamp = nil, nil, 0
	return fmt.Errorf("%w: %w", ErrWrite, werr)
}

// resume brings the chain up to f's last line when f is not as this
// logger left it (first write, reopened, or appended to by another
// process), and re-reads whether f ends in a fragment. The caller holds
// l.mu and f's lock.
func (l *Logger) resume(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == l.end && l.end >= 0 {
		return nil
	}
	l.torn = endsTorn(f, fi)
	last, err := lastLine(f, fi.Size())
	if err != nil {
		return err
	}
	if seq, _, ok := ParseChained(last); ok {
		l.seq, l.prev = seq, l.links.link(last)
	} else {
		l.seq, l.prev = 0, Genesis(l.links.alg()) // a new file, or one written before the chain
	}
	l.end = fi.Size()
	return nil
}

// NewTraceID returns a new random trace id: "trace_" and 32 hex digits.
func NewTraceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "trace_" + hex.EncodeToString(b[:])
}
