package chaos

import (
	"strings"
	"testing"
	"time"
)

func msp(v float64) *float64 { return &v }

func TestBuiltinGates(t *testing.T) {
	for _, name := range []string{"default", "ci"} {
		g, err := LoadGate(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, inv := range []string{InvLostWrites, InvWatchReliable, InvRSOver, InvBoundTwice, InvHashKV, InvConvergence} {
			if n, ok := g.Invariants[inv]; !ok || n != 0 {
				t.Errorf("gate %s: invariant %s allows %d (listed %v), want 0", name, inv, n, ok)
			}
		}
	}
}

// The default gate judges every fault of every built-in scenario: a line
// matches it by target, action or name.
func TestDefaultGateCoversBuiltinScenarios(t *testing.T) {
	g, err := LoadGate("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Builtin() {
		sc, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sc.Faults {
			matched := false
			for _, fg := range g.Faults {
				matched = matched || fg.Matches(f.Name, f.Action, f.Target)
			}
			if !matched {
				t.Errorf("scenario %s: fault %s (target %s) has no line in the default gate", name, f.Name, f.Target)
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

// An older gate's watch-gaps is watch-reliable.
func TestGateWatchGapsIsReliable(t *testing.T) {
	g, err := ParseGate([]byte("kind: Gate\nname: x\ninvariants: {watch-gaps: 0}"))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := g.Invariants[InvWatchReliable]; !ok || n != 0 || len(g.Invariants) != 1 {
		t.Errorf("invariants %v, want watch-reliable: 0", g.Invariants)
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
	at := time.Unix(1000, 0)
	faults := []FaultResult{
		{Name: "etcd", Target: TargetEtcdLeader, WriteGapMS: 900, InjectedAt: at},
		{Name: "api", Target: TargetAPIServer, FailedWrites: 2, InjectedAt: at},
		{Name: "cm-kill", Target: TargetControllerManager, Detection: Measure{Kind: "lease-holder-changed", MS: msp(2100)},
			Recovery: Measure{Kind: "leader-first-pod"}, InjectedAt: at},
		{Name: "sched", Target: TargetScheduler, InjectedAt: at}, // no line matches it
	}
	invs := []Invariant{
		{Name: InvLostWrites, Checked: true},
		{Name: InvRSOver, Checked: true, Count: 3},
		{Name: InvWatchReliable, Checked: true, Count: 5}, // not gated
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
	g := &Gate{Invariants: map[string]int{InvWatchReliable: 0}}
	vs := g.Evaluate(nil, []Invariant{{Name: InvWatchReliable, Checked: false, Detail: []string{"etcd unreachable"}}})
	if Passed(vs) || !strings.Contains(vs[0].Value, "not checked") {
		t.Errorf("%+v", vs)
	}
}

// A fault whose injection failed, or that never fired, fails the run even
// when no gate line names its target; its measures are not judged.
func TestGateFailedInjectionFails(t *testing.T) {
	g, err := ParseGate([]byte("name: t\nfaults: [{match: etcd-leader, maxWriteGap: 1.5s}]\ninvariants: {lost-writes: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1000, 0)
	ok := []FaultResult{{Name: "etcd", Target: TargetEtcdLeader, WriteGapMS: 100, InjectedAt: at},
		{Name: "kubelet", Target: TargetKubelet, InjectedAt: at}}
	invs := []Invariant{{Name: InvLostWrites, Checked: true}}
	if vs := g.Evaluate(ok, invs); !Passed(vs) {
		t.Fatalf("a clean run failed: %v", Failed(vs))
	}
	for name, f := range map[string]FaultResult{
		"an error, no line for its target": {Name: "kubelet", Target: TargetKubelet, InjectedAt: at, Error: "signal: no such actor"},
		"never injected":                   {Name: "kubelet", Target: TargetKubelet},
		"an error on a gated target":       {Name: "etcd", Target: TargetEtcdLeader, InjectedAt: at, Error: "resolve: no leader", WriteGapMS: 1},
	} {
		vs := g.Evaluate([]FaultResult{f}, invs)
		if Passed(vs) || !strings.Contains(strings.Join(Failed(vs), "\n"), f.Name+": injected") {
			t.Errorf("%s: verdicts %+v, want the run failed on %s: injected", name, vs, f.Name)
		}
		for _, v := range vs {
			if strings.Contains(v.Line, "write gap") {
				t.Errorf("%s: a failed injection's measure was judged: %+v", name, v)
			}
		}
	}
}

// A fill fault's lines: unclear errors at most the limit, and at least one
// write refused with NOSPACE (a fill that never reached the quota proves
// nothing); they judge fill faults only.
func TestGateFillLines(t *testing.T) {
	g, err := ParseGate([]byte("name: t\nfaults: [{match: fill, maxUnclearErrors: 0}]"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1000, 0)
	nospace := "507 etcdserver: mvcc: database space exceeded: quota full"
	for _, tc := range []struct {
		name   string
		f      FaultResult
		passed bool
	}{
		{"clear", FaultResult{Name: "f", Action: ActionFill, InjectedAt: at, WriteErrors: map[string]int{nospace: 40}, NoSpaceRefusals: 40}, true},
		{"a timeout", FaultResult{Name: "f", Action: ActionFill, InjectedAt: at, WriteErrors: map[string]int{nospace: 40, "no answer": 1}, NoSpaceRefusals: 40, UnclearErrors: 1}, false},
		{"nothing refused", FaultResult{Name: "f", Action: ActionFill, InjectedAt: at}, false},
	} {
		vs := g.Evaluate([]FaultResult{tc.f}, nil)
		if len(vs) != 2 || Passed(vs) != tc.passed {
			t.Errorf("%s: %+v, want 2 lines, passed %v", tc.name, vs, tc.passed)
		}
	}
	if vs := g.Evaluate([]FaultResult{{Name: "k", Action: ActionKill, Target: TargetAPIServer, InjectedAt: at}}, nil); len(vs) != 0 {
		t.Errorf("a kill judged by the fill line: %+v", vs)
	}
}
