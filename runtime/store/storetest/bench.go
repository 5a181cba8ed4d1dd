package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
)

// BenchLedger measures one ledger write as the gateway makes it: Begin
// (OutcomeNew) then Complete with a small answer, on fresh ids, from
// parallel callers (8 per CPU). Besides ns/op it reports throughput (writes/s) and the
// median latency of one Begin+Complete (p50-µs), the figures of the load
// table's store rows.
func BenchLedger(b *testing.B, s store.Store) {
	ctx := context.Background()
	ans := store.Answer{Status: 201, Result: []byte(`{"id":12345,"state":"open"}`), Effect: []byte(`{"kind":"create","undo":"close"}`)}
	var seq atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(8) // 8 callers per CPU: a gateway serves many connections at once
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			r, err := s.Begin(ctx, store.LedgerKey{Subject: "bench", ID: fmt.Sprint("id-", seq.Add(1)), Tool: "t.create", InputHash: "h"})
			if err != nil || r.Outcome != store.OutcomeNew {
				b.Errorf("Begin = %v, %v", r.Outcome, err)
				return
			}
			if err := s.Complete(ctx, r.Lease, ans); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}
