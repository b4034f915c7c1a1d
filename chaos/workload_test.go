package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kstep-dev/kstep/loadgen"
)

func TestWorkloadFaultsValidate(t *testing.T) {
	two, zero := int32(2), int32(0)
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad, Workload: &WorkloadFault{Rate: 2}}, ""},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 2}}, ""},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Replicas: &zero}}, ""},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetNode, Workload: &WorkloadFault{Rate: 2}}, "its target is load"},
		{Fault{Name: "a", Action: ActionKill, Target: TargetLoad}, "target load is for kill-pods and scale only"},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad}, "needs workload: {rate"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad}, "needs workload: {factor"},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad, Workload: &WorkloadFault{Rate: 50}}, "at most 20"},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad, Workload: &WorkloadFault{Rate: -1}}, "above 0"},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad, Duration: Duration{Duration: 100 * time.Second}, Workload: &WorkloadFault{Rate: 20}},
			"deletes 2000 pods, at most 1000"},
		{Fault{Name: "a", Action: ActionKillPods, Target: TargetLoad, Workload: &WorkloadFault{Rate: 1, Factor: 2}}, "factor and replicas are for scale"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 2, Replicas: &two}}, "one of factor and replicas"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 1}}, "no change to measure"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Replicas: &two}}, "no change to measure"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 0.5}}, ""},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 11}}, "at most 10"},
		{Fault{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Rate: 1, Factor: 2}}, "rate is for kill-pods"},
		{Fault{Name: "a", Action: ActionDrain, Target: TargetNode, Workload: &WorkloadFault{Rate: 1}}, "only kill-pods and scale have one"},
	} {
		s := &Scenario{Name: "x", Cluster: clusterOf(3), Load: loadgen.Job{Object: loadgen.ObjectTemplate{Replicas: 2}}, Faults: []Fault{tc.f}}
		s.Defaults()
		err := s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s %+v: %v, want %q", tc.f.Action, tc.f.Target, tc.f.Workload, err, tc.want)
		}
	}
	big := &Scenario{Name: "x", Cluster: clusterOf(3), Load: loadgen.Job{Object: loadgen.ObjectTemplate{Replicas: 20}},
		Faults: []Fault{{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 6}}}}
	big.Defaults()
	if err := big.Validate(); err == nil || !strings.Contains(err.Error(), "scaled to 120, want 0 to 100") {
		t.Errorf("20 replicas ×6: %v, want the bound", err)
	}
	s := &Scenario{Name: "x", Cluster: clusterOf(3), Faults: []Fault{{Name: "a", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 2}},
		{Name: "b", Action: ActionKillPods, Target: TargetLoad, At: Duration{Duration: time.Minute}, Workload: &WorkloadFault{Rate: 1}}}}
	s.Defaults()
	if f := s.Faults[0]; f.Expect.Detection != DetectPodsChanged || f.Expect.Recovery != RecoverScaled {
		t.Errorf("scale measured by %s/%s", f.Expect.Detection, f.Expect.Recovery)
	}
	if f := s.Faults[1]; f.Expect.Detection != DetectPodReplaced || f.Expect.Recovery != RecoverLoadReady {
		t.Errorf("kill-pods measured by %s/%s", f.Expect.Detection, f.Expect.Recovery)
	}
}

// The workload faults touch only the load kstep created: external takes
// them without --allow-disruption.
func TestCheckExternalWorkload(t *testing.T) {
	sc, err := Load("api-workload")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExternal(sc, false); err != nil {
		t.Errorf("api-workload without --allow-disruption: %v, want accepted", err)
	}
	actions := map[Action]bool{}
	for _, f := range sc.Faults {
		actions[f.Action] = true
	}
	if !actions[ActionKillPods] || !actions[ActionScale] {
		t.Errorf("api-workload has %v, want kill-pods and scale", actions)
	}
}

func rsPod(ns, name, rs string, created int, mod func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(created) * time.Second)),
		Labels:            map[string]string{loadgen.JobLabel: "chaos"},
		OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs, Controller: new(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if mod != nil {
		mod(&p)
	}
	return p
}

func podNames(pods []corev1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.Name)
	}
	return strings.Join(s, ",")
}

func TestKillOrder(t *testing.T) {
	now := metav1.Now()
	pods := []corev1.Pod{
		rsPod("a", "r1-new", "r1", 9, nil),
		rsPod("a", "r1-old", "r1", 1, nil),
		rsPod("a", "r2-a", "r2", 2, nil),
		rsPod("a", "r2-b", "r2", 3, nil),
		rsPod("b", "r3-a", "r3", 5, nil),
		rsPod("a", "pending", "r1", 0, func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }),
		rsPod("a", "unready", "r2", 0, func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }),
		rsPod("a", "going", "r3", 0, func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		rsPod("a", "bare", "r3", 0, func(p *corev1.Pod) { p.OwnerReferences = nil }),
		rsPod("a", "deleted", "r3", 0, nil),
	}
	got := podNames(killOrder(pods, map[types.UID]bool{"uid-deleted": true}))
	if want := "r1-old,r2-a,r3-a,r2-b,r1-new"; got != want {
		t.Errorf("killOrder = %s, want %s: one of each ReplicaSet, oldest first, then the second ones", got, want)
	}
}

// killPods deletes its count of Ready pods of the load, by UID, across
// its namespaces, and says which ReplicaSets it took them from.
func TestKillPods(t *testing.T) {
	var objs []runtime.Object
	for i := range 3 {
		for j := range 2 {
			p := rsPod("ns", fmt.Sprintf("rs%d-%d", i, j), fmt.Sprintf("rs%d", i), i*2+j, nil)
			objs = append(objs, &p)
		}
	}
	other := rsPod("ns", "not-the-load", "x", 0, func(p *corev1.Pod) { p.Labels = nil })
	objs = append(objs, &other)
	cs := fake.NewClientset(objs...)
	var deleted []string
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		if d.GetDeleteOptions().Preconditions == nil || d.GetDeleteOptions().Preconditions.UID == nil {
			t.Errorf("delete %s without a UID precondition", d.GetName())
		}
		deleted = append(deleted, d.GetName())
		return false, nil, nil
	})
	job := loadgen.Job{Name: "chaos", Namespaces: []string{"ns"}}
	f := Fault{Duration: Duration{Duration: 200 * time.Millisecond}, Workload: &WorkloadFault{Rate: 20}}
	w := &workloadRun{done: make(chan struct{})}
	start := time.Now()
	killPods(context.Background(), cs, job, f, w)
	if took := time.Since(start); took < 150*time.Millisecond || took > 2*time.Second {
		t.Errorf("4 deletions at 20/s took %v, want about 150 ms", took)
	}
	if got := strings.Join(deleted, ","); got != "rs0-0,rs1-0,rs2-0,rs0-1" || strings.Join(w.deleted, ",") != "ns/rs0-0,ns/rs1-0,ns/rs2-0,ns/rs0-1" {
		t.Errorf("deleted %s (%v), want rs0-0,rs1-0,rs2-0,rs0-1", got, w.deleted)
	}
	if got := strings.Join(w.replicaSets(), ","); got != "ns/rs0,ns/rs1,ns/rs2" {
		t.Errorf("ReplicaSets hit %s", got)
	}
	// The undo: the fault ended at its last deletion, before the undo.
	r := &run{sc: &Scenario{Load: job}, cs: cs, logf: t.Logf}
	fr := &FaultResult{UndoneAt: time.Now().Add(time.Second)}
	if err := r.undoWorkload(context.Background(), Fault{Action: ActionKillPods, Workload: f.Workload}, fr, w); err != nil ||
		!fr.UndoneAt.Equal(w.last) || strings.Join(fr.ReplicaSets, ",") != "ns/rs0,ns/rs1,ns/rs2" || len(fr.DeletedPods) != 4 || !strings.Contains(fr.Detail, "deleted 4 pods of 3 ReplicaSets") {
		t.Errorf("undo: %v, undone at %v (last deletion %v), %v, %q", err, fr.UndoneAt, w.last, fr.ReplicaSets, fr.Detail)
	}
	// Cancelled (the undo): it stops at once.
	w = &workloadRun{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	killPods(ctx, cs, job, Fault{Duration: Duration{Duration: time.Hour}, Workload: &WorkloadFault{Rate: 1}}, w)
	if len(w.deleted) > 1 {
		t.Errorf("cancelled: %v deleted, want at most the first", w.deleted)
	}
}

// A scale goes through the scale subresource; a raise is recorded in the
// history before its request, a lowering after its answer, and the undo
// puts every object back.
func TestScaleWorkload(t *testing.T) {
	rs := func(name string, n int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{loadgen.JobLabel: "chaos"}},
			Spec: appsv1.ReplicaSetSpec{Replicas: &n}}
	}
	cs := fake.NewClientset(rs("chaos-0", 2), rs("chaos-1", 2))
	rec := &recorder{now: time.Now}
	var order []string
	cs.PrependReactor("patch", "replicasets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetSubresource() != "scale" {
			t.Errorf("patch %s/%s, want the scale subresource", p.GetName(), p.GetSubresource())
		}
		rec.mu.Lock()
		order = append(order, fmt.Sprintf("%s %s (recorded %d)", p.GetName(), p.GetPatch(), len(rec.h.RS)))
		rec.mu.Unlock()
		return true, rs(p.GetName(), 0), nil
	})
	sc := &Scenario{Name: "x", Cluster: clusterOf(3), Load: loadgen.Job{Name: "chaos", Namespaces: []string{"ns"}, Object: loadgen.ObjectTemplate{Replicas: 2}},
		Faults: []Fault{{Name: "s", Action: ActionScale, Target: TargetLoad, Workload: &WorkloadFault{Factor: 2}}}}
	sc.Defaults()
	r := &run{sc: sc, cs: cs, rec: rec, logf: t.Logf}
	fr := &FaultResult{}
	w := &workloadRun{}
	if err := r.injectWorkload(context.Background(), sc.Faults[0], fr, w); err != nil {
		t.Fatal(err)
	}
	if err := r.undoWorkload(context.Background(), sc.Faults[0], fr, w); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`chaos-0 {"spec":{"replicas":4}} (recorded 1)`, `chaos-1 {"spec":{"replicas":4}} (recorded 2)`,
		`chaos-0 {"spec":{"replicas":2}} (recorded 2)`, `chaos-1 {"spec":{"replicas":2}} (recorded 3)`,
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(fr.ReplicaSets, ","); got != "ns/chaos-0,ns/chaos-1" || !strings.Contains(fr.Detail, "scaled 2 of 2 ReplicaSets") {
		t.Errorf("ReplicaSets %s, detail %q", got, fr.Detail)
	}
	if n := len(rec.h.RS); n != 4 || rec.h.RS[3].Replicas != 2 || rec.h.RS[0].Replicas != 4 {
		t.Errorf("recorded %+v, want 4, 4, then 2, 2", rec.h.RS)
	}
	// A failed raise is taken back in the history.
	cs2 := fake.NewClientset(rs("chaos-0", 2))
	cs2.PrependReactor("patch", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	r.cs, r.rec = cs2, &recorder{now: time.Now}
	if err := r.injectWorkload(context.Background(), sc.Faults[0], &FaultResult{}, &workloadRun{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("failed scale: %v", err)
	}
	if h := r.rec.h.RS; len(h) != 2 || h[1].Replicas != 2 {
		t.Errorf("failed raise recorded %+v, want 4 then 2 again", h)
	}
}

func TestWorkloadMeasures(t *testing.T) {
	rss := map[string]bool{"a/rs": true}
	ready := func(s float64, uid string, ok bool) PodEvent {
		return PodEvent{At: at(s), UID: uid, Key: "a/" + uid, Owner: "a/rs", Node: "n1", Ready: ok, Active: true}
	}
	gone := func(s float64, uid string) PodEvent {
		return PodEvent{At: at(s), UID: uid, Key: "a/" + uid, Owner: "a/rs", Node: "n1", Deleted: true}
	}
	terminating := func(s float64, uid string) PodEvent {
		return PodEvent{At: at(s), UID: uid, Key: "a/" + uid, Owner: "a/rs", Node: "n1", Ready: true}
	}
	// kill-pods from 10 s to 18 s: p1 deleted, p3 replaces it; p2 deleted,
	// p4 replaces it and is Ready at 19 s.
	kill := &History{
		RS: []RSEvent{{At: at(0), Key: "a/rs", Replicas: 2}, {At: at(0), Key: "a/other", Replicas: 1}},
		Pods: []PodEvent{
			ready(1, "p1", true), ready(1, "p2", true),
			{At: at(9), UID: "o1", Key: "a/o1", Owner: "a/other", Ready: true, Active: true},
			terminating(10.1, "p1"), ready(10.3, "p3", false), gone(10.5, "p1"), ready(11, "p3", true),
			terminating(15, "p2"), ready(15.2, "p4", false), gone(15.4, "p2"), ready(19, "p4", true),
		},
	}
	if d, note := podsChanged(kill.Pods, rss, false, at(10), at(60)); d == nil || *d != 300 || !strings.Contains(note, "a/p3 created") {
		t.Errorf("pod-replaced = %v %s, want 300 ms for a/p3", d, note)
	}
	if d, note := podsChanged(kill.Pods, rss, true, at(10), at(60)); d == nil || *d != 100 || !strings.Contains(note, "a/p1 leaving") {
		t.Errorf("pods-changed = %v %s, want 100 ms for a/p1 leaving", d, note)
	}
	deleted := map[string]bool{"a/p1": true, "a/p2": true}
	if got, note := loadReady(kill, rss, deleted, at(18), at(60)); !got.Equal(at(19)) || !strings.Contains(note, "whole 1s after the last deletion") {
		t.Errorf("load-ready = %v (%s), want +19 s", got.Sub(t0), note)
	}
	// Already whole when the deletions stop: at once.
	if got, _ := loadReady(kill, rss, deleted, at(20), at(60)); !got.Equal(at(20)) {
		t.Errorf("load-ready already whole = %v, want +20 s", got.Sub(t0))
	}
	// Never whole again in the window.
	if got, _ := loadReady(kill, rss, deleted, at(18), at(18.5)); !got.IsZero() {
		t.Errorf("load-ready never whole = %v, want none", got.Sub(t0))
	}
	// The last deletion (p2 at 14.9 s) not delivered yet at its moment:
	// the ReplicaSet looks whole then, but is not until p2 is seen
	// leaving and its replacement Ready.
	if got, note := loadReady(kill, rss, deleted, at(14.9), at(60)); !got.Equal(at(19)) {
		t.Errorf("load-ready from a deletion the watch has not delivered = %v (%s), want +19 s", got.Sub(t0), note)
	}
	// Without that rule it would be at once: the check is what the rule
	// adds.
	if got := replicaSetsReady(kill, rss, at(14.9), at(60), false, nil); !got.Equal(at(14.9)) {
		t.Errorf("replicaSetsReady without the deleted pods = %v, want +14.9 s", got.Sub(t0))
	}

	// scale ×2 at 20 s, back at 30 s.
	sc := &History{
		RS: []RSEvent{{At: at(0), Key: "a/rs", Replicas: 2}, {At: at(20), Key: "a/rs", Replicas: 4}, {At: at(30.2), Key: "a/rs", Replicas: 2}},
		Pods: []PodEvent{
			ready(1, "p1", true), ready(1, "p2", true),
			ready(20.2, "p3", false), ready(20.3, "p4", false), ready(21, "p3", true), ready(22.5, "p4", true),
			terminating(30.4, "p3"), terminating(30.4, "p4"), gone(31, "p3"), gone(31.5, "p4"),
		},
	}
	if d, note := podsChanged(sc.Pods, rss, true, at(20), at(60)); d == nil || *d != 200 || !strings.Contains(note, "a/p3 created") {
		t.Errorf("pods-changed = %v %s, want 200 ms for a/p3", d, note)
	}
	got, note := scaledReady(sc, rss, at(20), at(30), at(60))
	if !got.Equal(at(22.5)) || !strings.Contains(note, "at their old replicas 400ms after the scale back") {
		t.Errorf("scaled-ready = %v (%s), want +22.5 s, back 400 ms after the scale back (terminating pods are not active)", got.Sub(t0), note)
	}
	// The state before the scale back must not count as back: without
	// the ReplicaSet's replicas changing after it, nothing is.
	noBack := &History{RS: sc.RS[:2], Pods: sc.Pods[:6]}
	if got, note := scaledReady(noBack, rss, at(20), at(30), at(60)); !got.IsZero() || !strings.Contains(note, "not seen Ready at their old replicas") {
		t.Errorf("scaled-ready without the scale back seen = %v (%s), want none", got.Sub(t0), note)
	}
	// Never at the new count before the scale back.
	if got, _ := scaledReady(sc, rss, at(20), at(22), at(60)); !got.IsZero() {
		t.Errorf("scaled-ready with the back before the new count = %v, want none", got.Sub(t0))
	}
}

// rs-over-replicas under intended scaling: the pods above a lowered
// replicas are its controller's to delete; a pod created above the
// replicas still counts.
func TestRSOverReplicasScaling(t *testing.T) {
	rs := []RSEvent{{At: at(0), Key: "ns/rs", Replicas: 4}, {At: at(5), Key: "ns/rs", Replicas: 2}}
	down := []PodEvent{
		pod(1, "a", "ns/rs", "n1", true), pod(1, "b", "ns/rs", "n1", true), pod(1, "c", "ns/rs", "n1", true), pod(1, "d", "ns/rs", "n1", true),
		pod(5.1, "c", "ns/rs", "n1", false), pod(5.1, "d", "ns/rs", "n1", false),
		pod(5.2, "a", "ns/rs", "n2", true),
	}
	if inv := CheckRSOverReplicas(down, rs); inv.Count != 0 {
		t.Errorf("scale down 4 → 2: excess %d (%v), want 0", inv.Count, inv.Detail)
	}
	over := append(down[:4:4], pod(5.05, "e", "ns/rs", "", true))
	if inv := CheckRSOverReplicas(over, rs); inv.Count != 3 {
		t.Errorf("a pod created after the scale down to 2 with 4 active: excess %d, want 3", inv.Count)
	}
}

// Needs follows the scenario: the load's and the observers' accesses,
// each fault's own once.
func TestNeeds(t *testing.T) {
	sc, err := Load("api-workload")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range Needs(sc) {
		got[a.String()] = true
	}
	for _, w := range []string{"create namespaces", "update configmaps in namespace kstep-chaos", "watch pods", "list events",
		"get leases.coordination.k8s.io in namespace kube-system", "delete pods in namespace " + sc.Load.Namespaces[0],
		"patch replicasets/scale.apps in namespace " + sc.Load.Namespaces[0]} {
		if !got[w] {
			t.Errorf("needs lacks %q: %v", w, got)
		}
	}
	if got["delete nodes"] || got["create pods/eviction"] {
		t.Errorf("a workload scenario needs node accesses: %v", got)
	}
	dn, err := Load("api-drain-delete-node")
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]bool{}
	for _, a := range Needs(dn) {
		got[a.String()] = true
	}
	for _, w := range []string{"patch nodes", "create pods/eviction", "delete nodes"} {
		if !got[w] {
			t.Errorf("drain and delete-node need %q: %v", w, got)
		}
	}
}
