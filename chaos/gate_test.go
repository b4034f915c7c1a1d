package chaos

import (
	"strings"
	"testing"
)

func msp(v float64) *float64 { return &v }

func TestBuiltinGates(t *testing.T) {
	for _, name := range []string{"default", "ci"} {
		g, err := LoadGate(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, inv := range []string{InvLostWrites, InvWatchGaps, InvRSOver, InvBoundTwice, InvHashKV, InvConvergence} {
			if n, ok := g.Invariants[inv]; !ok || n != 0 {
				t.Errorf("gate %s: invariant %s allows %d (listed %v), want 0", name, inv, n, ok)
			}
		}
	}
}

func TestGateValidate(t *testing.T) {
	_, err := ParseGate([]byte("kind: Gate\nname: x\nfaults: [{match: etcd-leader}]\ninvariants: {lost-writs: 0}"))
	if err == nil || !strings.Contains(err.Error(), `"lost-writs" unknown`) || !strings.Contains(err.Error(), "no threshold") {
		t.Errorf("error %v", err)
	}
}

func TestGateEvaluate(t *testing.T) {
	g, err := ParseGate([]byte(`
name: t
faults:
- {match: etcd-leader, maxWriteGap: 1.5s}
- {match: apiserver, maxFailedWrites: 0}
- {match: cm-kill, maxRecovery: 3s, maxDetection: 3s}
invariants: {lost-writes: 0, rs-over-replicas: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	faults := []FaultResult{
		{Name: "etcd", Target: TargetEtcdLeader, WriteGapMS: 900},
		{Name: "api", Target: TargetAPIServer, FailedWrites: 2},
		{Name: "cm-kill", Target: TargetControllerManager, Detection: Measure{Kind: "lease-holder-changed", MS: msp(2100)},
			Recovery: Measure{Kind: "leader-first-pod"}},
		{Name: "sched", Target: TargetScheduler}, // no line matches it
	}
	invs := []Invariant{
		{Name: InvLostWrites, Checked: true},
		{Name: InvRSOver, Checked: true, Count: 3},
		{Name: InvWatchGaps, Checked: true, Count: 5}, // not gated
	}
	vs := g.Evaluate(faults, invs)
	got := map[string]bool{}
	for _, v := range vs {
		got[v.Line] = v.Pass
	}
	want := map[string]bool{
		"etcd: longest write gap":                   true,
		"api: failed writes":                        false,
		"cm-kill: detection (lease-holder-changed)": true,
		"cm-kill: recovery (leader-first-pod)":      false, // not observed fails
		"invariant lost-writes":                     true,
		"invariant rs-over-replicas":                false,
	}
	if len(got) != len(want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	for line, pass := range want {
		if p, ok := got[line]; !ok || p != pass {
			t.Errorf("%s: pass=%v (present %v), want %v", line, p, ok, pass)
		}
	}
	if Passed(vs) {
		t.Error("Passed with failing lines")
	}
	failed := strings.Join(Failed(vs), "\n")
	if !strings.Contains(failed, "invariant rs-over-replicas = 3 (limit ≤ 0)") {
		t.Errorf("Failed() does not name the broken invariant:\n%s", failed)
	}
}

func TestGateUncheckedInvariantFails(t *testing.T) {
	g := &Gate{Invariants: map[string]int{InvWatchGaps: 0}}
	vs := g.Evaluate(nil, []Invariant{{Name: InvWatchGaps, Checked: false, Detail: []string{"etcd unreachable"}}})
	if Passed(vs) || !strings.Contains(vs[0].Value, "not checked") {
		t.Errorf("%+v", vs)
	}
}
