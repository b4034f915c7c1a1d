package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestBuiltinScenariosParse(t *testing.T) {
	names := Builtin()
	if len(names) < 10 {
		t.Fatalf("built-in scenarios: %v, want one per failure-table row and more", names)
	}
	for _, n := range names {
		sc, err := Load(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if sc.Name != n {
			t.Errorf("%s: the file's scenario is called %q", n, sc.Name)
		}
		// The load outlasts the faults, so every recovery has work to show.
		if loadEnd := time.Duration(float64(sc.Load.Count) / sc.Load.QPS * float64(time.Second)); loadEnd < sc.lastFaultEnd() {
			t.Errorf("%s: the load ends at %v, before the last fault ends at %v", n, loadEnd, sc.lastFaultEnd())
		}
	}
}

func TestScenarioDefaults(t *testing.T) {
	sc, err := Parse([]byte(`
apiVersion: kstep.dev/v1alpha1
kind: Scenario
name: x
faults:
- {action: kill, target: etcd-leader, at: 10s}
- {action: kill, target: scheduler-leader, at: 20s, duration: 2s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c := sc.Cluster; c.EtcdMembers != 3 || c.APIServers != 2 || c.ControllerManagers != 2 || c.Schedulers != 2 || c.HollowNodes != 5 {
		t.Errorf("cluster defaults: %+v", c)
	}
	f := sc.Faults[0]
	if f.Name != "kill-etcd-leader" || f.Duration.Duration != 5*time.Second || f.Expect.Detection != DetectEtcdLeader || f.Expect.Recovery != RecoverWrite {
		t.Errorf("fault defaults: %+v", f)
	}
	if e := sc.Faults[1].Expect; e.Detection != DetectLeaseHolder || e.Recovery != RecoverLeaderBind {
		t.Errorf("scheduler expectations: %+v", e)
	}
	// 2/s until 15 s after the last fault ends (22 s): 74 objects.
	if sc.Load.Count != 74 || sc.Load.Namespaces[0] != "chaos-load" {
		t.Errorf("load: count %d namespaces %v", sc.Load.Count, sc.Load.Namespaces)
	}
	if sc.Probe.WriteQPS != 20 || sc.Probe.Watchers != 2 {
		t.Errorf("probe: %+v", sc.Probe)
	}
}

func TestScenarioValidate(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"wrong kind", "apiVersion: v1\nkind: Pod\nname: x\nfaults: [{action: kill, target: etcd-leader}]",
			[]string{`apiVersion: "v1"`, `kind: "Pod"`}},
		{"no faults", "name: x", []string{"faults: none"}},
		{"unknown action and target", "name: x\nfaults: [{action: explode, target: moon}]",
			[]string{`action "explode"`, `target "moon"`}},
		{"partition of an apiserver", "name: x\nfaults: [{action: partition, target: apiserver}]",
			[]string{"partition needs an etcd target"}},
		{"even etcd", "name: x\ncluster: {etcdMembers: 4}\nfaults: [{action: kill, target: etcd-leader}]",
			[]string{"cluster.etcdMembers: 4"}},
		{"no standby", "name: x\ncluster: {controllerManagers: 1}\nfaults: [{action: kill, target: controller-manager-leader}]",
			[]string{"needs a standby"}},
		{"node without real nodes", "name: x\nfaults: [{action: kill, target: node}]",
			[]string{"needs real nodes"}},
		{"overlap", "name: x\nfaults: [{name: a, action: kill, target: etcd-leader, at: 1s, duration: 10s}, {name: b, action: kill, target: apiserver, at: 5s}]",
			[]string{"faults a and b overlap"}},
		{"restart with duration", "name: x\nfaults: [{action: restart, target: apiserver, duration: 3s}]",
			[]string{"restart has no duration"}},
		{"misspelt key", "name: x\nfualts: []", []string{`unknown field "fualts"`}},
		{"fill of one member, no quota", "name: x\nfaults: [{action: fill, target: etcd-leader}]",
			[]string{"its target is etcd-members", "fill needs a small quota"}},
		{"fill of a large quota", "name: x\ncluster: {etcd: {quotaBackendBytes: 8589934592}}\nfaults: [{action: fill, target: etcd-members}]",
			[]string{"quotaBackendBytes 8589934592"}},
		{"kill of every member", "name: x\nfaults: [{action: kill, target: etcd-members}]",
			[]string{"target for link and fill faults only"}},
		{"election below five heartbeats", "name: x\ncluster: {etcd: {heartbeatInterval: 100ms, electionTimeout: 300ms}}\nfaults: [{action: kill, target: etcd-leader}]",
			[]string{"cluster.etcd: electionTimeout 300ms is less than 5 × heartbeatInterval 100ms"}},
		{"failpoint without one", "name: x\nfaults: [{action: failpoint, target: apiserver}]",
			[]string{"action failpoint needs failpoint"}},
		{"failpoint of etcd", "name: x\nfaults: [{action: failpoint, target: etcd-leader, failpoint: {name: freeze-watch-cache}}]",
			[]string{"failpoints are an apiserver's"}},
		{"unknown failpoint, bad count", "name: x\nfaults: [{action: failpoint, target: apiserver, failpoint: {name: explode, count: 1000}}]",
			[]string{`failpoint "explode"`, "count 1000"}},
		{"drop without its stream", "name: x\nfaults: [{action: failpoint, target: apiserver, failpoint: {name: drop-watch-event}}]",
			[]string{"needs resource and userAgent"}},
		{"linearizability out of bounds", "name: x\nprobe: {linearizability: {clients: 99, qps: 1000}}\nfaults: [{action: kill, target: apiserver}]",
			[]string{"clients 99", "qps 1000"}},
		{"unparsable etcd timing", "name: x\ncluster: {etcd: {heartbeatInterval: fast}}\nfaults: [{action: kill, target: etcd-leader}]",
			[]string{"fast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestLoadUnknownScenario(t *testing.T) {
	_, err := Load("no-such-scenario")
	if err == nil || !strings.Contains(err.Error(), "smoke") {
		t.Fatalf("error %v should list the built-in scenarios", err)
	}
}
