package nodelifecycle

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Unix(1_700_000_000, 0)

func nodeWith(ready corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}, Spec: corev1.NodeSpec{Taints: taints}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: metav1.NewTime(t0.Add(-time.Hour))}}
	}
	return n
}

func TestStale(t *testing.T) {
	n := nodeWith(corev1.ConditionTrue)
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: ptr.To(metav1.NewMicroTime(t0))}}
	for _, tc := range []struct {
		now  time.Duration
		want bool
	}{{0, false}, {8 * time.Second, false}, {8*time.Second + time.Millisecond, true}} {
		if got := stale(n, lease, 8*time.Second, t0.Add(tc.now), time.Time{}); got != tc.want {
			t.Errorf("at +%v: stale=%v, want %v", tc.now, got, tc.want)
		}
	}
	if !stale(n, nil, 8*time.Second, t0, time.Time{}) {
		t.Error("a node without a lease and an hour-old heartbeat is stale")
	}
	// After full disruption, the floor gives an hour-old heartbeat a fresh
	// grace period.
	if stale(n, nil, 8*time.Second, t0.Add(8*time.Second), t0) || !stale(n, nil, 8*time.Second, t0.Add(9*time.Second), t0) {
		t.Error("with the floor at t0, stale from t0+8s on")
	}
}

func TestReconcileTaints(t *testing.T) {
	other := corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}
	unreach := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	unreachNS := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}
	u, nr := corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady
	cases := []struct {
		name      string
		node      *corev1.Node
		want      []string
		changed   bool
		disrupted bool
	}{
		{"ready, none", nodeWith(corev1.ConditionTrue, other), []string{"dedicated"}, false, false},
		{"unknown adds unreachable in both effects", nodeWith(corev1.ConditionUnknown, other), []string{"dedicated", u, u}, true, false},
		{"unknown keeps unreachable", nodeWith(corev1.ConditionUnknown, unreach, unreachNS), []string{u, u}, false, false},
		{"unknown adds the missing NoSchedule twin", nodeWith(corev1.ConditionUnknown, unreach), []string{u, u}, true, false},
		{"false swaps to not-ready", nodeWith(corev1.ConditionFalse, unreach, unreachNS), []string{nr, nr}, true, false},
		{"ready again removes", nodeWith(corev1.ConditionTrue, unreach, unreachNS, other), []string{"dedicated"}, true, false},
		{"no condition is unreachable", nodeWith(""), []string{u, u}, true, false},
		// Full disruption: NoSchedule only, the NoExecute twin lifted.
		{"disrupted adds NoSchedule only", nodeWith(corev1.ConditionUnknown), []string{u}, true, true},
		{"disrupted lifts NoExecute", nodeWith(corev1.ConditionUnknown, unreach, unreachNS), []string{u}, true, true},
		{"disrupted keeps NoSchedule", nodeWith(corev1.ConditionUnknown, unreachNS), []string{u}, false, true},
	}
	for _, tc := range cases {
		effects := healthEffects
		if tc.disrupted {
			effects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule}
		}
		got, changed := reconcileTaints(tc.node.Spec.Taints, wantTaint(tc.node), effects, t0)
		var keys []string
		for _, tt := range got {
			keys = append(keys, tt.Key)
		}
		if changed != tc.changed || len(keys) != len(tc.want) {
			t.Errorf("%s: got %v (changed %v), want %v (changed %v)", tc.name, keys, changed, tc.want, tc.changed)
			continue
		}
		for i := range keys {
			if keys[i] != tc.want[i] {
				t.Errorf("%s: got %v, want %v", tc.name, keys, tc.want)
			}
		}
	}
}

func TestEvictAt(t *testing.T) {
	added := metav1.NewTime(t0)
	taints := []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}}
	tol := func(secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
	}
	cases := []struct {
		name string
		tols []corev1.Toleration
		at   time.Duration
		must bool
	}{
		{"untolerated: the eviction timeout", nil, 10 * time.Second, true},
		{"tolerated 30s", []corev1.Toleration{tol(ptr.To[int64](30))}, 30 * time.Second, true},
		{"tolerated forever", []corev1.Toleration{tol(nil)}, 0, false},
		{"the longest toleration wins", []corev1.Toleration{tol(ptr.To[int64](5)), tol(ptr.To[int64](60))}, 60 * time.Second, true},
		{"unrelated toleration", []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}}, 10 * time.Second, true},
	}
	for _, tc := range cases {
		p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.tols}}
		at, must := evictAt(p, taints, 10*time.Second)
		if must != tc.must || (must && !at.Equal(t0.Add(tc.at))) {
			t.Errorf("%s: at %v must %v, want +%v %v", tc.name, at.Sub(t0), must, tc.at, tc.must)
		}
	}
}

func TestFullDisruption(t *testing.T) {
	for _, tc := range []struct {
		nodes, unhealthy int
		want             bool
	}{
		{0, 0, false}, {3, 2, false}, {3, 3, true}, {1, 1, true}, {1, 0, false},
	} {
		if got := fullDisruption(tc.nodes, tc.unhealthy); got != tc.want {
			t.Errorf("%d of %d unhealthy: full disruption %v, want %v", tc.unhealthy, tc.nodes, got, tc.want)
		}
	}
	now := t0.Add(time.Minute)
	fresh := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-time.Second)}}}
	if !healthy(nodeWith(corev1.ConditionTrue), fresh, 8*time.Second, now) {
		t.Error("Ready with a fresh Lease: unhealthy")
	}
	if healthy(nodeWith(corev1.ConditionTrue), nil, 8*time.Second, now) {
		t.Error("Ready but stale: healthy")
	}
	if healthy(nodeWith(corev1.ConditionUnknown), fresh, 8*time.Second, now) {
		t.Error("Unknown with a fresh Lease: healthy")
	}
}
