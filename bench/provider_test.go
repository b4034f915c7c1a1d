package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// ClusterSpec is the cluster a bench run starts (and `kstep up --profile`
// with it): the profile's topology, the stamp, both endpoints writers (no
// --controllers) and upstream's lease timing (leader election and the nodes' heartbeat, on
// the controller-managers and the kubelets) before the profile's own
// flags, the hollow
// kubelets' Events explicit, the state and trace directories given; the
// topology run.json records is the same without --endpoints-stamp.
func TestClusterSpec(t *testing.T) {
	p := Builtin["scale"]
	p.Cluster.ControllerManagerArgs = []string{"--concurrent-replicaset-syncs=8"}
	p.Cluster.SchedulerArgs = []string{"--percentage-of-nodes-to-score=50"}
	spec, recorded := ClusterSpec(&p, provider.Process, "/bin/kstep", "/s", "/s/traces", t.Logf)
	lease := []string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}
	wantCM := append(append([]string{"--endpoints-stamp=endpoints"}, lease...), "--node-monitor-grace-period=50s", "--concurrent-replicaset-syncs=8")
	if !slices.Equal(spec.ControllerManagerArgs, wantCM) {
		t.Errorf("controller-manager args %q, want %q", spec.ControllerManagerArgs, wantCM)
	}
	if want := append(lease, "--percentage-of-nodes-to-score=50"); !slices.Equal(spec.SchedulerArgs, want) {
		t.Errorf("scheduler args %q, want %q", spec.SchedulerArgs, want)
	}
	if !slices.Equal(recorded.ControllerManagerArgs, wantCM[1:]) {
		t.Errorf("recorded controller-manager args %q, want %q (no --endpoints-stamp)", recorded.ControllerManagerArgs, wantCM[1:])
	}
	if want := []string{"--node-lease-renew-interval=10s", "--node-status-update-frequency=5m"}; !slices.Equal(spec.HollowArgs, want) || !slices.Equal(recorded.HollowArgs, want) {
		t.Errorf("hollow args %q (recorded %q), want %q", spec.HollowArgs, recorded.HollowArgs, want)
	}
	if spec.HollowEvents == nil || !*spec.HollowEvents || spec.HollowNodes != 1000 || spec.LatencyProfile != "zero" {
		t.Errorf("hollow: events %v, %d nodes, latency %q; want events true explicit, 1000 nodes, zero", spec.HollowEvents, spec.HollowNodes, spec.LatencyProfile)
	}
	if spec.StateDir != "/s" || spec.TraceDir != "/s/traces" || spec.Binary != "/bin/kstep" || spec.Supervise || spec.Detach {
		t.Errorf("spec %+v: want state /s, traces /s/traces, binary /bin/kstep, no supervisor, not detached", spec)
	}
	// Its settings beside kstep up's defaults: no supervisor, the one
	// kept; a profile that runs kstep's lease timing or the stamping
	// writer alone adds it.
	if got := NotAsUp(&p, spec); len(got) != 1 || !strings.HasPrefix(got[0], "supervise: false") {
		t.Errorf("not as kstep up: %q, want the supervisor alone", got)
	}
	k := Builtin["scale"]
	k.LeaseTiming = LeaseKstep
	if got := NotAsUp(&k, spec); len(got) != 2 || got[0] != "leaseTiming: kstep (kstep up: upstream)" {
		t.Errorf("not as kstep up with kstep's lease timing: %q", got)
	}
	q := Builtin["quick"]
	q.EndpointsWriters, q.LeaseTiming = WritersStamping, UpLeaseTiming
	q.Cluster.HollowEvents = new(bool)
	spec, _ = ClusterSpec(&q, provider.Process, "/bin/kstep", "/s", "/s/traces", t.Logf)
	spec.Supervise = true
	want := []string{"endpointsWriters: stamping, the EndpointSlice and EndpointSliceMirroring controllers off (kstep up: both, both of step ⑧'s writers)",
		"hollowEvents: false, the hollow kubelets write no Events (kstep up: true)"}
	if got := NotAsUp(&q, spec); !slices.Equal(got, want) {
		t.Errorf("not as kstep up: %q, want %q", got, want)
	}
	spec.HollowEvents = nil
	if got := NotAsUp(&Profile{LeaseTiming: UpLeaseTiming, EndpointsWriters: WritersBoth}, spec); got == nil || len(got) != 0 {
		t.Errorf("a cluster as kstep up starts it: %#v, want an empty list", got)
	}
	// The profile is left as it was: a set's next run starts from it again.
	if !slices.Equal(p.Cluster.ControllerManagerArgs, []string{"--concurrent-replicaset-syncs=8"}) || p.Cluster.HollowEvents != nil {
		t.Errorf("ClusterSpec changed the profile: %q, events %v", p.Cluster.ControllerManagerArgs, p.Cluster.HollowEvents)
	}
}

// The nodes' heartbeat: hollow nodes get upstream's Lease renewal and
// node-status frequency, real nodes the same through --kubelet-arg; a
// profile that sets one of those flags itself keeps its own; kstep's lease
// timing adds none.
func TestUpstreamHeartbeat(t *testing.T) {
	p := Builtin["light"]
	topo := provider.Topology{HollowNodes: 2, RealNodes: 1}
	upstreamHeartbeat(&topo)
	if !slices.Equal(topo.HollowArgs, []string{"--node-lease-renew-interval=10s", "--node-status-update-frequency=5m"}) ||
		!slices.Equal(topo.NodeArgs, []string{"--kubelet-arg=--node-lease-renew-interval=10s", "--kubelet-arg=--node-status-update-frequency=5m"}) ||
		!slices.Equal(topo.ControllerManagerArgs, []string{"--node-monitor-grace-period=50s"}) {
		t.Errorf("upstream: hollow %q, real %q, controller-manager %q", topo.HollowArgs, topo.NodeArgs, topo.ControllerManagerArgs)
	}
	for _, own := range [][]string{{"--kubelet-arg", "--node-lease-renew-interval=1s"}, {"--kubelet-arg=--node-lease-renew-interval=1s"}} {
		topo = provider.Topology{HollowNodes: 2, RealNodes: 1, HollowArgs: []string{"--node-lease-renew-interval=3s"},
			NodeArgs: own, ControllerManagerArgs: []string{"--node-monitor-grace-period=12s"}}
		upstreamHeartbeat(&topo)
		if !slices.Equal(topo.HollowArgs, []string{"--node-status-update-frequency=5m", "--node-lease-renew-interval=3s"}) ||
			!slices.Equal(topo.NodeArgs, append([]string{"--kubelet-arg=--node-status-update-frequency=5m"}, own...)) ||
			!slices.Equal(topo.ControllerManagerArgs, []string{"--node-monitor-grace-period=12s"}) {
			t.Errorf("own flags: hollow %q, real %q, controller-manager %q; want each kept and the other flag added", topo.HollowArgs, topo.NodeArgs, topo.ControllerManagerArgs)
		}
	}
	p.LeaseTiming = LeaseKstep
	topo = provider.Topology{HollowNodes: 2, RealNodes: 1}
	ApplyLeaseTiming(p.LeaseTiming, &topo)
	if len(topo.HollowArgs)+len(topo.NodeArgs)+len(topo.ControllerManagerArgs) != 0 {
		t.Errorf("kstep timing: hollow %q, real %q, controller-manager %q; want none", topo.HollowArgs, topo.NodeArgs, topo.ControllerManagerArgs)
	}
}
