package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// Every profile shipped in bench/profiles loads and validates, and the
// built-ins validate.
func TestShippedProfilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("profiles", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no profiles: %v", err)
	}
	for _, f := range files {
		if _, err := LoadProfile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for name := range Builtin {
		p := Builtin[name]
		if err := p.Validate(); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
}

// A misspelt key is an error, not a silently different run.
func TestProfileRejectsUnknownKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	doc := "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\ncluster:\n  hollowNodes: 1\n  insecur: true\njob:\n  count: 1\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(path); err == nil || !strings.Contains(err.Error(), "insecur") {
		t.Fatalf("unknown key: %v", err)
	}
}

// The old key "nodes" (hollow nodes here, real nodes in kstep up) is
// refused with the two keys that replace it.
func TestProfileRefusesOldNodesKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	doc := "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\ncluster:\n  nodes: 50\njob:\n  count: 1\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadProfile(path)
	if err == nil || !strings.Contains(err.Error(), `"hollowNodes"`) || !strings.Contains(err.Error(), `"realNodes"`) {
		t.Fatalf("nodes: %v, want an error naming hollowNodes and realNodes", err)
	}
}

// The etcd block reaches the profile, and timing etcd would refuse is
// refused at load.
func TestProfileEtcdTiming(t *testing.T) {
	dir := t.TempDir()
	write := func(name, etcd string) string {
		path := filepath.Join(dir, name)
		doc := "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\ncluster:\n  hollowNodes: 1\n  etcd: " + etcd + "\njob:\n  count: 1\n"
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p, err := LoadProfile(write("ok.yaml", "{heartbeatInterval: 100ms, electionTimeout: 1s}"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Cluster.Etcd.HeartbeatInterval.Duration != 100*time.Millisecond || p.Cluster.Etcd.ElectionTimeout.Duration != time.Second {
		t.Fatalf("etcd timing %+v", p.Cluster.Etcd)
	}
	if _, err := LoadProfile(write("bad.yaml", "{electionTimeout: 120ms}")); err == nil || !strings.Contains(err.Error(), "less than 5 × heartbeatInterval") {
		t.Fatalf("election timeout below 5 heartbeats: %v", err)
	}
}

// endpointsStamp defaults to the Endpoints controller, names one of the
// two controllers, and is the only way a profile sets --endpoints-stamp.
func TestProfileEndpointsStamp(t *testing.T) {
	load := func(extra string) (*Profile, error) {
		path := filepath.Join(t.TempDir(), "p.yaml")
		doc := "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\n" + extra + "job:\n  count: 1\n"
		if !strings.Contains(extra, "cluster:") {
			doc = "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\n" + extra + "cluster:\n  hollowNodes: 1\njob:\n  count: 1\n"
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadProfile(path)
	}
	if p, err := load(""); err != nil || p.EndpointsStamp != "endpoints" {
		t.Fatalf("default: %v, %+v", err, p)
	}
	if p, err := load("endpointsStamp: endpointslices\n"); err != nil || p.EndpointsStamp != "endpointslices" {
		t.Fatalf("endpointslices: %v, %+v", err, p)
	}
	if _, err := load("endpointsStamp: slices\n"); err == nil || !strings.Contains(err.Error(), "endpointsStamp") {
		t.Fatalf("a bad value: %v", err)
	}
	if _, err := load("cluster:\n  hollowNodes: 1\n  controllerManagerArgs: [--endpoints-stamp=endpointslices]\n"); err == nil || !strings.Contains(err.Error(), "set endpointsStamp instead") {
		t.Fatalf("the flag in controllerManagerArgs: %v", err)
	}
	for name, p := range Builtin {
		if p.EndpointsStamp != "endpoints" {
			t.Errorf("built-in %s stamps %q", name, p.EndpointsStamp)
		}
	}
}

// A bench run runs both of ⑧'s writers, as kstep up does, unless the
// profile asks for the stamping one alone (then only the writer that
// stamps ⑧) or sets --controllers itself.
func TestProfileEndpointsWriters(t *testing.T) {
	for _, tc := range []struct {
		stamp, writers string
		args           []string
		want           string
	}{
		{"", "", nil, ""},
		{"endpointslices", "", nil, ""},
		{"", "stamping", nil, "--controllers=*,-endpointslice,-endpointslicemirroring"},
		{"endpointslices", "stamping", nil, "--controllers=*,-endpoints"},
		{"endpoints", "both", nil, ""},
		{"endpoints", "stamping", []string{"--controllers=*"}, ""},
	} {
		p := builtin("p", 1, 1, 0, 1, 1, 1, time.Minute)
		p.EndpointsStamp, p.EndpointsWriters = tc.stamp, tc.writers
		p.Cluster.ControllerManagerArgs = tc.args
		p.defaults()
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := p.writersFlag(); got != tc.want {
			t.Errorf("stamp %q writers %q args %v: %q, want %q", tc.stamp, tc.writers, tc.args, got, tc.want)
		}
	}
	p := builtin("p", 1, 1, 0, 1, 1, 1, time.Minute)
	p.EndpointsWriters = "some"
	p.defaults()
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "endpointsWriters") {
		t.Fatalf("endpointsWriters some: %v", err)
	}
}

// Bench runs take upstream's lease timing unless the profile says kstep's
// or its actor args set their own.
func TestProfileLeaseTiming(t *testing.T) {
	p := builtin("p", 1, 1, 0, 1, 1, 1, time.Minute)
	// leaderElection is the flags p's timing gives an actor with no
	// flags of its own.
	leaderElection := func() []string {
		var topo provider.Topology
		ApplyLeaseTiming(p.LeaseTiming, &topo)
		return topo.SchedulerArgs
	}
	if got := leaderElection(); len(got) != 3 || got[1] != "--leader-elect-renew-deadline=10s" {
		t.Fatalf("default: %v", got)
	}
	if got := leaseFlags([]string{"--leader-elect-lease-duration=4s"}); got != nil {
		t.Fatalf("own flag: %v", got)
	}
	p.LeaseTiming = LeaseKstep
	if got := leaderElection(); got != nil {
		t.Fatalf("kstep: %v", got)
	}
	p.LeaseTiming = "fast"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "leaseTiming") {
		t.Fatalf("leaseTiming fast: %v", err)
	}
}

// outsideView: true in a profile file asks for the outside view on any
// provider; it is off by default.
func TestProfileOutsideView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("kind: BenchProfile\nname: o\noutsideView: true\ncluster: {hollowNodes: 2}\njob: {count: 1, namespaces: [o]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !p.OutsideView || Builtin["quick"].OutsideView {
		t.Errorf("outsideView %v, quick's %v: want true, false", p.OutsideView, Builtin["quick"].OutsideView)
	}
}
