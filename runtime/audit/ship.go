package audit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// ShipRecord is one chained record of an audit file, for a Sink.
type ShipRecord struct {
	Seq  uint64
	Line []byte // the line as the file holds it, without its newline
}

// Sink is a shared, append-only audit trail several gateways ship their
// files into (runtime/store/pgstore's anvil_audit table). source names one
// file's chain: the link of its first record.
type Sink interface {
	// AuditShipped is the highest seq of source's records the sink holds.
	AuditShipped(ctx context.Context, source string) (uint64, error)
	// AppendAudit appends recs (in seq order) after the sink's head,
	// skipping any it already holds.
	AppendAudit(ctx context.Context, source string, recs []ShipRecord) error
}

// Shipping pace and batch bounds.
const (
	shipEvery    = time.Second
	shipMaxDelay = 5 * time.Second
	shipBatch    = 500
)

// Shipper copies the chained records of an audit file into a Sink: each
// record once, in the file's order, from where the sink's copy of the file's
// chain ends, so a gateway that was killed, or lost the sink for a while,
// resumes where it stopped. The file is the durable buffer: a record is in
// the shared trail a moment after its line is written, and its line stays
// in the file whatever happens to the sink.
type Shipper struct {
	path string
	key  []byte
	sink Sink
	logf func(string, ...any)

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once

	// The file being shipped: identity, read offset, its chain's source
	// and the last seq the sink holds.
	fi      os.FileInfo
	offset  int64
	source  string
	shipped uint64
}

// Ship starts shipping the logger's file into sink; the logger pokes it
// after each line. stop ends it (pending records are shipped by the next
// start).
func (l *Logger) Ship(sink Sink, logf func(string, ...any)) (stop func()) {
	if l == nil || sink == nil {
		return func() {}
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Shipper{path: l.path, key: l.links.key, sink: sink, logf: logf,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	l.mu.Lock()
	l.shipper = s
	l.mu.Unlock()
	go s.run()
	s.poke()
	return func() {
		s.once.Do(func() { close(s.stop) })
		<-s.done
		l.mu.Lock()
		l.shipper = nil
		l.mu.Unlock()
	}
}

func (s *Shipper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Shipper) run() {
	defer close(s.done)
	delay := shipEvery
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-t.C:
		}
		err := s.shipOnce()
		if err != nil {
			s.logf("anvil: shipping the audit file to the shared trail: %v (retrying)", err)
			delay = min(delay*2, shipMaxDelay)
		} else {
			delay = shipEvery
		}
		t.Reset(delay)
	}
}

// shipOnce ships what the file holds beyond what the sink holds.
func (s *Shipper) shipOnce() error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if s.fi == nil || !os.SameFile(s.fi, fi) || fi.Size() < s.offset {
		// A new file (the first look, a rotation, a truncation): find its
		// chain from the start.
		s.fi, s.offset, s.source, s.shipped = fi, 0, "", 0
	}
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var batch []ShipRecord
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.sink.AppendAudit(ctx, s.source, batch); err != nil {
			return err
		}
		s.shipped = batch[len(batch)-1].Seq
		batch = batch[:0]
		return nil
	}
	offset := s.offset
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break // EOF, or a line still being written: the next look reads it
		}
		next := offset + int64(len(line))
		line = line[:len(line)-1]
		seq, _, ok := ParseChained(line)
		if ok && s.source == "" && seq == 1 {
			s.source = Link(s.key, line)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s.shipped, err = s.sink.AuditShipped(ctx, s.source)
			cancel()
			if err != nil {
				s.source = ""
				return err
			}
		}
		if ok && s.source != "" && seq > s.shipped {
			batch = append(batch, ShipRecord{Seq: seq, Line: append([]byte(nil), line...)})
			if len(batch) == shipBatch {
				if err := flush(); err != nil {
					return err
				}
				s.offset = next
			}
		}
		offset = next
	}
	if err := flush(); err != nil {
		return err
	}
	s.offset = offset
	return nil
}
