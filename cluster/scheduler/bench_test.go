package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
)

const benchPods = 10_000

var zones = []string{"zone-a", "zone-b", "zone-c"}

func benchNode(i int) *corev1.Node {
	return st.MakeNode().Name(fmt.Sprintf("node-%05d", i)).
		Capacity("cpu", "32", "memory", "128Gi", "pods", "110").
		Label(corev1.LabelTopologyZone, zones[i%len(zones)]).Obj()
}

func benchPod(ns string, i int) *corev1.Pod {
	return st.MakePod().Namespace(ns).Name(fmt.Sprintf("pod-%05d", i)).Label("app", fmt.Sprintf("app-%d", i%100)).
		Req("cpu", "100m", "memory", "128Mi").Image(fmt.Sprintf("registry.local/app-%d:v1", i%10)).Obj()
}

// BenchmarkSchedulingCycle is the algorithm alone: 10,000 pods through
// the scheduling cycle (snapshot, filter, score, assume) with every
// default plugin, against 500 and 5,000 nodes, bindings confirmed at once
// in memory. No apiserver.
func BenchmarkSchedulingCycle(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for range b.N {
				b.StopTimer()
				h := newHarness(b, inlineExecutor{})
				// Events cost the cycle nothing (client-go's recorder never
				// blocks); the fake one would block when its channel fills.
				h.s.recorder = nil
				h.s.tracer = trace.New("scheduler", io.Discard, 0)
				for i := range nodes {
					h.s.onNodeAdd(benchNode(i))
				}
				for i := range benchPods {
					h.s.onPendingAdd(benchPod("default", i))
				}
				b.StartTimer()
				start := time.Now()
				if n := h.drain(context.Background()); n != benchPods {
					b.Fatalf("ran %d cycles", n)
				}
				total += time.Since(start)
				b.StopTimer()
				_ = h.s.tracer.Close()
				b.StartTimer()
				if got := len(h.binder.placements()); got != benchPods {
					b.Fatalf("placed %d", got)
				}
			}
			b.ReportMetric(float64(benchPods*b.N)/total.Seconds(), "pods/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSchedulerAPIServer is the whole scheduler in this process over
// a real apiserver on a real etcd: 10,000 pending pods (created before the
// scheduler starts) bound through pods/binding onto 500 and 5,000 Node
// objects, with Scheduled events written. pods/s is 10,000 over the time
// from the first pod.scheduled stamp to the last pod.bound stamp;
// pods/s-with-sync also counts the informers' initial lists. The
// benchmark process also runs etcd and the apiserver on the same cores.
// KSTEP_BENCH_BIND_CONCURRENCY overrides the bindings in flight (16).
func BenchmarkSchedulerAPIServer(b *testing.B) {
	if testing.Short() {
		b.Skip("starts etcd and an apiserver")
	}
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			url, _ := testenv.Etcd(b)
			// The binding apiserver stamps pod.bound.
			apiTrace := filepath.Join(b.TempDir(), "apiserver.jsonl")
			api := testenv.StartAPIServer(b, url, func(o *apiserver.Options) { o.TraceFile = apiTrace })
			cs := kubernetes.NewForConfigOrDie(api.Config)
			parallel(b, nodes, func(i int) error {
				_, err := cs.CoreV1().Nodes().Create(context.Background(), benchNode(i), metav1.CreateOptions{})
				return err
			})
			var perSec, withSync, e2eP50, bindMean float64
			for round := range b.N {
				b.StopTimer()
				ns := fmt.Sprintf("bench-%d", round)
				if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				parallel(b, benchPods, func(i int) error {
					_, err := cs.CoreV1().Pods(ns).Create(context.Background(), benchPod(ns, i), metav1.CreateOptions{})
					return err
				})
				b.StartTimer()
				r := runBenchRound(b, api.Config, apiTrace)
				perSec += r.perSec
				withSync += r.withSync
				e2eP50 += r.bindP50
				bindMean += r.bindMean
			}
			b.ReportMetric(perSec/float64(b.N), "pods/s")
			b.ReportMetric(withSync/float64(b.N), "pods/s-with-sync")
			b.ReportMetric(e2eP50/float64(b.N), "scheduled-to-bound-p50-ms")
			b.ReportMetric(bindMean/float64(b.N), "bind-call-mean-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

type roundResult struct{ perSec, withSync, bindP50, bindMean float64 }

func runBenchRound(b *testing.B, rc *rest.Config, apiTrace string) roundResult {
	cfg := rest.CopyConfig(rc)
	cfg.QPS, cfg.Burst = 5000, 10000
	cs := kubernetes.NewForConfigOrDie(cfg)
	var buf syncBuffer
	tracer := trace.New("scheduler", &buf, 1<<17)
	reg := prometheusRegistry()
	metrics := NewMetrics(reg)
	conc, _ := strconv.Atoi(os.Getenv("KSTEP_BENCH_BIND_CONCURRENCY"))
	s, err := New(Config{Client: cs, Tracer: tracer, Log: quiet, Metrics: metrics, BindConcurrency: conc})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- s.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Minute)
	for bound(s) < benchPods {
		if time.Now().After(deadline) {
			b.Fatalf("bound %v of %d in 5 minutes", bound(s), benchPods)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wall := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	_ = tracer.Close()
	if tracer.Dropped() > 0 {
		b.Fatalf("%d trace events dropped", tracer.Dropped())
	}
	// The apiserver stamped every binding before it answered; its sink
	// may not have flushed the last ones yet.
	var first, last time.Time
	var p50 float64
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		bound, err := os.ReadFile(apiTrace)
		if err != nil {
			b.Fatal(err)
		}
		var n int
		first, last, p50, n = traceSpan(b, buf.Bytes(), bound)
		if n >= benchPods {
			break
		}
		if time.Now().After(wait) {
			b.Fatalf("%d of %d pods have pod.bound in the apiserver's trace", n, benchPods)
		}
	}
	var d dto.Metric
	_ = metrics.bindDuration.Write(&d)
	return roundResult{
		perSec:   benchPods / last.Sub(first).Seconds(),
		withSync: benchPods / wall.Seconds(),
		bindP50:  p50,
		bindMean: 1000 * d.Histogram.GetSampleSum() / float64(d.Histogram.GetSampleCount()),
	}
}

// bound counts successful bindings of a scheduler without metrics: its
// cache's pods are exactly the bound and assumed ones.
func bound(s *Scheduler) float64 {
	_, pods, assumed := s.cache.Counts()
	return float64(pods - assumed)
}

// traceSpan reads the step stamps, the scheduler's and the apiserver's:
// first pod.scheduled, last pod.bound of the pods this scheduler chose a
// node for, the median scheduled→bound time and how many pods have both.
func traceSpan(b *testing.B, sched, api []byte) (first, last time.Time, p50ms float64, n int) {
	scheduled := map[string]int64{}
	var deltas []int64
	sc := bufio.NewScanner(io.MultiReader(bytes.NewReader(sched), bytes.NewReader(api)))
	for sc.Scan() {
		var ev trace.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line the apiserver is writing, or a sink's summary
		}
		at := time.Unix(0, ev.TS)
		switch ev.Step {
		case trace.PodScheduled:
			scheduled[string(ev.UID)] = ev.TS
			if first.IsZero() || at.Before(first) {
				first = at
			}
		case trace.PodBound:
			if s, ok := scheduled[string(ev.UID)]; ok {
				deltas = append(deltas, ev.TS-s)
				if at.After(last) {
					last = at
				}
			}
		}
	}
	if len(deltas) == 0 {
		return first, last, 0, 0
	}
	slices.Sort(deltas)
	return first, last, float64(deltas[len(deltas)/2]) / 1e6, len(deltas)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Bytes()
}

// parallel runs create(i) for i in [0, n) on 32 goroutines.
func parallel(b *testing.B, n int, create func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if err := create(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
