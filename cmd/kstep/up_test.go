package main

import (
	"io"
	"path/filepath"
	"reflect"
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
