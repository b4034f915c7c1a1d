package replicaset

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSlowStart(t *testing.T) {
	var calls atomic.Int32
	done, err := slowStart(10, 1, func() error { calls.Add(1); return nil })
	if err != nil || done != 10 || calls.Load() != 10 {
		t.Fatalf("all succeed: done %d calls %d err %v", done, calls.Load(), err)
	}
	// Failing from the first call: one batch of one, then stop.
	calls.Store(0)
	done, err = slowStart(10, 1, func() error { calls.Add(1); return errors.New("no") })
	if err == nil || done != 0 || calls.Load() != 1 {
		t.Fatalf("failing: done %d calls %d err %v", done, calls.Load(), err)
	}
	// Failing after 3 successes: batches 1, 2, then 4 with failures.
	calls.Store(0)
	done, _ = slowStart(10, 1, func() error {
		if calls.Add(1) > 3 {
			return errors.New("no")
		}
		return nil
	})
	if done != 3 || calls.Load() != 7 {
		t.Fatalf("partial: done %d calls %d", done, calls.Load())
	}
}

func pod(name, node string, phase corev1.PodPhase, ready bool, age time.Duration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func TestPickVictims(t *testing.T) {
	pods := []*corev1.Pod{
		pod("running-ready-old", "n1", corev1.PodRunning, true, time.Hour),
		pod("running-ready-new", "n1", corev1.PodRunning, true, time.Minute),
		pod("running-notready", "n1", corev1.PodRunning, false, time.Hour),
		pod("pending-bound", "n1", corev1.PodPending, false, time.Hour),
		pod("unscheduled", "", corev1.PodPending, false, time.Hour),
	}
	want := []string{"unscheduled", "pending-bound", "running-notready", "running-ready-new", "running-ready-old"}
	got := pickVictims(pods, 5)
	for i := range want {
		if got[i].Name != want[i] {
			t.Fatalf("position %d: got %s, want %s (order %v)", i, got[i].Name, want[i], names(got))
		}
	}
	if len(pickVictims(pods, 2)) != 2 {
		t.Fatal("n not honoured")
	}
}

func names(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
