package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/defaultbinder"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// These tests run the scheduler against a real apiserver on a real
// (embedded) etcd, with stand-in kubelets; nothing is faked.

type env struct {
	cs    kubernetes.Interface
	nodes *testenv.Nodes
}

func startEnv(t *testing.T, specs ...testenv.NodeSpec) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and an apiserver")
	}
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	return &env{cs: cs, nodes: testenv.StartNodes(t, cs, specs...)}
}

var quiet = slog.New(slog.DiscardHandler)

// run starts a scheduler until the test ends.
func (e *env) run(t *testing.T, cfg Config) *Scheduler {
	t.Helper()
	if cfg.Client == nil {
		cfg.Client = e.cs
	}
	if cfg.Log == nil {
		cfg.Log = quiet
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("scheduler: %v", err)
		}
	})
	return s
}

func nodeSpecs(n int, cpu string) []testenv.NodeSpec {
	out := make([]testenv.NodeSpec, n)
	for i := range out {
		out[i] = testenv.NodeSpec{Name: fmt.Sprintf("node-%d", i), CPU: cpu}
	}
	return out
}

func pendingPod(name string, cpu string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "test"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func create(t *testing.T, cs kubernetes.Interface, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", p.Name, err)
		}
	}
}

// boundPods lists the pods bound to a node, by node.
func boundPods(t *testing.T, cs kubernetes.Interface) map[string][]string {
	t.Helper()
	list, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Name)
		}
	}
	return out
}

func count(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// fastPoll is how often these tests poll: every 20 ms, a few binds'
// worth.
var fastPoll = testenv.Every(20 * time.Millisecond)

func events(t *testing.T, cs kubernetes.Interface, pod, reason string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.name": pod, "reason": reason}.AsSelector().String()
	list, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func TestIntegrationSpread(t *testing.T) {
	e := startEnv(t, nodeSpecs(5, "4")...)
	s := e.run(t, Config{})
	for i := range 50 {
		create(t, e.cs, pendingPod(fmt.Sprintf("p%02d", i), "100m"))
	}
	testenv.Eventually(t, 20*time.Second, "50 pods bound", func() bool { return count(boundPods(t, e.cs)) == 50 }, fastPoll)
	limit := int(math.Ceil(50.0/5)) + 1
	for node, pods := range boundPods(t, e.cs) {
		if len(pods) > limit {
			t.Errorf("%s holds %d pods (limit %d)", node, len(pods), limit)
		}
	}
	// The assigned-pod informer confirmed every assumption.
	testenv.Eventually(t, 10*time.Second, "the cache to confirm 50 pods", func() bool {
		nodes, pods, assumed := s.Cache().Counts()
		return nodes == 5 && pods == 50 && assumed == 0
	}, fastPoll)
	testenv.Eventually(t, 10*time.Second, "a Scheduled event", func() bool {
		ev := events(t, e.cs, "p00", ReasonScheduled)
		return len(ev) == 1 && strings.HasPrefix(ev[0].Message, "Successfully assigned default/p00 to node-")
	}, fastPoll)
}

func TestIntegrationUnschedulableThenNodeAdded(t *testing.T) {
	taint := []corev1.Taint{{Key: "key", Value: "value", Effect: corev1.TaintEffectNoSchedule}}
	e := startEnv(t,
		testenv.NodeSpec{Name: "small-0", CPU: "1"}, testenv.NodeSpec{Name: "small-1", CPU: "1"}, testenv.NodeSpec{Name: "small-2", CPU: "1"},
		testenv.NodeSpec{Name: "tainted-0", CPU: "16", Taints: taint}, testenv.NodeSpec{Name: "tainted-1", CPU: "16", Taints: taint},
	)
	e.run(t, Config{})
	create(t, e.cs, pendingPod("big", "2"))
	want := "0/5 nodes are available: 2 node(s) had untolerated taint {key: value}, 3 Insufficient cpu. preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.."
	testenv.Eventually(t, 10*time.Second, "FailedScheduling", func() bool {
		ev := events(t, e.cs, "big", ReasonFailedScheduling)
		if len(ev) > 0 && ev[0].Message != want {
			t.Fatalf("FailedScheduling message %q\nwant %q", ev[0].Message, want)
		}
		return len(ev) == 1 && ev[0].Type == corev1.EventTypeWarning
	}, fastPoll)
	testenv.Eventually(t, 10*time.Second, "PodScheduled=False", func() bool {
		p, err := e.cs.CoreV1().Pods("default").Get(context.Background(), "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == want {
				return true
			}
		}
		return false
	}, fastPoll)

	w, err := e.cs.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=big"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A plain Node object, not testenv's Nodes.Add: that races with its
	// own kubelet loop (reported in the scheduler's hand-off notes).
	fits := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "fits", Labels: map[string]string{corev1.LabelHostname: "fits"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	added := time.Now()
	if _, err := e.cs.CoreV1().Nodes().Create(context.Background(), fits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				t.Fatalf("watch: %v", ev.Object)
			}
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				took := time.Since(added)
				t.Logf("unschedulable → bound after node add: %v (on %s)", took, p.Spec.NodeName)
				if p.Spec.NodeName != "fits" {
					t.Fatalf("bound to %s", p.Spec.NodeName)
				}
				return
			}
		case <-timeout:
			t.Fatal("not bound within 5 s of a fitting node being added")
		}
	}
}

func TestIntegrationAntiAffinity(t *testing.T) {
	e := startEnv(t, nodeSpecs(5, "4")...)
	e.run(t, Config{})
	for i := range 6 {
		p := pendingPod(fmt.Sprintf("web-%d", i), "100m")
		p.Labels = map[string]string{"app": "web"}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
		create(t, e.cs, p)
	}
	testenv.Eventually(t, 20*time.Second, "5 replicas bound", func() bool { return count(boundPods(t, e.cs)) == 5 }, fastPoll)
	for node, pods := range boundPods(t, e.cs) {
		if len(pods) != 1 {
			t.Errorf("%s holds %v", node, pods)
		}
	}
	var pending string
	list, _ := e.cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName="})
	if len(list.Items) != 1 {
		t.Fatalf("%d pending, want 1", len(list.Items))
	}
	pending = list.Items[0].Name
	testenv.Eventually(t, 10*time.Second, "FailedScheduling for the 6th", func() bool {
		ev := events(t, e.cs, pending, ReasonFailedScheduling)
		return len(ev) > 0 && ev[0].Message == "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.."
	}, fastPoll)
	time.Sleep(300 * time.Millisecond)
	if n := count(boundPods(t, e.cs)); n != 5 {
		t.Fatalf("%d bound", n)
	}
}

// slowBinder delays every binding: a slow apiserver.
type slowBinder struct {
	framework.BindPlugin
	delay time.Duration
}

func (b *slowBinder) Bind(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, node string) *framework.Status {
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return framework.AsStatus(ctx.Err())
	}
	return b.BindPlugin.Bind(ctx, state, pod, node)
}

func TestIntegrationSlowBindingDoesNotOvercommit(t *testing.T) {
	e := startEnv(t, testenv.NodeSpec{Name: "only", CPU: "4"})
	reg := plugins.NewRegistry()
	reg[defaultbinder.Name] = func(h framework.Handle) (framework.Plugin, error) {
		p, err := defaultbinder.New(h)
		return &slowBinder{BindPlugin: p.(framework.BindPlugin), delay: 500 * time.Millisecond}, err
	}
	e.run(t, Config{Registry: reg})
	for i := range 10 {
		create(t, e.cs, pendingPod(fmt.Sprintf("p%d", i), "1"))
	}
	testenv.Eventually(t, 20*time.Second, "4 pods bound", func() bool { return count(boundPods(t, e.cs)) >= 4 }, fastPoll)
	// Every pod has had its first cycle long before the first binding
	// returned; let any wrong decision surface.
	time.Sleep(1500 * time.Millisecond)
	if n := count(boundPods(t, e.cs)); n != 4 {
		t.Fatalf("%d pods of 1 cpu bound to a 4-cpu node", n)
	}
}

// Two schedulers, one lease: only the leader binds; when it stops, the
// other takes over.
func TestIntegrationLeaderElection(t *testing.T) {
	e := startEnv(t, nodeSpecs(2, "64")...)
	type candidate struct {
		metrics *Metrics
		cancel  context.CancelFunc
		done    chan struct{}
	}
	start := func(id string) *candidate {
		c := &candidate{metrics: NewMetrics(prometheusRegistry()), done: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		opts := DefaultOptions()
		opts.Identity = id
		le := opts.LeaderConfig()
		go func() {
			defer close(c.done)
			if err := RunElected(ctx, Config{Client: e.cs, Metrics: c.metrics, Log: quiet}, &le); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}()
		return c
	}
	a := start("a")
	testenv.Eventually(t, 10*time.Second, "a leads", func() bool { return gauge(a.metrics.leader) == 1 }, fastPoll)
	b := start("b")
	var stopOnce sync.Once
	stop := func(c *candidate) { c.cancel(); <-c.done }
	t.Cleanup(func() { stopOnce.Do(func() { stop(a) }); stop(b) })

	for i := range 10 {
		create(t, e.cs, pendingPod(fmt.Sprintf("first-%d", i), "100m"))
	}
	testenv.Eventually(t, 20*time.Second, "10 bound", func() bool { return count(boundPods(t, e.cs)) == 10 }, fastPoll)
	testenv.Eventually(t, 10*time.Second, "the leader counts 10 bindings", func() bool { return bindings(a.metrics) == 10 }, fastPoll)
	if got, other := bindings(a.metrics), bindings(b.metrics); got != 10 || other != 0 || gauge(b.metrics.leader) != 0 {
		t.Fatalf("leader bound %v, standby bound %v", got, other)
	}

	lost := time.Now()
	stopOnce.Do(func() { stop(a) }) // the leader goes away (and releases the lease)
	testenv.Eventually(t, 10*time.Second, "b leads", func() bool { return gauge(b.metrics.leader) == 1 }, fastPoll)
	t.Logf("standby leads %v after the leader stopped", time.Since(lost))
	for i := range 10 {
		create(t, e.cs, pendingPod(fmt.Sprintf("second-%d", i), "100m"))
	}
	testenv.Eventually(t, 20*time.Second, "20 bound", func() bool { return count(boundPods(t, e.cs)) == 20 }, fastPoll)
	// A binder counts its binding after the API answered, so a pod can be
	// seen bound a moment before the new leader's counter moves.
	testenv.Eventually(t, 10*time.Second, "the new leader counts 10 bindings", func() bool { return bindings(b.metrics) == 10 }, fastPoll)
	if got, other := bindings(a.metrics), bindings(b.metrics); got != 10 || other != 10 {
		t.Fatalf("old leader bound %v, new leader %v", got, other)
	}
}
