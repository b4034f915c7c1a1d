package queue

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func newTestQueue(opts ...Option) (*PriorityQueue, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	return New(clk, opts...), clk
}

func popNames(q *PriorityQueue) []string {
	var out []string
	for p := q.TryPop(); p != nil; p = q.TryPop() {
		out = append(out, p.Pod.Name)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOrderPriorityThenAge(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("old-low").Obj())
	clk.Step(time.Millisecond)
	q.Add(st.MakePod().Name("new-high").Priority(100).Obj())
	clk.Step(time.Millisecond)
	q.Add(st.MakePod().Name("newer-low").Obj())
	q.Add(st.MakePod().Name("same-time-low").Obj())
	q.Add(st.MakePod().Name("old-mid").Priority(10).Obj())
	want := []string{"new-high", "old-mid", "old-low", "newer-low", "same-time-low"}
	if got := popNames(q); !equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestBackoffDoublesToMax(t *testing.T) {
	q, _ := newTestQueue()
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 30: 10 * time.Second} {
		if got := q.BackoffDuration(attempts); got != want {
			t.Errorf("attempts %d: %v, want %v", attempts, got, want)
		}
	}
}

func TestErrorBacksOff(t *testing.T) {
	q, clk := newTestQueue()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	for attempt, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		p := q.TryPop()
		if p == nil || p.Attempts != attempt+1 {
			t.Fatalf("attempt %d: popped %+v", attempt+1, p)
		}
		if !q.Requeue(p, false) {
			t.Fatal("not requeued")
		}
		if w := q.Where(pod); w != "backoff" {
			t.Fatalf("after an error the pod is in %q, want backoff", w)
		}
		clk.Step(wait - time.Millisecond)
		q.FlushBackoffCompleted()
		if q.TryPop() != nil {
			t.Fatalf("attempt %d: popped before %v", attempt+1, wait)
		}
		clk.Step(time.Millisecond)
		q.FlushBackoffCompleted()
		if w := q.Where(pod); w != "active" {
			t.Fatalf("attempt %d: after %v the pod is in %q", attempt+1, wait, w)
		}
	}
}

func TestUnschedulableMovesOnRelevantEvents(t *testing.T) {
	// The pod was rejected by "Taint"; Taint cares about node taints only.
	mayFit := func(p *QueuedPodInfo, ev framework.ClusterEvent) bool {
		return ev.Resource == framework.WildCard || (p.UnschedulablePlugins["Taint"] && ev.Resource == framework.Node && ev.ActionType&(framework.Add|framework.UpdateNodeTaint) != 0)
	}
	q, clk := newTestQueue(WithPodMayFitAfter(mayFit))
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p := q.TryPop()
	p.UnschedulablePlugins = map[string]bool{"Taint": true}
	q.Requeue(p, true)
	if w := q.Where(pod); w != "unschedulable" {
		t.Fatalf("in %q, want unschedulable", w)
	}
	q.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDel)
	if w := q.Where(pod); w != "unschedulable" {
		t.Fatalf("an irrelevant event moved it to %q", w)
	}
	// Within its backoff, a relevant event sends it to backoffQ...
	q.MoveAllToActiveOrBackoffQueue(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint})
	if w := q.Where(pod); w != "backoff" {
		t.Fatalf("in %q, want backoff", w)
	}
	clk.Step(time.Second)
	q.FlushBackoffCompleted()
	if w := q.Where(pod); w != "active" {
		t.Fatalf("in %q after backoff, want active", w)
	}
	// ...after it, straight to activeQ.
	p = q.TryPop()
	q.Requeue(p, true)
	clk.Step(5 * time.Second)
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd)
	if w := q.Where(pod); w != "active" {
		t.Fatalf("in %q, want active", w)
	}
}

func TestEventWhileInFlight(t *testing.T) {
	q, _ := newTestQueue()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p := q.TryPop()
	// A node is added while the cycle runs on a snapshot without it.
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd)
	q.Requeue(p, true)
	if w := q.Where(pod); w != "backoff" {
		t.Fatalf("in %q: the pod would miss the node it failed just before", w)
	}
	// An event before the Pop does not count.
	p = q.TryPop() // from backoffQ: activeQ is empty
	if p == nil {
		t.Fatal("an idle queue did not pop from backoffQ")
	}
	q.Requeue(p, true)
	if w := q.Where(pod); w != "unschedulable" {
		t.Fatalf("in %q: an old event counted", w)
	}
}

func TestPopFromBackoffWhenIdle(t *testing.T) {
	q, _ := newTestQueue()
	moved, failed, fresh := st.MakePod().Name("moved").Obj(), st.MakePod().Name("failed").Obj(), st.MakePod().Name("fresh").Obj()
	q.Add(moved)
	q.Add(failed)
	pm, pf := q.TryPop(), q.TryPop()
	q.Requeue(pm, true)  // no node fits
	q.Requeue(pf, false) // an error
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd)
	if q.Where(moved) != "backoff" || q.Where(failed) != "backoff" {
		t.Fatalf("moved in %q, failed in %q", q.Where(moved), q.Where(failed))
	}
	q.Add(fresh)
	// activeQ first; then the moved pod without waiting; never the error.
	if got := popNames(q); !equal(got, []string{"fresh", "moved"}) {
		t.Fatalf("popped %v", got)
	}
}

func TestUnschedulableTimeout(t *testing.T) {
	q, clk := newTestQueue(WithPodMayFitAfter(func(*QueuedPodInfo, framework.ClusterEvent) bool { return false }))
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	q.Requeue(q.TryPop(), true)
	clk.Step(29 * time.Second)
	q.FlushUnschedulableLeftover()
	if w := q.Where(pod); w != "unschedulable" {
		t.Fatalf("left the pool early, to %q", w)
	}
	clk.Step(time.Second)
	q.FlushUnschedulableLeftover()
	if w := q.Where(pod); w != "active" {
		t.Fatalf("in %q after the timeout, want active", w)
	}
}

func TestDeleteRemovesEverywhere(t *testing.T) {
	q, _ := newTestQueue()
	a, b, c := st.MakePod().Name("a").Obj(), st.MakePod().Name("b").Obj(), st.MakePod().Name("c").Obj()
	q.Add(a)
	q.Add(b)
	q.Add(c)
	pa, pb := q.TryPop(), q.TryPop()
	q.Requeue(pa, false) // backoff
	q.Requeue(pb, true)  // unschedulable
	for _, p := range []*corev1.Pod{a, b, c} {
		q.Delete(p)
		if w := q.Where(p); w != "" {
			t.Fatalf("%s still in %q", p.Name, w)
		}
	}
	if a, b, u := q.Len(); a+b+u != 0 {
		t.Fatalf("lengths %d %d %d", a, b, u)
	}
}

func TestDeletedInFlightIsNotRequeued(t *testing.T) {
	q, _ := newTestQueue()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p := q.TryPop()
	q.Delete(pod) // deleted, or bound by another scheduler
	if q.Requeue(p, true) {
		t.Fatal("requeued a pod deleted in flight")
	}
	if w := q.Where(pod); w != "" {
		t.Fatalf("in %q", w)
	}
	// Same name, new pod: a fresh entry, not confused with the old one.
	again := st.MakePod().Name("p").UID("uid-2").Obj()
	q.Add(again)
	if w := q.Where(again); w != "active" {
		t.Fatalf("new pod in %q", w)
	}
}

func TestNeverInTwoQueues(t *testing.T) {
	q, clk := newTestQueue()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	q.Add(pod)
	q.Update(pod, pod)
	if a, b, u := q.Len(); a != 1 || b+u != 0 {
		t.Fatalf("lengths %d %d %d", a, b, u)
	}
	p := q.TryPop()
	q.Add(pod) // a relist while in flight
	if a, _, _ := q.Len(); a != 0 {
		t.Fatal("an in-flight pod was queued again")
	}
	q.Requeue(p, true)
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd)
	q.Add(pod)
	clk.Step(time.Second)
	q.FlushBackoffCompleted()
	q.FlushUnschedulableLeftover()
	if a, b, u := q.Len(); a+b+u != 1 {
		t.Fatalf("lengths %d %d %d", a, b, u)
	}
}

func TestUpdateInPool(t *testing.T) {
	q, clk := newTestQueue()
	pod := st.MakePod().Name("p").Req("cpu", "8").Obj()
	q.Add(pod)
	q.Requeue(q.TryPop(), true)
	clk.Step(5 * time.Second)
	status := pod.DeepCopy()
	status.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}
	q.Update(pod, status)
	if w := q.Where(pod); w != "unschedulable" {
		t.Fatalf("a status update moved the pod to %q", w)
	}
	smaller := status.DeepCopy()
	smaller.Labels = map[string]string{"retry": "yes"}
	q.Update(status, smaller)
	if w := q.Where(pod); w != "active" {
		t.Fatalf("a spec/metadata change left the pod in %q", w)
	}
}

func TestRunMovesBackoffOnTime(t *testing.T) {
	q := New(nil, WithBackoff(20*time.Millisecond, 100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p := q.Pop()
	start := time.Now()
	q.Requeue(p, false)
	if q.Pop() == nil {
		t.Fatal("closed")
	}
	if d := time.Since(start); d < 20*time.Millisecond || d > 2*time.Second {
		t.Fatalf("backoff of 20ms took %v", d)
	}
	cancel()
	<-done
	if q.Pop() != nil {
		t.Fatal("Pop after Run ended")
	}
}
