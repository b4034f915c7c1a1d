package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/defaultbinder"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// fakeBinder stands in for DefaultBinder: it records bindings, fails when
// told, and — like the informer would — confirms them in the cache.
type fakeBinder struct {
	mu      sync.Mutex
	s       *Scheduler
	bound   map[string]string // pod → node
	fail    error
	confirm bool
}

func (b *fakeBinder) Name() string { return defaultbinder.Name }

func (b *fakeBinder) Bind(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, node string) *framework.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return framework.AsStatus(b.fail)
	}
	b.bound[pod.Name] = node
	if b.confirm {
		_ = b.s.cache.AddPod(pod)
	}
	return nil
}

func (b *fakeBinder) placements() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.bound))
	for k, v := range b.bound {
		out[k] = v
	}
	return out
}

// inlineExecutor binds on the scheduling goroutine: fully deterministic.
type inlineExecutor struct{}

func (inlineExecutor) Go(f func()) { f() }
func (inlineExecutor) Wait()       {}

// heldExecutor keeps bindings until released: a slow apiserver.
type heldExecutor struct{ tasks []func() }

func (e *heldExecutor) Go(f func()) { e.tasks = append(e.tasks, f) }
func (e *heldExecutor) Wait()       {}
func (e *heldExecutor) release() {
	tasks := e.tasks
	e.tasks = nil
	for _, f := range tasks {
		f()
	}
}

type harness struct {
	s        *Scheduler
	binder   *fakeBinder
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	trace    *bytes.Buffer
	tracer   *trace.Tracer
}

func newHarness(t testing.TB, exec executor, nodes ...*corev1.Node) *harness {
	t.Helper()
	h := &harness{
		binder:   &fakeBinder{bound: map[string]string{}, confirm: true},
		clock:    clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		recorder: record.NewFakeRecorder(1000),
		trace:    &bytes.Buffer{},
	}
	h.tracer = trace.New("scheduler", h.trace, 0)
	reg := plugins.NewRegistry()
	reg[defaultbinder.Name] = func(framework.Handle) (framework.Plugin, error) { return h.binder, nil }
	s, err := newScheduler(Config{Registry: reg, Clock: h.clock, Seed: 42, Recorder: h.recorder, Tracer: h.tracer, Log: slog.New(slog.DiscardHandler)}, exec)
	if err != nil {
		t.Fatal(err)
	}
	h.s, h.binder.s = s, s
	for _, n := range nodes {
		s.onNodeAdd(n)
	}
	return h
}

// drain runs cycles until activeQ is empty.
func (h *harness) drain(ctx context.Context) int {
	n := 0
	for p := h.s.queue.TryPop(); p != nil; p = h.s.queue.TryPop() {
		h.s.scheduleOne(ctx, p)
		n++
	}
	return n
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func nodes(n int, cpu string) []*corev1.Node {
	out := make([]*corev1.Node, n)
	for i := range out {
		out[i] = st.MakeNode().Name(fmt.Sprintf("node-%03d", i)).Capacity("cpu", cpu).Obj()
	}
	return out
}

func TestSpreadByLeastAllocated(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, nodes(5, "8")...)
	for i := range 50 {
		h.s.onPendingAdd(st.MakePod().Name(fmt.Sprintf("p%02d", i)).Req("cpu", "100m", "memory", "100Mi").Obj())
	}
	if n := h.drain(context.Background()); n != 50 {
		t.Fatalf("ran %d cycles", n)
	}
	perNode := map[string]int{}
	for _, node := range h.binder.placements() {
		perNode[node]++
	}
	for node, n := range perNode {
		if n > 50/5+1 {
			t.Errorf("%s got %d pods: %v", node, n, perNode)
		}
	}
	if len(perNode) != 5 {
		t.Errorf("used %d nodes: %v", len(perNode), perNode)
	}
	_ = h.tracer.Close()
	// pod.bound is the binding apiserver's stamp, not the scheduler's.
	for step, want := range map[string]int{trace.PodObservedSched: 50, trace.PodScheduled: 50, trace.PodBound: 0} {
		if c := strings.Count(h.trace.String(), `"step":"`+step+`"`); c != want {
			t.Errorf("%s stamped %d times, want %d", step, c, want)
		}
	}
	if ev := h.events(); len(ev) != 50 || !strings.HasPrefix(ev[0], "Normal Scheduled Successfully assigned default/p") {
		t.Errorf("events: %d, first %q", len(ev), ev[0])
	}
}

// The cycle is a deterministic function of the cache, the queue and the
// seed: parallel filtering with early stop included.
func TestCycleIsDeterministic(t *testing.T) {
	run := func() map[string]string {
		h := newHarness(t, inlineExecutor{}, nodes(500, "4")...)
		for i := range 600 {
			h.s.onPendingAdd(st.MakePod().Name(fmt.Sprintf("p%03d", i)).Req("cpu", "250m").Obj())
		}
		h.drain(context.Background())
		return h.binder.placements()
	}
	a, b := run(), run()
	if len(a) != 600 {
		t.Fatalf("placed %d", len(a))
	}
	for pod, node := range a {
		if b[pod] != node {
			t.Fatalf("%s: %s then %s", pod, node, b[pod])
		}
	}
}

func TestFailedSchedulingThenNodeAdded(t *testing.T) {
	small := nodes(3, "1")
	tainted := []*corev1.Node{
		st.MakeNode().Name("t1").Capacity("cpu", "16").Taint("key", "value", corev1.TaintEffectNoSchedule).Obj(),
		st.MakeNode().Name("t2").Capacity("cpu", "16").Taint("key", "value", corev1.TaintEffectNoSchedule).Obj(),
	}
	h := newHarness(t, inlineExecutor{}, append(small, tainted...)...)
	pod := st.MakePod().Name("big").Req("cpu", "2").Obj()
	h.s.onPendingAdd(pod)
	h.drain(context.Background())
	want := "Warning FailedScheduling 0/5 nodes are available: 2 node(s) had untolerated taint {key: value}, 3 Insufficient cpu. preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.."
	if ev := h.events(); len(ev) != 1 || ev[0] != want {
		t.Fatalf("events %q\nwant %q", ev, want)
	}
	if w := h.s.queue.Where(pod); w != "unschedulable" {
		t.Fatalf("pod in %q", w)
	}
	// A node that fits arrives: the pod is released to backoffQ and, the
	// scheduler being idle, tried at once without waiting out its backoff.
	h.s.onNodeAdd(st.MakeNode().Name("fits").Capacity("cpu", "4").Obj())
	if w := h.s.queue.Where(pod); w != "backoff" {
		t.Fatalf("pod in %q after node add", w)
	}
	h.drain(context.Background())
	if got := h.binder.placements()["big"]; got != "fits" {
		t.Fatalf("bound to %q", got)
	}
}

func TestNoNodes(t *testing.T) {
	h := newHarness(t, inlineExecutor{})
	pod := st.MakePod().Name("p").Obj()
	h.s.onPendingAdd(pod)
	h.drain(context.Background())
	if ev := h.events(); len(ev) != 1 || ev[0] != "Warning FailedScheduling no nodes available to schedule pods" {
		t.Fatalf("events %q", ev)
	}
	if w := h.s.queue.Where(pod); w != "unschedulable" {
		t.Fatalf("pod in %q", w)
	}
}

// Bindings are slow (held): the assumed pods alone must keep the next
// cycles from putting more on the node than fits.
func TestAssumedPodsDoNotOvercommit(t *testing.T) {
	exec := &heldExecutor{}
	h := newHarness(t, exec, st.MakeNode().Name("n").Capacity("cpu", "4").Obj())
	for i := range 10 {
		h.s.onPendingAdd(st.MakePod().Name(fmt.Sprintf("p%d", i)).Req("cpu", "1").Obj())
	}
	h.drain(context.Background())
	if len(exec.tasks) != 4 {
		t.Fatalf("%d bindings started, want 4", len(exec.tasks))
	}
	if _, _, assumed := h.s.cache.Counts(); assumed != 4 {
		t.Fatalf("%d assumed", assumed)
	}
	if _, _, u := h.s.queue.Len(); u != 6 {
		t.Fatalf("%d unschedulable, want 6", u)
	}
	exec.release()
	if got := len(h.binder.placements()); got != 4 {
		t.Fatalf("%d bound", got)
	}
	if _, _, assumed := h.s.cache.Counts(); assumed != 0 {
		t.Fatalf("%d still assumed after confirmation", assumed)
	}
}

func TestBindFailureForgetsAndBacksOff(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, st.MakeNode().Name("n").Capacity("cpu", "1").Obj())
	h.binder.fail = errors.New("apiserver says no")
	pod := st.MakePod().Name("p").Req("cpu", "1").Obj()
	h.s.onPendingAdd(pod)
	h.drain(context.Background())
	if _, pods, _ := h.s.cache.Counts(); pods != 0 {
		t.Fatal("the failed binding was not forgotten")
	}
	if w := h.s.queue.Where(pod); w != "backoff" {
		t.Fatalf("pod in %q, want backoff", w)
	}
	ev := h.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedScheduling binding rejected: ") {
		t.Fatalf("events %q", ev)
	}
	h.binder.fail = nil
	h.clock.Step(time.Second)
	h.s.queue.FlushBackoffCompleted()
	h.drain(context.Background())
	if h.binder.placements()["p"] != "n" {
		t.Fatal("not bound on retry")
	}
}

func TestNoBindAfterLeadershipLost(t *testing.T) {
	exec := &heldExecutor{}
	h := newHarness(t, exec, st.MakeNode().Name("n").Obj())
	pod := st.MakePod().Name("p").Req("cpu", "1").Obj()
	h.s.onPendingAdd(pod)
	ctx, cancel := context.WithCancel(context.Background())
	h.drain(ctx)
	cancel() // the lease is lost while the binding waits
	exec.release()
	if len(h.binder.placements()) != 0 {
		t.Fatal("bound after the context ended")
	}
	if _, pods, _ := h.s.cache.Counts(); pods != 0 {
		t.Fatal("assumed pod kept")
	}
}

func TestRequiredAntiAffinityHostname(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, nodes(5, "4")...)
	var pods []*corev1.Pod
	for i := range 6 {
		p := st.MakePod().Name(fmt.Sprintf("web-%d", i)).Label("app", "web").PodAntiAffinity("app", "web", corev1.LabelHostname).Obj()
		pods = append(pods, p)
		h.s.onPendingAdd(p)
	}
	h.drain(context.Background())
	seen := map[string]bool{}
	for _, node := range h.binder.placements() {
		if seen[node] {
			t.Fatalf("two replicas on %s", node)
		}
		seen[node] = true
	}
	if len(seen) != 5 {
		t.Fatalf("%d placed", len(seen))
	}
	var warn []string
	for _, e := range h.events() {
		if strings.HasPrefix(e, "Warning") {
			warn = append(warn, e)
		}
	}
	want := "Warning FailedScheduling 0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.."
	if len(warn) != 1 || warn[0] != want {
		t.Fatalf("warnings %q", warn)
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		pct         int32
		nodes, want int
	}{
		{0, 10, 10},
		{0, 99, 99},
		{0, 100, 100},   // 50% = 50 → at least 100
		{0, 500, 230},   // 50 − 4 = 46%
		{0, 1000, 420},  // 42%
		{0, 5000, 500},  // 50 − 40 = 10%
		{0, 6000, 300},  // 50 − 48 = 2% → floor 5%
		{0, 150, 100},   // 48% = 72 → at least 100
		{30, 1000, 300}, // configured
		{100, 5000, 5000},
	}
	for _, tt := range tests {
		if got := numFeasibleNodesToFind(tt.pct, tt.nodes); got != tt.want {
			t.Errorf("numFeasibleNodesToFind(%d, %d) = %d, want %d", tt.pct, tt.nodes, got, tt.want)
		}
	}
}

// With 1000 nodes only 420 are filtered per cycle; the rotating start
// index must still visit every node.
func TestRotationSamplesEveryNode(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, nodes(1000, "64")...)
	for i := range 300 {
		h.s.onPendingAdd(st.MakePod().Name(fmt.Sprintf("p%03d", i)).Req("cpu", "100m").Obj())
	}
	h.drain(context.Background())
	used := map[string]bool{}
	for _, n := range h.binder.placements() {
		used[n] = true
	}
	// LeastAllocated prefers the nodes it has not used: 300 pods on 300
	// distinct nodes is only possible if the window moves.
	if len(used) != 300 {
		t.Fatalf("300 pods used %d nodes", len(used))
	}
}

func TestSchedulingGates(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, nodes(1, "4")...)
	gated := st.MakePod().Name("gated").Obj()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	h.s.onPendingAdd(gated)
	if h.drain(context.Background()) != 0 || h.s.queue.Where(gated) != "" {
		t.Fatal("a gated pod was queued")
	}
	open := gated.DeepCopy()
	open.Spec.SchedulingGates = nil
	h.s.onPendingUpdate(gated, open)
	h.drain(context.Background())
	if h.binder.placements()["gated"] == "" {
		t.Fatal("not scheduled once its gates were removed")
	}
}

// The bind-delay failpoint holds each binding that long before its call
// (the nightly self-check's 5 ms slower ⑤).
func TestBindDelayFailpoint(t *testing.T) {
	h := newHarness(t, inlineExecutor{}, nodes(1, "8")...)
	h.s.bindDelay = 30 * time.Millisecond
	h.s.onPendingAdd(st.MakePod().Name("p").Req("cpu", "100m", "memory", "100Mi").Obj())
	start := time.Now()
	if n := h.drain(context.Background()); n != 1 {
		t.Fatalf("ran %d cycles", n)
	}
	if d := time.Since(start); d < 30*time.Millisecond || len(h.binder.placements()) != 1 {
		t.Errorf("bound %d pods in %v, want 1 after at least 30 ms", len(h.binder.placements()), d)
	}
}
