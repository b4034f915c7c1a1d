package chaos

import (
	"strings"
	"testing"
	"time"
)

func value(m Measure) float64 {
	if m.MS == nil {
		return -1
	}
	return *m.MS
}

func TestMeasureEtcdLeaderKill(t *testing.T) {
	h := &History{
		EtcdLeader: []LeaderSample{{At: at(0), Holder: "etcd-0"}, {At: at(10.2), Holder: ""}, {At: at(11.3), Holder: "etcd-2"}},
		Writes: []ProbeWrite{
			{Sent: at(9.8), Acked: at(9.9)},
			{Sent: at(9.95), Acked: at(11.5)}, // in flight at the kill, acknowledged late
			{Sent: at(10.1), Acked: at(11.4)},
			{Sent: at(10.5), Err: "timeout"},
			{Sent: at(11.6), Acked: at(11.7)},
		},
	}
	f := FaultResult{Target: TargetEtcdLeader, Actors: []string{"etcd-0"}, InjectedAt: at(10), WindowEnd: at(30)}
	f.Measure(h, Expect{Detection: DetectEtcdLeader, Recovery: RecoverWrite})
	if got := value(f.Detection); got != 1300 {
		t.Errorf("detection %v ms, want 1300", got)
	}
	if got := value(f.Recovery); got != 1400 {
		t.Errorf("recovery %v ms, want 1400 (first write sent after the kill)", got)
	}
	if f.WriteGapMS != 1500 {
		t.Errorf("write gap %v ms, want 1500 (9.9 → 11.4)", f.WriteGapMS)
	}
	if f.FailedWrites != 1 || f.UnavailableMS != 900 {
		t.Errorf("failed %d unavailable %v, want 1 and 900 (10.5 → the next acknowledgement, 11.4)", f.FailedWrites, f.UnavailableMS)
	}
}

func TestMeasureLeaderFailover(t *testing.T) {
	h := &History{
		Leases: map[string][]LeaderSample{LeaseControllerManager: {{At: at(0), Holder: "cm-0"}, {At: at(12.5), Holder: "cm-1"}}},
		Steps: []StepEvent{
			{At: at(10.1), Step: "pod.create.sent", Actor: "cm-0"}, // the dying leader's last
			{At: at(12.9), Step: "pod.create.sent", Actor: "cm-1"},
		},
	}
	f := FaultResult{Target: TargetControllerManager, Actors: []string{"cm-0"}, InjectedAt: at(10), WindowEnd: at(30)}
	f.Measure(h, Expect{Detection: DetectLeaseHolder, Recovery: RecoverLeaderPod})
	if value(f.Detection) != 2500 || value(f.Recovery) != 2900 || f.Recovery.Note != "by cm-1" {
		t.Errorf("detection %v recovery %v (%s), want 2500 and 2900 by cm-1", value(f.Detection), value(f.Recovery), f.Recovery.Note)
	}
}

func TestMeasureNotObservedInWindow(t *testing.T) {
	h := &History{Leases: map[string][]LeaderSample{LeaseScheduler: {{At: at(0), Holder: "s-0"}, {At: at(40), Holder: "s-1"}}}}
	f := FaultResult{Target: TargetScheduler, Actors: []string{"s-0"}, InjectedAt: at(10), WindowEnd: at(30)}
	f.Measure(h, Expect{Detection: DetectLeaseHolder, Recovery: RecoverLeaderBind})
	if f.Detection.Observed() || f.Recovery.Observed() {
		t.Errorf("a change after the window counted: %+v %+v", f.Detection, f.Recovery)
	}
}

func TestMeasureNodeLoss(t *testing.T) {
	h := &History{
		Nodes: []NodeSample{{At: at(0), Node: "n1", Ready: true}, {At: at(0), Node: "n2", Ready: true}, {At: at(18), Node: "n1", Ready: false}},
		RS:    []RSEvent{{At: at(0), Key: "ns/a", Replicas: 1}, {At: at(0), Key: "ns/b", Replicas: 1}},
		Pods: []PodEvent{
			{At: at(1), UID: "a1", Owner: "ns/a", Node: "n1", Ready: true, Active: true},
			{At: at(1), UID: "b1", Owner: "ns/b", Node: "n2", Ready: true, Active: true},
			{At: at(28), UID: "a1", Owner: "ns/a", Node: "n1", Active: false},               // evicted
			{At: at(28.1), UID: "a2", Owner: "ns/a", Node: "", Active: true},                // replacement
			{At: at(28.3), UID: "a2", Owner: "ns/a", Node: "n2", Active: true},              // bound elsewhere
			{At: at(29.5), UID: "a2", Owner: "ns/a", Node: "n2", Active: true, Ready: true}, // Ready
		},
	}
	f := FaultResult{Target: TargetNode, Nodes: []string{"n1"}, InjectedAt: at(10), WindowEnd: at(60)}
	f.Measure(h, Expect{Detection: DetectNodeNotReady, Recovery: RecoverRescheduled})
	if value(f.Detection) != 8000 || value(f.Recovery) != 19500 {
		t.Errorf("detection %v recovery %v, want 8000 and 19500", value(f.Detection), value(f.Recovery))
	}
}

func TestMeasureNodesReadyAgain(t *testing.T) {
	h := &History{Nodes: []NodeSample{
		{At: at(0), Node: "n1", Ready: true}, {At: at(0), Node: "n2", Ready: true},
		{At: at(18), Node: "n1", Ready: false}, {At: at(18.5), Node: "n2", Ready: false},
		{At: at(23), Node: "n1", Ready: true}, {At: at(23.4), Node: "n2", Ready: true},
	}}
	f := FaultResult{Target: TargetKubelet, InjectedAt: at(10), UndoneAt: at(22), WindowEnd: at(60)}
	f.Measure(h, Expect{Detection: DetectNodeNotReady, Recovery: RecoverNodesReady})
	if value(f.Detection) != 8000 || value(f.Recovery) != 13400 {
		t.Errorf("detection %v recovery %v, want 8000 and 13400", value(f.Detection), value(f.Recovery))
	}
}

func TestStepWindows(t *testing.T) {
	var steps []StepEvent
	add := func(uid string, a, b float64) {
		steps = append(steps, StepEvent{At: at(a), Step: "pod.persisted", UID: uid}, StepEvent{At: at(b), Step: "pod.bound", UID: uid})
	}
	add("old", -1, -0.99)  // more than 10 s before: not reported
	add("before", 5, 5.02) // 20 ms
	add("during", 10.5, 13)
	add("after", 15, 15.03)
	ws := stepWindows(steps, at(10), at(14), at(30))
	got := map[string]float64{}
	for _, w := range ws {
		got[w.Phase] = w.P50MS
		if w.Count != 1 {
			t.Errorf("%s: %d pods", w.Phase, w.Count)
		}
	}
	if len(got) != 3 || got["during"] != 2500 || time.Duration(got["before"]*1e6).Round(time.Millisecond) != 20*time.Millisecond {
		t.Errorf("windows %v", got)
	}
}

func TestMeasureNodesNeverLost(t *testing.T) {
	h := &History{Nodes: []NodeSample{{At: at(0), Node: "n1", Ready: true}, {At: at(30), Node: "n2", Ready: true}}}
	f := FaultResult{Target: TargetContainerd, InjectedAt: at(10), UndoneAt: at(11), WindowEnd: at(60)}
	f.Measure(h, Expect{Detection: DetectNone, Recovery: RecoverNodesReady})
	if value(f.Recovery) != 1000 {
		t.Errorf("recovery %v, want 1000: every node was Ready when the fault was undone", value(f.Recovery))
	}
}

// A request that hangs while others are answered shows in the longest
// wait, not in the gap between acknowledgements (the issue a single
// client-go writer found: 3 s unanswered, 0.5 s gap in the report).
func TestLongestWaitSeesAHungRequestTheGapHides(t *testing.T) {
	h := &History{Writes: []ProbeWrite{
		{Sent: at(9.0), Acked: at(9.01), Done: at(9.01), LongestWaitMS: 10},
		// In flight at the injection: its first request hung for its 3 s
		// timeout, the retry answered at once.
		{Sent: at(9.99), Acked: at(13.05), Done: at(13.05), LongestWaitMS: 3000},
		{Sent: at(10.2), Acked: at(10.25), Done: at(10.25), LongestWaitMS: 50},
		{Sent: at(10.4), Acked: at(10.45), Done: at(10.45), LongestWaitMS: 50},
		{Sent: at(10.6), Acked: at(10.65), Done: at(10.65), LongestWaitMS: 50},
		// After the window: not counted.
		{Sent: at(31), Acked: at(40), Done: at(40), LongestWaitMS: 9000},
		// Over before the fault: not counted.
		{Sent: at(5), Acked: at(8), Done: at(8), LongestWaitMS: 3000},
	}}
	f := FaultResult{Target: TargetEtcdLeader, InjectedAt: at(10), WindowEnd: at(30)}
	f.Measure(h, Expect{Detection: DetectNone, Recovery: RecoverWrite})
	if f.LongestWaitMS != 3000 {
		t.Errorf("longest wait %v ms, want 3000", f.LongestWaitMS)
	}
	if f.WriteGapMS >= 3000 {
		t.Errorf("write gap %v ms: the test means a gap that hides the wait", f.WriteGapMS)
	}
	g, err := ParseGate([]byte("name: t\nfaults: [{match: etcd-leader, maxWait: 1.5s}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs := g.Evaluate([]FaultResult{f}, nil)
	if Passed(vs) {
		t.Fatalf("a 3 s wait passed maxWait 1.5s: %+v", vs)
	}
}

// The binding apiserver stamps pod.bound: the scheduler leader's recovery
// is the first binding of a pod another scheduler chose, never one the
// killed leader chose (its request may land after the fault).
func TestMeasureLeaderBindByTheNewScheduler(t *testing.T) {
	h := &History{
		Leases: map[string][]LeaderSample{LeaseScheduler: {{At: at(0), Holder: "s-0"}, {At: at(13), Holder: "s-1"}}},
		Steps: []StepEvent{
			{At: at(11), Step: "pod.scheduled", Actor: "s-0", UID: "a"},
			{At: at(12), Step: "pod.bound", Actor: "apiserver-0", UID: "a"},
			{At: at(14), Step: "pod.scheduled", Actor: "s-1", UID: "b"},
			{At: at(15), Step: "pod.bound", Actor: "apiserver-1", UID: "b"},
		},
	}
	f := FaultResult{Target: TargetScheduler, Actors: []string{"s-0"}, InjectedAt: at(10), WindowEnd: at(30)}
	f.Measure(h, Expect{Detection: DetectLeaseHolder, Recovery: RecoverLeaderBind})
	if value(f.Recovery) != 5000 || f.Recovery.Note != "by s-1" {
		t.Errorf("recovery %v (%s), want 5000 ms by s-1", value(f.Recovery), f.Recovery.Note)
	}
}

// An apiserver fault is charged the nodes that went NotReady and the pods
// evicted during it off nodes it did not target; a node fault is not
// charged its own node's evictions.
func TestMeasureOtherNodesAndEvictions(t *testing.T) {
	h := &History{
		Nodes: []NodeSample{{At: at(0), Node: "n1", Ready: true}, {At: at(0), Node: "n2", Ready: true}, {At: at(18), Node: "n2", Ready: false}},
		Evictions: []Eviction{
			{At: at(5), Pod: "ns/early", Node: "n2"}, // before the fault
			{At: at(28), Pod: "ns/a", Node: "n1"},
			{At: at(28), Pod: "ns/b", Node: "n2"},
		},
	}
	api := FaultResult{Target: TargetAPIServer, Actors: []string{"apiserver-0"}, InjectedAt: at(10), WindowEnd: at(60)}
	api.Measure(h, Expect{})
	if got := strings.Join(api.OtherPodsEvicted, ","); got != "ns/a on n1,ns/b on n2" || strings.Join(api.OtherNodesNotReady, ",") != "n2" {
		t.Errorf("apiserver fault: evicted %q, NotReady %v", got, api.OtherNodesNotReady)
	}
	node := FaultResult{Target: TargetNode, Nodes: []string{"n2"}, InjectedAt: at(10), WindowEnd: at(60)}
	node.Measure(h, Expect{})
	if got := strings.Join(node.OtherPodsEvicted, ","); got != "ns/a on n1" || len(node.OtherNodesNotReady) != 0 {
		t.Errorf("node fault: evicted %q, NotReady %v", got, node.OtherNodesNotReady)
	}
	g, err := ParseGate([]byte("name: t\nfaults:\n- {match: apiserver, maxOtherNodesNotReady: 0, maxOtherPodsEvicted: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, v := range g.Evaluate([]FaultResult{api}, nil) {
		if !v.Pass {
			failed = append(failed, v.Line+"="+v.Value)
		}
	}
	if len(failed) != 2 {
		t.Errorf("failed lines %v, want other nodes NotReady and other pods evicted", failed)
	}
}

// A fill fault: the writes refused during it are grouped by their answer,
// those not refused with etcd's NOSPACE are unclear, and the recovery's
// own time runs from its start to the first write acknowledged after it.
func TestMeasureFill(t *testing.T) {
	nospace := "etcdserver: mvcc: database space exceeded: etcd's space quota is full"
	h := &History{Writes: []ProbeWrite{
		{Sent: at(9), Acked: at(9.1)},
		{Sent: at(10.1), Code: 507, Err: nospace},
		{Sent: at(10.2), Code: 507, Err: nospace},
		{Sent: at(12), Code: 503, Err: "etcd unavailable"},
		{Sent: at(13), Err: "context deadline exceeded"},
		{Sent: at(30.5), Acked: at(33)}, // in flight across the recovery
		{Sent: at(31), Acked: at(32)},
	}}
	f := FaultResult{Action: ActionFill, Target: TargetEtcdMembers, InjectedAt: at(10), UndoneAt: at(30), WindowEnd: at(60), Fill: &FillResult{}}
	f.Measure(h, Expect{Detection: DetectWriteRejected, Recovery: RecoverWrite})
	if value(f.Detection) != 100 {
		t.Errorf("detection %v ms, want 100 (the first refused write)", value(f.Detection))
	}
	if value(f.Recovery) != 23000 {
		t.Errorf("recovery %v ms, want 23000 (the refusal to the first write sent after it acknowledged)", value(f.Recovery))
	}
	if f.Fill.RecoveredMS == nil || *f.Fill.RecoveredMS != 3000 {
		t.Errorf("recovered %v, want 3000 ms after the recovery began", f.Fill.RecoveredMS)
	}
	want := map[string]int{"507 " + nospace: 2, "503 etcd unavailable": 1, "no answer": 1}
	if len(f.WriteErrors) != len(want) {
		t.Errorf("write errors %v, want %v", f.WriteErrors, want)
	}
	for k, n := range want {
		if f.WriteErrors[k] != n {
			t.Errorf("%q: %d, want %d", k, f.WriteErrors[k], n)
		}
	}
	if f.UnclearErrors != 2 {
		t.Errorf("unclear errors %d, want 2 (the 503 and the timeout)", f.UnclearErrors)
	}

	// Another action's failures are not "unclear": only a fill fault
	// says what the answer should have been.
	k := FaultResult{Action: ActionKill, Target: TargetAPIServer, InjectedAt: at(10), WindowEnd: at(60)}
	k.Measure(h, Expect{Detection: DetectNone, Recovery: RecoverActorReady})
	if k.UnclearErrors != 0 || k.WriteErrors["no answer"] != 1 {
		t.Errorf("kill: unclear %d, errors %v", k.UnclearErrors, k.WriteErrors)
	}
}
