package framework

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestUntilCoversEveryPiece(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 5000} {
		seen := make([]atomic.Int32, n)
		NewParallelizer(16).Until(context.Background(), n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("n=%d: piece %d ran %d times", n, i, seen[i].Load())
			}
		}
	}
}

// UntilStop finishes every chunk it hands out, in order: what ran is a
// prefix, whatever the scheduling of the goroutines.
func TestUntilStopRunsAPrefix(t *testing.T) {
	const n = 5000
	for round := 0; round < 50; round++ {
		done := make([]atomic.Bool, n)
		var count atomic.Int64
		NewParallelizer(16).UntilStop(context.Background(), n, func(i int) {
			done[i].Store(true)
			count.Add(1)
		}, func() bool { return count.Load() >= 300 })
		k := 0
		for k < n && done[k].Load() {
			k++
		}
		for i := k; i < n; i++ {
			if done[i].Load() {
				t.Fatalf("round %d: piece %d ran after a gap at %d", round, i, k)
			}
		}
		if k < 300 {
			t.Fatalf("round %d: stopped after %d pieces, before 300", round, k)
		}
	}
}
