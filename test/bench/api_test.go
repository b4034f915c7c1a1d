package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/montanaflynn/stats"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// cluster brings up 3 etcd members and one apiserver as processes.
func cluster(b *testing.B, apiserverArgs ...string) (*process.Provider, *kubernetes.Clientset, string) {
	b.Helper()
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		b.Skip("KSTEP_BIN is not set: run `make bench-api`")
	}
	cfg := process.DefaultConfig()
	cfg.Binary, cfg.StateDir, cfg.APIServers = bin, b.TempDir(), 1
	cfg.APIServerArgs = apiserverArgs
	p, err := process.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Up(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Down(context.Background()) })
	var api string
	for _, a := range p.Actors() {
		if a.Role == provider.RoleAPIServer {
			api = a.Endpoint
		}
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: api, QPS: -1, Burst: -1})
	if err != nil {
		b.Fatal(err)
	}
	return p, cs, api
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}},
	}
}

func report(b *testing.B, unit string, ds []float64) {
	if len(ds) == 0 {
		return
	}
	p50, _ := stats.Percentile(ds, 50)
	p99, _ := stats.Percentile(ds, 99)
	b.ReportMetric(p50, "p50-"+unit)
	b.ReportMetric(p99, "p99-"+unit)
}

// BenchmarkPodCreate: pod creates per second and create latency through one
// apiserver on a 3-member etcd, from 32 concurrent clients.
func BenchmarkPodCreate(b *testing.B) {
	_, cs, _ := cluster(b)
	ctx := context.Background()
	var n atomic.Int64
	var mu sync.Mutex
	var lat []float64
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(16) // 16 × GOMAXPROCS(2) = 32 clients
	b.RunParallel(func(pb *testing.PB) {
		var local []float64
		for pb.Next() {
			name := fmt.Sprintf("p%d", n.Add(1))
			t0 := time.Now()
			if _, err := cs.CoreV1().Pods("default").Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
				b.Error(err)
				return
			}
			local = append(local, float64(time.Since(t0).Microseconds())/1000)
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	b.StopTimer()
	b.ReportMetric(float64(len(lat))/time.Since(start).Seconds(), "creates/s")
	report(b, "ms", lat)
}

// etcdWatchers sums etcd's own watcher gauge over every member.
func etcdWatchers(b *testing.B, p *process.Provider) float64 {
	total := 0.0
	for _, a := range p.Actors() {
		if a.Role != provider.RoleEtcd {
			continue
		}
		resp, err := http.Get(a.Endpoint + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "etcd_debugging_mvcc_watcher_total ") {
				var v float64
				fmt.Sscan(strings.TrimPrefix(line, "etcd_debugging_mvcc_watcher_total "), &v)
				total += v
			}
		}
	}
	return total
}

// BenchmarkWatchFanout: 1,000 pod watchers on one apiserver while a writer
// creates pods at 100/s and at 500/s (the latter with and without flush
// coalescing). The watchers run in the benchmark process, on the same two
// cores, so the writes/s achieved is reported beside the rate offered. Reports the etcd watchers the 1,000 client watches
// added (etcd's own gauge; one watch cache means 0) and the delivery latency
// from the write's acknowledgement to each watcher's receipt.
func BenchmarkWatchFanout(b *testing.B) {
	for _, c := range []struct {
		qps   float64
		flush string
	}{{100, "10ms"}, {500, "0s"}, {500, "10ms"}} {
		b.Run(fmt.Sprintf("writes=%v/flush=%s", c.qps, c.flush), func(b *testing.B) {
			benchFanout(b, c.qps, "--watch-flush-interval="+c.flush)
		})
	}
}

func benchFanout(b *testing.B, qps float64, apiserverArgs ...string) {
	const watchers = 1000
	p, cs, api := cluster(b, apiserverArgs...)
	before := etcdWatchers(b, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var acked sync.Map // pod name → ack time
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: watchers, MaxConnsPerHost: 0}
	hc := &http.Client{Transport: tr}
	ready := make(chan struct{}, watchers)
	for range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", api+"/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=false&resourceVersion=0", nil)
			resp, err := hc.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			ready <- struct{}{}
			br := bufio.NewReaderSize(resp.Body, 64<<10)
			var local []float64
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					break
				}
				now := time.Now()
				// Find "name":"…" without decoding the whole event.
				i := bytes.Index(line, []byte(`"name":"`))
				if i < 0 || !bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) {
					continue
				}
				rest := line[i+8:]
				name := string(rest[:bytes.IndexByte(rest, '"')])
				if t, ok := acked.Load(name); ok {
					local = append(local, float64(now.Sub(t.(time.Time)).Microseconds())/1000)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	for range watchers {
		<-ready
	}
	added := etcdWatchers(b, p) - before

	lim := rate.NewLimiter(rate.Limit(qps), 1)
	b.ResetTimer()
	start := time.Now()
	var wwg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range b.N {
		if err := lim.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		sem <- struct{}{}
		wwg.Add(1)
		go func(i int) {
			defer func() { <-sem; wwg.Done() }()
			name := fmt.Sprintf("f%d", i)
			// Stamp just before the write: the ack time would be later than
			// a fast watcher's receipt.
			acked.Store(name, time.Now())
			if _, err := cs.CoreV1().Pods("default").Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
				b.Error(err)
			}
		}(i)
	}
	wwg.Wait()
	writeRate := float64(b.N) / time.Since(start).Seconds()
	time.Sleep(2 * time.Second) // let deliveries finish
	b.StopTimer()
	cancel()
	wg.Wait()
	b.ReportMetric(added, "etcd-watchers-added")
	b.ReportMetric(writeRate, "writes/s")
	b.ReportMetric(float64(len(lat))/float64(max(b.N, 1)), "deliveries/write")
	report(b, "ms-delivery", lat)
}
