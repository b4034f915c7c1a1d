package kubelet_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/kubelet"
)

// TestPhasesSpreadOverThePeriod: a thousand hollow node names started
// together get phases spread across the whole period, so their Lease
// renewals and relists do not reach the apiserver in one burst. A phase of
// zero for all (everyone ticking together) puts them all in one bucket and
// fails.
func TestPhasesSpreadOverThePeriod(t *testing.T) {
	const (
		nodes   = 1000
		period  = 2 * time.Second
		buckets = 10
	)
	var count [buckets]int
	for i := range nodes {
		p := kubelet.PhaseOf(fmt.Sprintf("hollow-%d", i), period)
		if p < 0 || p >= period {
			t.Fatalf("hollow-%d: phase %v outside [0, %v)", i, p, period)
		}
		count[int(p*buckets/period)]++
	}
	mean := nodes / buckets
	for b, n := range count {
		if n < mean/2 || n > mean*3/2 {
			t.Fatalf("bucket %d of %d holds %d of %d phases (mean %d): %v", b, buckets, n, nodes, mean, count)
		}
	}
	if kubelet.PhaseOf("hollow-1", period) != kubelet.PhaseOf("hollow-1", period) {
		t.Fatal("a node's phase must be stable across restarts")
	}
	if kubelet.PhaseOf("n", 0) != 0 {
		t.Fatal("no period, no phase")
	}
}
