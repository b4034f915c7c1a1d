package kubelet

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// fleet is N hollow kubelets in this process sharing one client, as
// kstep hollow-nodes runs them.
type fleet struct {
	kubelets []*Kubelet
	sims     []*simruntime.Runtime
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func startFleet(t testing.TB, cfg *rest.Config, n int, prof simruntime.Config) *fleet {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("hollow-%d", i)
		sim, err := simruntime.New(name, simruntime.NodeCIDR(i), prof, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewHollow(Config{NodeName: name, Client: cs, Log: testLog(t),
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}, sim)
		if err != nil {
			t.Fatal(err)
		}
		f.kubelets, f.sims = append(f.kubelets, k), append(f.sims, sim)
		f.wg.Go(func() { _ = k.Run(ctx) })
	}
	t.Cleanup(f.stop)
	testenv.Eventually(t, 2*time.Minute, "nodes registered", func() (bool, error) {
		for _, k := range f.kubelets {
			if !k.Registered() {
				return false, nil
			}
		}
		return true, nil
	}, fastPoll)
	return f
}

func (f *fleet) stop() {
	f.cancel()
	f.wg.Wait()
}

// readyCounter counts Ready pods through one pod informer (a client's
// watch, as the load generator has).
func readyCounter(t testing.TB, cs kubernetes.Interface) *atomic.Int64 {
	var n atomic.Int64
	seen := sync.Map{}
	fac := informers.NewSharedInformerFactory(cs, 0)
	inf := fac.Core().V1().Pods().Informer()
	count := func(o any) {
		p, ok := o.(*corev1.Pod)
		if ok && podReady(p) {
			if _, dup := seen.LoadOrStore(p.UID, true); !dup {
				n.Add(1)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count, UpdateFunc: func(_, o any) { count(o) }})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); fac.Shutdown() })
	fac.Start(ctx.Done())
	fac.WaitForCacheSync(ctx.Done())
	return &n
}

// createPods creates n pods bound round-robin to nodes hollow-0..nodes-1,
// from 16 concurrent clients.
func createPods(t testing.TB, cs kubernetes.Interface, prefix string, n, nodes int) {
	t.Helper()
	var wg sync.WaitGroup
	var failed, settled atomic.Int64
	var first atomic.Value // the first create's error, for the failure
	next := atomic.Int64{}
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				p := newPod(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("hollow-%d", i%nodes))
				if err := createSettled(cs, p, &settled); err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d pod creates failed, the first: %v", failed.Load(), first.Load())
	}
	if n := settled.Load(); n > 0 {
		t.Logf("%d creates answered 504 (etcd did not answer in time, the outcome unknown) were settled by reading, as the answer asks", n)
	}
}

// createSettled creates p as the apiserver's answers ask a client to: a
// create answered 504 (etcd did not answer in time: "the write may have
// been applied: read before writing again") is settled by reading the pod,
// and sent again only if it is not there; AlreadyExists after such an
// answer is the first create's. Names are this test's own, so a pod of
// that name is this create's. Any other error, or a third 504, fails.
func createSettled(cs kubernetes.Interface, p *corev1.Pod, settled *atomic.Int64) error {
	ctx := context.Background()
	unknown := false
	for attempt := 0; ; attempt++ {
		_, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		switch {
		case err == nil:
			return nil
		case unknown && apierrors.IsAlreadyExists(err):
			settled.Add(1)
			return nil
		case !apierrors.IsTimeout(err) || attempt == 2:
			return err
		}
		unknown = true
		if _, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
			settled.Add(1)
			return nil
		} else if !apierrors.IsNotFound(err) {
			return err
		}
	}
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHollowScale runs 200 hollow nodes with 10 pods each, bound
// round-robin, to 2,000 Ready pods, and reports the time and memory.
func TestHollowScale(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	const nodes, perNode = 200, 10
	c := testenv.StartCluster(t)
	ready := readyCounter(t, c.Client)
	base := heapInuse()
	start := time.Now()
	f := startFleet(t, c.API.Config, nodes, simruntime.Config{})
	registered := time.Since(start)
	idle := heapInuse()

	start = time.Now()
	createPods(t, c.Client, "scale", nodes*perNode, nodes)
	created := time.Since(start)
	testenv.Eventually(t, 3*time.Minute, "2,000 pods Ready", func() (bool, error) { return ready.Load() >= nodes*perNode, nil }, fastPoll)
	toReady := time.Since(start)
	loaded := heapInuse()

	sandboxes := 0
	for _, s := range f.sims {
		r, _ := s.Sandboxes()
		sandboxes += r
	}
	if sandboxes != nodes*perNode {
		t.Errorf("%d ready sandboxes, want %d", sandboxes, nodes*perNode)
	}
	t.Logf("%d hollow nodes registered in %v; heap %.1f MiB → %.1f MiB idle (%.0f KiB per node, apiserver watch state included)",
		nodes, registered.Round(time.Millisecond), mib(base), mib(idle), float64(idle-base)/nodes/1024)
	t.Logf("%d pods created in %v, all Ready after %v (%.0f pods/s); heap with pods %.1f MiB (%.0f KiB per node)",
		nodes*perNode, created.Round(time.Millisecond), toReady.Round(time.Millisecond), float64(nodes*perNode)/toReady.Seconds(),
		mib(loaded), float64(loaded-base)/nodes/1024)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
