//go:build linux

package fswatch

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPollIdle measures one Poll with nothing pending: one read
// system call returning EAGAIN.
func BenchmarkPollIdle(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "jwks.json")
	writeFile(b, path, "{}")
	w := newWatcher(b)
	h := w.File(path, true)
	b.ReportAllocs()
	for b.Loop() {
		w.Poll()
		_ = h.Stamp()
	}
}

// BenchmarkPollIdleParallel is BenchmarkPollIdle from many goroutines,
// which share drains instead of each issuing a read.
func BenchmarkPollIdleParallel(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "jwks.json")
	writeFile(b, path, "{}")
	w := newWatcher(b)
	h := w.File(path, true)
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
