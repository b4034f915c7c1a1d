package e2e

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// Lanes: the tests here that start a cluster run in parallel, two clusters
// at a time, so that make test's e2e time is the longer lane's, not the sum
// (docs/testing.md, "Where the time goes"). A cluster test names its lane
// first thing, before it starts anything:
//
//   - realNodes: process-provider clusters with real nodes. Their pod
//     networks are the host's (bridge kstep<i>, 10.88.<i>.0/24, iptables),
//     so two such clusters at once would share bridges and addresses: one
//     at a time.
//   - hollowProcs: process-provider clusters without real nodes (hollow or
//     stand-in nodes only): nothing of the host is shared but free ports,
//     so two may run at once.
//   - containers: docker-provider clusters, each on its own network.
//
// At most two clusters run at once, one per core of the reference
// machine: a chaos test's cluster shares the machine with at most one
// other cluster, never two.
type lane int

const (
	realNodes lane = iota
	hollowProcs
	containers
)

var (
	lanes      = [...]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 2), make(chan struct{}, 1)}
	laneNames  = [...]string{"real nodes", "hollow processes", "containers"}
	clusterCap = make(chan struct{}, 2)
)

// inLane makes t a parallel test that waits for its lane and for one of
// the two cluster slots; both are given back after t's cleanups that were
// registered later (the cluster's Down among them) have run.
func inLane(t *testing.T, l lane) {
	t.Helper()
	testenv.Tier(t) // a test of another tier skips before it waits
	t.Parallel()
	start := time.Now()
	lanes[l] <- struct{}{}
	clusterCap <- struct{}{}
	// The test's time in go test's output includes this wait.
	t.Logf("lane: %s (waited %s)", laneNames[l], time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		<-clusterCap
		<-lanes[l]
	})
}

// providerLane is the lane of a test that runs a cluster on provider prov;
// real says whether its process cluster has real nodes.
func providerLane(prov string, real bool) lane {
	switch {
	case prov == "docker":
		return containers
	case real:
		return realNodes
	default:
		return hollowProcs
	}
}

// TestMain lets the lanes, not -parallel, bound how many cluster tests run
// at once: a test waiting for its lane holds a -parallel slot, and with
// the default (GOMAXPROCS, 2 here) two tests waiting for one lane would
// keep every other lane idle. An explicit -parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", "32"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
