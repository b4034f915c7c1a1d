package bench

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// What the caches held before the load is the baseline; only changes
// during the load are disruptions, and only of leader Leases and of
// nodes' Ready.
func TestDisruptions(t *testing.T) {
	start := time.Unix(1000, 0)
	clock := start
	d := &disruptions{start: start, now: func() time.Time { return clock }, holders: map[string]string{}, ready: map[string]bool{}}
	lease := func(name, holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	node := func(name string, st corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, Reason: "R"}}}}
	}
	// The initial list, one leader changing and a node going before the
	// load: the baseline.
	d.lease(lease("kstep-scheduler", "scheduler-0"))
	d.lease(lease("kstep-scheduler", "scheduler-1"))
	d.node(node("n1", corev1.ConditionTrue))
	d.node(node("n2", corev1.ConditionFalse))
	d.synced = true

	clock = start.Add(2 * time.Second)
	d.lease(lease("kstep-scheduler", "scheduler-1"))   // renewal: nothing
	d.lease(lease("some-other-lease", "x"))            // not a leader's
	d.lease(lease("some-other-lease", "y"))            // not a leader's
	d.node(node("n1", corev1.ConditionTrue))           // heartbeat: nothing
	d.lease(lease("kstep-controller-manager", "cm-0")) // first seen: baseline
	d.lease(lease("kube-scheduler", "host-a_1"))       // upstream's: baseline
	clock = start.Add(3500 * time.Millisecond)
	d.lease(lease("kstep-scheduler", "scheduler-0"))
	d.node(node("n1", corev1.ConditionUnknown))
	d.node(node("n2", corev1.ConditionTrue))
	d.lease(lease("kube-scheduler", "host-b_2")) // upstream's leader moved

	got := d.out
	if len(got) != 4 {
		t.Fatalf("disruptions %+v", got)
	}
	want := []string{"kube-system/kstep-scheduler: scheduler-1 → scheduler-0", "n1 left Ready (Ready=Unknown R)", "n2 Ready again", "kube-system/kube-scheduler: host-a_1 → host-b_2"}
	for i, w := range want {
		if got[i].Detail != w || got[i].AtS != 3.5 {
			t.Errorf("disruption %d: %+v, want %q at 3.5 s", i, got[i], w)
		}
	}
	if got[0].Kind != "leader" || !strings.HasPrefix(got[1].Kind, "node") || got[3].Kind != "leader" {
		t.Errorf("kinds %+v", got)
	}
}
