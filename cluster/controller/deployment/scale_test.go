package deployment

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Proportional scaling: upstream's TestScale cases (sync_test.go), which
// use surge 0 and unavailable 0 unless stated. The ReplicaSets were sized
// for the old Deployment (their desired/max annotations).
func TestPlanScale(t *testing.T) {
	type rsCase struct {
		name string
		size int32
		age  int
	}
	for _, tc := range []struct {
		name               string
		replicas, before   int32 // d's replicas now and when sized
		surge, surgeBefore int
		newRS              *rsCase
		old                []rsCase // newest first, as upstream lists them
		wantNew            int32
		wantOld            []int32
		desiredOverride    map[string]int32
	}{
		{name: "normal scaling event: 10 -> 12", replicas: 12, before: 10, newRS: &rsCase{"v1", 10, 2}, wantNew: 12},
		{name: "normal scaling event: 10 -> 5", replicas: 5, before: 10, newRS: &rsCase{"v1", 10, 2}, wantNew: 5},
		{name: "proportional scaling: 5 -> 10", replicas: 10, before: 5, newRS: &rsCase{"v2", 2, 2},
			old: []rsCase{{"v1", 3, 1}}, wantNew: 4, wantOld: []int32{6}},
		{name: "proportional scaling: 5 -> 3", replicas: 3, before: 5, newRS: &rsCase{"v2", 2, 2},
			old: []rsCase{{"v1", 3, 1}}, wantNew: 1, wantOld: []int32{2}},
		{name: "proportional scaling: 9 -> 4", replicas: 4, before: 9, newRS: &rsCase{"v2", 8, 2},
			old: []rsCase{{"v1", 1, 1}}, wantNew: 4, wantOld: []int32{0}},
		{name: "proportional scaling: 7 -> 10", replicas: 10, before: 7, newRS: &rsCase{"v3", 2, 2},
			old: []rsCase{{"v2", 3, 1}, {"v1", 2, 0}}, wantNew: 3, wantOld: []int32{4, 3}},
		{name: "proportional scaling: 13 -> 8", replicas: 8, before: 13, newRS: &rsCase{"v3", 2, 2},
			old: []rsCase{{"v2", 8, 1}, {"v1", 3, 0}}, wantNew: 1, wantOld: []int32{5, 2}},
		{name: "leftover distribution: 3 -> 4", replicas: 4, before: 3, newRS: &rsCase{"v3", 1, 2},
			old: []rsCase{{"v2", 1, 1}, {"v1", 1, 0}}, wantNew: 2, wantOld: []int32{1, 1}},
		{name: "leftover distribution: 3 -> 2", replicas: 2, before: 3, newRS: &rsCase{"v3", 1, 2},
			old: []rsCase{{"v2", 1, 1}, {"v1", 1, 0}}, wantNew: 1, wantOld: []int32{1, 0}},
		{name: "proportional scaling (no new rs): 4 -> 5", replicas: 5, before: 4,
			old: []rsCase{{"v2", 2, 1}, {"v1", 2, 0}}, wantOld: []int32{3, 2}},
		{name: "proportional scaling: 6 -> 0", replicas: 0, before: 6, newRS: &rsCase{"v3", 3, 2},
			old: []rsCase{{"v2", 2, 1}, {"v1", 1, 0}}, wantNew: 0, wantOld: []int32{0, 0}},
		{name: "proportional scaling: 0 -> 6", replicas: 6, before: 6, newRS: &rsCase{"v3", 0, 2},
			old: []rsCase{{"v2", 0, 1}, {"v1", 0, 0}}, wantNew: 6, wantOld: []int32{0, 0}},
		{name: "failed rs update", replicas: 5, before: 5, newRS: &rsCase{"v3", 2, 2},
			old: []rsCase{{"v2", 1, 1}, {"v1", 1, 0}}, wantNew: 2, wantOld: []int32{2, 1},
			desiredOverride: map[string]int32{"v2": 3}},
		{name: "deployment with surge pods", replicas: 20, before: 10, surge: 2, surgeBefore: 2, newRS: &rsCase{"v2", 6, 2},
			old: []rsCase{{"v1", 6, 1}}, wantNew: 11, wantOld: []int32{11}},
		{name: "change both surge and size", replicas: 50, before: 10, surge: 6, surgeBefore: 3, newRS: &rsCase{"v2", 5, 2},
			old: []rsCase{{"v1", 8, 1}}, wantNew: 22, wantOld: []int32{34}},
		// The stalled rollout of the integration test (10 replicas, surge 3,
		// unavailable 2, new pods never ready), paused and scaled to 20:
		// 23 = 20+3 spread as 8:5.
		{name: "stalled rollout: 10 -> 20", replicas: 20, before: 10, surge: 3, surgeBefore: 3, newRS: &rsCase{"v2", 5, 2},
			old: []rsCase{{"v1", 8, 1}}, wantNew: 9, wantOld: []int32{14}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rolling(tc.replicas, tc.surge, 0)
			mk := func(c rsCase) *appsv1.ReplicaSet {
				r := rs(c.name, c.size, c.size, c.age)
				desired := tc.before
				if o, ok := tc.desiredOverride[c.name]; ok {
					desired = o
				}
				return sized(r, desired, desired+int32(tc.surgeBefore))
			}
			var nrs *appsv1.ReplicaSet
			if tc.newRS != nil {
				nrs = mk(*tc.newRS)
			}
			var old []*appsv1.ReplicaSet
			for _, c := range tc.old {
				old = append(old, mk(c))
			}
			sizes := map[*appsv1.ReplicaSet]int32{}
			for _, step := range planScale(d, nrs, old) {
				sizes[step.rs] = step.size
			}
			size := func(r *appsv1.ReplicaSet) int32 {
				if s, ok := sizes[r]; ok {
					return s
				}
				return rsReplicas(r)
			}
			if nrs != nil && size(nrs) != tc.wantNew {
				t.Errorf("new: %d, want %d", size(nrs), tc.wantNew)
			}
			var gotOld []int32
			for _, r := range old {
				gotOld = append(gotOld, size(r))
			}
			if fmt.Sprint(gotOld) != fmt.Sprint(append([]int32{}, tc.wantOld...)) && len(tc.wantOld) > 0 {
				t.Errorf("old: %v, want %v", gotOld, tc.wantOld)
			}
		})
	}
}

// A saturated new ReplicaSet (all replicas, sized for them, all available)
// takes the old ones to zero; a broken one (not available) does not.
func TestPlanScaleSaturated(t *testing.T) {
	d := rolling(2, 1, 1)
	nrs := sized(rs("v2", 2, 2, 2), 2, 3)
	old := sized(rs("v1", 1, 1, 1), 2, 3)
	plan := planScale(d, nrs, []*appsv1.ReplicaSet{old})
	if len(plan) != 1 || plan[0].rs != old || plan[0].size != 0 {
		t.Fatalf("saturated: plan %v, want v1 to 0", plan)
	}
	nrs.Status.AvailableReplicas = 0
	for _, step := range planScale(d, nrs, []*appsv1.ReplicaSet{old}) {
		if step.size != rsReplicas(step.rs) {
			t.Fatalf("broken new ReplicaSet changed %s to %d", step.rs.Name, step.size)
		}
	}
}

func TestIsScalingEvent(t *testing.T) {
	d := rolling(10, 2, 1)
	a := sized(rs("a", 10, 10, 0), 10, 12)
	if isScalingEvent(d, []*appsv1.ReplicaSet{a, nil}) {
		t.Error("no change is a scaling event")
	}
	d.Spec.Replicas = ptrInt32(12)
	if !isScalingEvent(d, []*appsv1.ReplicaSet{a, nil}) {
		t.Error("10 -> 12 is not a scaling event")
	}
	// Inactive ReplicaSets and ones without the annotation do not count.
	idle := sized(rs("idle", 0, 0, 0), 3, 4)
	bare := rs("bare", 5, 5, 0)
	d.Spec.Replicas = ptrInt32(10)
	if isScalingEvent(d, []*appsv1.ReplicaSet{a, idle, bare}) {
		t.Error("an inactive or unannotated ReplicaSet made a scaling event")
	}
}

func ptrInt32(v int32) *int32 { return &v }

// Recreate waits for every old pod, terminating ones included.
func TestOldPodsRunning(t *testing.T) {
	old, nrs := rs("old", 0, 0, 0), rs("new", 0, 0, 1)
	old.Status.Replicas = 0
	pod := func(phase corev1.PodPhase) *corev1.Pod { return &corev1.Pod{Status: corev1.PodStatus{Phase: phase}} }
	for _, tc := range []struct {
		name   string
		status int32
		pods   []*corev1.Pod
		want   bool
	}{
		{"nothing left", 0, nil, false},
		{"status still counts pods", 2, nil, true},
		{"a running pod", 0, []*corev1.Pod{pod(corev1.PodRunning)}, true},
		{"an unknown pod", 0, []*corev1.Pod{pod(corev1.PodUnknown)}, true},
		{"finished pods only", 0, []*corev1.Pod{pod(corev1.PodSucceeded), pod(corev1.PodFailed)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old.Status.Replicas = tc.status
			m := map[types.UID][]*corev1.Pod{old.UID: tc.pods, nrs.UID: {pod(corev1.PodRunning)}}
			if got := oldPodsRunning(nrs, []*appsv1.ReplicaSet{old}, m); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
