package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// --nodes meant real nodes in kstep up and hollow nodes in bench profiles:
// it is refused, naming both flags that replace it, before anything starts.
func TestUpRefusesNodesFlag(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"up", "--nodes", "2", "--state-dir", t.TempDir()})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--real-nodes 2") || !strings.Contains(err.Error(), "--hollow-nodes 2") {
		t.Fatalf("kstep up --nodes 2: %v, want a refusal naming --real-nodes and --hollow-nodes", err)
	}
}

// kstep up --profile starts the cluster kstep bench starts for the
// profile: bench.ClusterSpec's topology and actor flags, the extra actor
// flags after them, step events in <state-dir>/traces, no supervisor
// unless --supervise is given; the flags that shape the cluster are
// refused beside it, before anything starts.
func TestUpProfile(t *testing.T) {
	state := t.TempDir()
	none := func(string) bool { return false }
	base := provider.Spec{Topology: provider.DefaultTopology(), StateDir: state, Supervise: true}
	base.SchedulerArgs = []string{"--failpoint-bind-delay=5ms"}
	got, err := profileSpec(base, "quick", provider.Process, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	prof := bench.Builtin["quick"]
	prof.Cluster.SchedulerArgs = []string{"--failpoint-bind-delay=5ms"}
	want, _ := bench.ClusterSpec(&prof, provider.Process, "", state, filepath.Join(state, "traces"), t.Logf)
	if !reflect.DeepEqual(got.Topology, want.Topology) {
		t.Errorf("topology\n%+v\nwant bench's\n%+v", got.Topology, want.Topology)
	}
	if got.TraceDir != filepath.Join(state, "traces") || got.Supervise {
		t.Errorf("trace dir %q, supervise %v; want %s/traces, no supervisor", got.TraceDir, got.Supervise, state)
	}
	if n := len(got.SchedulerArgs); n == 0 || got.SchedulerArgs[n-1] != "--failpoint-bind-delay=5ms" {
		t.Errorf("scheduler args %q: want --failpoint-bind-delay=5ms last", got.SchedulerArgs)
	}

	base.TraceDir = "/elsewhere"
	got, err = profileSpec(base, "quick", provider.Process, func(f string) bool { return f == "supervise" }, io.Discard)
	if err != nil || got.TraceDir != "/elsewhere" || !got.Supervise {
		t.Errorf("--trace-dir /elsewhere --supervise: %v, trace dir %q, supervise %v", err, got.TraceDir, got.Supervise)
	}

	// --actor-procs goes on top of the profile's, as --hollow-events does.
	base.ActorProcs = 7
	if got, err = profileSpec(base, "quick", provider.Process, func(f string) bool { return f == "actor-procs" }, io.Discard); err != nil || got.ActorProcs != 7 {
		t.Errorf("--profile quick --actor-procs 7: %v, actorProcs %d", err, got.ActorProcs)
	}
	if got, err = profileSpec(base, "quick", provider.Process, none, io.Discard); err != nil || got.ActorProcs != bench.Builtin["quick"].Cluster.ActorProcs {
		t.Errorf("--profile quick: %v, actorProcs %d, want the profile's %d", err, got.ActorProcs, bench.Builtin["quick"].Cluster.ActorProcs)
	}

	if _, err := profileSpec(base, "quick", provider.Process, func(f string) bool { return f == "hollow-nodes" || f == "insecure" }, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--hollow-nodes, --insecure") {
		t.Errorf("--profile with --hollow-nodes and --insecure: %v, want both refused", err)
	}
	root := newRootCmd()
	root.SetArgs([]string{"up", "--profile", "quick", "--etcd-members", "1", "--state-dir", state})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--etcd-members cannot go with it") {
		t.Errorf("kstep up --profile quick --etcd-members 1: %v, want a refusal", err)
	}
}

// kstep up's lease timing is upstream's unless --lease-timing kstep: a
// value of neither is a usage error, and beside --profile (whose
// leaseTiming decides) it is refused, before anything starts.
func TestUpLeaseTiming(t *testing.T) {
	if bench.UpLeaseTiming != bench.LeaseUpstream {
		t.Errorf("kstep up's lease timing is %s, want upstream's", bench.UpLeaseTiming)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lease-timing", "fast"}, `--lease-timing "fast": want upstream or kstep`},
		{[]string{"--profile", "quick", "--lease-timing", "kstep"}, "--lease-timing cannot go with it"},
	} {
		root := newRootCmd()
		root.SetArgs(append([]string{"up", "--state-dir", t.TempDir()}, tc.args...))
		if err := root.Execute(); err == nil || exitCode(err) != exitInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kstep up %q: %v, want exit 2 saying %q", tc.args, err, tc.want)
		}
	}
	topo := provider.Topology{HollowNodes: 1}
	bench.ApplyLeaseTiming(bench.LeaseKstep, &topo)
	if len(topo.ControllerManagerArgs)+len(topo.SchedulerArgs)+len(topo.HollowArgs) != 0 {
		t.Errorf("kstep's timing added flags: %+v", topo)
	}
	bench.ApplyLeaseTiming(bench.LeaseUpstream, &topo)
	if !slices.Contains(topo.ControllerManagerArgs, "--node-monitor-grace-period=50s") || !slices.Contains(topo.SchedulerArgs, "--leader-elect-lease-duration=15s") ||
		!slices.Contains(topo.HollowArgs, "--node-lease-renew-interval=10s") {
		t.Errorf("upstream's timing: %+v", topo)
	}
}

// --gomaxprocs, on any command, sets the process's GOMAXPROCS and its
// children's (a node's containerd and kubelet); a negative one is a usage
// error.
func TestGOMAXPROCSFlag(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	root := newRootCmd()
	root.SetArgs([]string{"version", "--gomaxprocs=3"})
	root.SetOut(io.Discard)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != 3 || os.Getenv("GOMAXPROCS") != "3" {
		t.Errorf("after --gomaxprocs=3: GOMAXPROCS %d, env %q", got, os.Getenv("GOMAXPROCS"))
	}
	root = newRootCmd()
	root.SetArgs([]string{"version", "--gomaxprocs=-1"})
	if err := root.Execute(); exitCode(err) != exitInvalid {
		t.Errorf("--gomaxprocs=-1: %v (exit %d), want a usage error", err, exitCode(err))
	}
}
