//go:build linux

package fswatch

import (
	"os"
	"path/filepath"
	"testing"
)

// watchedJWKS makes a JWKS file in a fresh directory and a watcher with a
// content handle on it.
func watchedJWKS(b *testing.B) (dir string, w *Watcher, h *Handle) {
	dir = b.TempDir()
	path := filepath.Join(dir, "jwks.json")
	writeFile(b, path, "{}")
	w = newWatcher(b)
	return dir, w, w.File(path, true)
}

// BenchmarkPollIdle measures one Poll with nothing pending: one read
// system call returning EAGAIN.
func BenchmarkPollIdle(b *testing.B) {
	_, w, h := watchedJWKS(b)
	b.ReportAllocs()
	for b.Loop() {
		w.Poll()
		_ = h.Stamp()
	}
}

// BenchmarkPollIdleParallel is BenchmarkPollIdle from many goroutines,
// which share drains instead of each issuing a read.
func BenchmarkPollIdleParallel(b *testing.B) {
	_, w, h := watchedJWKS(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Poll()
			_ = h.Stamp()
		}
	})
}

// BenchmarkStat is what Poll replaces: one os.Stat of the file.
func BenchmarkStat(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "jwks.json")
	writeFile(b, path, "{}")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.Stat(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPollAfterSiblingAppend is the gateway's pattern: an audit line
// appended next to the watched JWKS file, then the next request's Poll.
// The sibling's writes queue nothing, so this is the append plus an idle
// Poll.
func BenchmarkPollAfterSiblingAppend(b *testing.B) {
	dir, w, h := watchedJWKS(b)
	f, err := os.OpenFile(filepath.Join(dir, "audit.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := []byte(`{"time":"2026-01-01T00:00:00.000Z","decision":"allowed"}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		w.Poll()
		_ = h.Stamp()
	}
}
