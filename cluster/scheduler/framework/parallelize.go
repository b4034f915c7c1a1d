package framework

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is upstream's: 16 workers.
const DefaultParallelism = 16

// Parallelizer runs a function over pieces [0, n) on at most Workers
// goroutines, handing out chunks in increasing order.
type Parallelizer struct {
	Workers int
}

// NewParallelizer returns a parallelizer with n workers (at least 1).
func NewParallelizer(n int) Parallelizer {
	if n < 1 {
		n = 1
	}
	return Parallelizer{Workers: n}
}

// chunkSize is upstream's: about sqrt(n) pieces per chunk, but enough
// chunks for every worker.
func chunkSize(n, workers int) int {
	s := int(math.Sqrt(float64(n)))
	if r := n/workers + 1; s > r {
		s = r
	}
	return max(s, 1)
}

// Until calls do(i) for every i in [0, n). It returns when all calls have
// returned or, if ctx ends, when the running calls have returned.
func (p Parallelizer) Until(ctx context.Context, n int, do func(i int)) {
	p.UntilStop(ctx, n, do, nil)
}

// UntilStop is Until that stops handing out chunks once stop() is true.
// Chunks are taken in order and a taken chunk is always finished, so the
// pieces done are exactly [0, k) for some k: callers that need a
// deterministic result read the prefix.
func (p Parallelizer) UntilStop(ctx context.Context, n int, do func(i int), stop func() bool) {
	if n <= 0 {
		return
	}
	workers := max(p.Workers, 1)
	chunk := chunkSize(n, workers)
	chunks := (n + chunk - 1) / chunk
	workers = min(workers, chunks)
	var next atomic.Int64
	work := func() {
		for {
			if ctx.Err() != nil || (stop != nil && stop()) {
				return
			}
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			end := min((c+1)*chunk, n)
			for i := c * chunk; i < end; i++ {
				do(i)
			}
		}
	}
	if workers == 1 {
		work()
		return
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
