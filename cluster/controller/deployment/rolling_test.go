package deployment

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		surge, unavailable any
		desired            int32
		wantSurge, wantU   int32
	}{
		{2, 1, 10, 2, 1},
		{"25%", "25%", 10, 3, 2}, // surge 2.5 rounds up, unavailable 2.5 down
		{"25%", "25%", 4, 1, 1},
		{"25%", "25%", 1, 1, 0},  // 0.25: surge rounds up to 1, unavailable down to 0
		{"1%", "1%", 2, 1, 0},    // surge 0.02 rounds up
		{"0%", "1%", 2, 0, 1},    // both zero after rounding: unavailable becomes 1
		{0, 0, 5, 0, 1},          // validation refuses 0/0; if it came, the rollout still moves
		{"100%", "0%", 3, 3, 0},  // blue/green-like
		{"30%", "30%", 10, 3, 3}, // exact
		{"33%", "33%", 10, 4, 3}, // 3.3: up / down
		{"50%", "50%", 0, 0, 1},  // no replicas
		{5, "10%", 7, 5, 0},      // mixed
		{"10%", 20, 100, 10, 20}, // unavailable above replicas is allowed here; maxUnavailable clamps
		{"200%", "0%", 3, 6, 0},  // surge may exceed 100%
	} {
		t.Run(fmt.Sprintf("%v/%v of %d", tc.surge, tc.unavailable, tc.desired), func(t *testing.T) {
			s, u, err := resolveFenceposts(ios(tc.surge), ios(tc.unavailable), tc.desired)
			if err != nil {
				t.Fatal(err)
			}
			if s != tc.wantSurge || u != tc.wantU {
				t.Errorf("got surge %d unavailable %d, want %d %d", s, u, tc.wantSurge, tc.wantU)
			}
		})
	}
	if _, _, err := resolveFenceposts(&intstr.IntOrString{Type: intstr.String, StrVal: "lots"}, nil, 3); err == nil {
		t.Error("a malformed percentage resolved")
	}
}

func TestMaxUnavailableClamped(t *testing.T) {
	d := rolling(3, 1, 5)
	if got := maxUnavailable(d); got != 3 {
		t.Errorf("maxUnavailable = %d, want the 3 replicas", got)
	}
	d.Spec.Replicas = new(int32)
	if got := maxUnavailable(d); got != 0 {
		t.Errorf("maxUnavailable of 0 replicas = %d", got)
	}
	d = rolling(3, 1, 1)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if maxUnavailable(d) != 0 || maxSurge(d) != 0 {
		t.Error("Recreate has a surge or an unavailability budget")
	}
}

// How many replicas the new ReplicaSet may have now (the surge).
func TestNewRSReplicas(t *testing.T) {
	for _, tc := range []struct {
		name               string
		replicas           int32
		surge, unavailable any
		oldSpec, oldStatus int32 // the old ReplicaSet: asked for / reports
		oldCached          int32 // its active pods in our pod cache
		newSpec            int32
		want               int32
	}{
		// Upstream's reconcileNewReplicaSet cases.
		{"no surge: wait for old to shrink", 10, 0, 1, 10, 10, 10, 0, 0},
		{"surge 2 from a full old", 10, 2, 0, 10, 10, 10, 0, 2},
		{"old half gone", 10, 2, 0, 5, 5, 5, 0, 7},
		{"surge spent", 10, 2, 0, 10, 10, 10, 2, 2},
		{"never beyond replicas", 10, 5, 0, 0, 0, 0, 8, 10},
		// The rollout of the integration test, step by step.
		{"v1->v2 first step", 10, 2, 1, 10, 10, 10, 0, 2},
		{"old scaled to 9, status and cache caught up", 10, 2, 1, 9, 9, 9, 2, 3},
		// The old ReplicaSet is asked for fewer pods, but its controller
		// has not deleted them yet: upstream would create now and overshoot.
		{"old scaled to 9, status behind", 10, 2, 1, 9, 10, 9, 2, 2},
		{"old scaled to 9, our cache behind", 10, 2, 1, 9, 9, 10, 2, 2},
		{"percent surge rounds up", 10, "25%", "25%", 10, 10, 10, 0, 3},
		{"percent on 1 replica", 1, "25%", "25%", 1, 1, 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rolling(tc.replicas, tc.surge, tc.unavailable)
			old := rs("old", tc.oldSpec, tc.oldStatus, 0)
			old.Status.Replicas = tc.oldStatus
			nrs := rs("new", tc.newSpec, 0, 1)
			active := activePods{old.UID: tc.oldCached, nrs.UID: tc.newSpec}
			got, err := newRSReplicas(d, []*appsv1.ReplicaSet{old, nrs}, nrs, active)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("new ReplicaSet may have %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("recreate takes all replicas", func(t *testing.T) {
		d := rolling(4, 1, 1)
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		nrs := rs("new", 0, 0, 1)
		if got, _ := newRSReplicas(d, []*appsv1.ReplicaSet{nrs}, nrs, nil); got != 4 {
			t.Errorf("got %d", got)
		}
	})
}

// How far old ReplicaSets shrink in one step (unavailability).
func TestPlanScaleDownOld(t *testing.T) {
	type rsCase struct {
		spec, available int32
	}
	for _, tc := range []struct {
		name        string
		replicas    int32
		unavailable any
		old         []rsCase // oldest first
		newRS       rsCase
		want        []int32 // resulting sizes of old, oldest first
	}{
		// Upstream's reconcileOldReplicaSets and cleanup cases (surge 0).
		{"maxUnavailable 0 resolves to 1", 10, 0, []rsCase{{10, 10}}, rsCase{0, 0}, []int32{9}},
		{"maxUnavailable 2", 10, 2, []rsCase{{10, 10}}, rsCase{0, 0}, []int32{8}},
		{"unhealthy cleaned first", 10, 2, []rsCase{{10, 8}}, rsCase{0, 0}, []int32{8}},
		{"one unhealthy, one ready", 10, 2, []rsCase{{10, 9}}, rsCase{0, 0}, []int32{8}},
		{"new RS unavailable pods block", 10, 2, []rsCase{{8, 8}}, rsCase{2, 0}, []int32{8}},
		{"too few available", 10, 2, []rsCase{{10, 1}}, rsCase{0, 0}, []int32{8}}, // only the 2 the budget allows, unhealthy ones
		// The integration test's rollout: 10 replicas, surge 2, unavailable 1.
		{"surge up, new not ready", 10, 1, []rsCase{{10, 10}}, rsCase{2, 0}, []int32{9}},
		{"new pods available", 10, 1, []rsCase{{9, 9}}, rsCase{3, 3}, []int32{6}},
		{"last step", 10, 1, []rsCase{{1, 1}}, rsCase{10, 10}, []int32{0}},
		{"done", 10, 1, []rsCase{{0, 0}}, rsCase{10, 10}, []int32{0}},
		// Several old ReplicaSets: the oldest goes first.
		{"oldest first", 10, 3, []rsCase{{2, 2}, {8, 8}}, rsCase{0, 0}, []int32{0, 7}},
		{"unhealthy of a newer old RS before healthy of the oldest", 10, 1, []rsCase{{5, 5}, {5, 3}}, rsCase{2, 2}, []int32{4, 3}},
		// upstream's "case 1": crashlooping new RS rolled back to.
		{"rollover with broken newest", 10, 2, []rsCase{{5, 0}, {8, 8}}, rsCase{0, 0}, []int32{0, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rolling(tc.replicas, 0, tc.unavailable)
			var old []*appsv1.ReplicaSet
			for i, c := range tc.old {
				old = append(old, rs(fmt.Sprintf("old%d", i), c.spec, c.available, i))
			}
			nrs := rs("new", tc.newRS.spec, tc.newRS.available, 100)
			all := append(append([]*appsv1.ReplicaSet(nil), old...), nrs)
			got := make([]int32, len(old))
			for i, r := range old {
				got[i] = rsReplicas(r)
			}
			for _, step := range planScaleDownOld(d, all, filterActive(old), nrs) {
				for i, r := range old {
					if r == step.rs {
						got[i] = step.size
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("old sizes %v, want %v", got, tc.want)
			}
		})
	}
}

// A ReplicaSet whose status still counts the pods of its last scale-down
// (more available than asked for) must not be scaled down again on it.
func TestPlanScaleDownOldWaitsForStaleStatus(t *testing.T) {
	d := rolling(10, 2, 1)
	old := rs("old", 9, 10, 0) // just scaled 10 -> 9, status from before
	nrs := rs("new", 3, 3, 1)
	if plan := planScaleDownOld(d, []*appsv1.ReplicaSet{old, nrs}, []*appsv1.ReplicaSet{old}, nrs); plan != nil {
		t.Fatalf("scaled down on a stale status: %v", plan)
	}
	old.Status.AvailableReplicas, old.Status.Replicas = 9, 9
	plan := planScaleDownOld(d, []*appsv1.ReplicaSet{old, nrs}, []*appsv1.ReplicaSet{old}, nrs)
	if len(plan) != 1 || plan[0].size != 6 {
		t.Fatalf("plan %v, want old to 6 (12 available - 9 minimum = 3)", plan)
	}
}

// The two bounds hold along a whole simulated rollout in which pods become
// available the moment they are asked for (the worst case for surge) and
// old pods disappear the moment they are not.
func TestRolloutSimulationKeepsBounds(t *testing.T) {
	for _, tc := range []struct {
		replicas           int32
		surge, unavailable any
	}{
		{10, 2, 1}, {10, "25%", "25%"}, {3, 0, 1}, {5, 1, 0}, {100, "10%", "5%"}, {7, "100%", 0}, {1, 0, 1},
	} {
		t.Run(fmt.Sprintf("%d %v %v", tc.replicas, tc.surge, tc.unavailable), func(t *testing.T) {
			d := rolling(tc.replicas, tc.surge, tc.unavailable)
			s, _, _ := resolveFenceposts(ios(tc.surge), ios(tc.unavailable), tc.replicas)
			minAvail := tc.replicas - maxUnavailable(d)
			old := rs("old", tc.replicas, tc.replicas, 0)
			nrs := rs("new", 0, 0, 1)
			settle := func(r *appsv1.ReplicaSet) {
				r.Status.Replicas, r.Status.AvailableReplicas = rsReplicas(r), rsReplicas(r)
			}
			for step := 0; step < 1000; step++ {
				all := []*appsv1.ReplicaSet{old, nrs}
				active := activePods{old.UID: rsReplicas(old), nrs.UID: rsReplicas(nrs)}
				n, _ := newRSReplicas(d, all, nrs, active)
				if n != rsReplicas(nrs) {
					nrs.Spec.Replicas = &n
				} else {
					for _, p := range planScaleDownOld(d, all, filterActive([]*appsv1.ReplicaSet{old}), nrs) {
						p.rs.Spec.Replicas = &p.size
					}
				}
				if total := rsReplicas(old) + rsReplicas(nrs); total > tc.replicas+s {
					t.Fatalf("step %d: %d pods asked for, limit %d", step, total, tc.replicas+s)
				}
				// Availability drops at once on a scale-down, before the new
				// pods become available.
				if avail := min(old.Status.AvailableReplicas, rsReplicas(old)) + nrs.Status.AvailableReplicas; avail < minAvail {
					t.Fatalf("step %d: %d available, minimum %d", step, avail, minAvail)
				}
				settle(old)
				settle(nrs)
				if rsReplicas(nrs) == tc.replicas && rsReplicas(old) == 0 {
					return
				}
			}
			t.Fatalf("rollout did not finish: old %d new %d", rsReplicas(old), rsReplicas(nrs))
		})
	}
}
