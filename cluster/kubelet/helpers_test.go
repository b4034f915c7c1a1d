package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// hollow is one hollow kubelet running in a test.
type hollow struct {
	k      *Kubelet
	sim    *simruntime.Runtime
	trace  *testenv.SyncBuffer
	tracer *trace.Tracer
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the kubelet (its pods keep running in the sim).
func (h *hollow) stop() {
	h.cancel()
	<-h.done
}

func testLog(t testing.TB) *slog.Logger {
	if os.Getenv("KSTEP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startHollow runs a hollow kubelet for node on sim (a new zero-latency
// sim when nil) until test cleanup.
func startHollow(t testing.TB, c *testenv.Cluster, node string, sim *simruntime.Runtime, mutate func(*Config)) *hollow {
	t.Helper()
	if sim == nil {
		var err error
		if sim, err = simruntime.New(node, simruntime.NodeCIDRFor(node), simruntime.Config{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	buf := &testenv.SyncBuffer{}
	tr := trace.New("kubelet-"+node, buf, 0)
	cfg := Config{NodeName: node, Client: c.Client, Tracer: tr, Log: testLog(t),
		Capacity:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
		BackoffInitial: 200 * time.Millisecond, BackoffMax: 2 * time.Second, LeaseRenewInterval: 200 * time.Millisecond,
		RelistPeriod: 200 * time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	k, err := NewHollow(cfg, sim)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &hollow{k: k, sim: sim, trace: buf, tracer: tr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		if err := k.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("kubelet %s: %v", node, err)
		}
	}()
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { cancel(); <-h.done; tr.Close() }) })
	testenv.Eventually(t, 10*time.Second, "node registered", func() (bool, error) { return k.Registered(), nil }, fastPoll)
	return h
}

// fastPoll is how often these tests poll: every 20 ms, as the kubelet's
// short test periods (200 ms) want.
var fastPoll = testenv.Every(20 * time.Millisecond)

// newPod is a one-container pod bound to node.
func newPod(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "test"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "app", Image: "registry.kstep.local/app:v1",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withEnv(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
	}
}

func createPod(t testing.TB, c *testenv.Cluster, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := c.Client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return out
}

func getPod(c *testenv.Cluster, name string) (*corev1.Pod, error) {
	return c.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
}

// waitPod waits until the pod satisfies cond and returns it.
func waitPod(t testing.TB, c *testenv.Cluster, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	testenv.Eventually(t, timeout, fmt.Sprintf("pod %s %s", name, what), func() (bool, error) {
		p, err := getPod(c, name)
		if err != nil {
			return false, err
		}
		last = p
		return cond(p), nil
	}, fastPoll)
	return last
}

func podReady(p *corev1.Pod) bool { return isReady(&p.Status) }

// steps returns the trace's steps for a pod, in order.
func steps(buf *testenv.SyncBuffer, name string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `"name":"`+name+`"`) {
			i := strings.Index(l, `"step":"`)
			rest := l[i+8:]
			out = append(out, rest[:strings.IndexByte(rest, '"')])
		}
	}
	return out
}
