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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// cluster brings up 3 etcd members and one apiserver as processes, secure
// (TLS, client certificates, Node,RBAC) as kstep up runs it. It returns the
// admin's client, and its rest.Config for raw requests.
func cluster(b *testing.B, apiserverArgs ...string) (*process.Provider, *kubernetes.Clientset, *rest.Config) {
	return clusterWith(b, func(*provider.Spec) {}, apiserverArgs...)
}

func clusterWith(b *testing.B, configure func(*provider.Spec), apiserverArgs ...string) (*process.Provider, *kubernetes.Clientset, *rest.Config) {
	b.Helper()
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		b.Skip("KSTEP_BIN is not set: run `make bench-api`")
	}
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary, cfg.StateDir, cfg.APIServers = bin, b.TempDir(), 1
	cfg.APIServerArgs = apiserverArgs
	configure(&cfg)
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
	rc, err := clientcmd.BuildConfigFromFlags("", p.Kubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	rc.QPS, rc.Burst = -1, -1
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	return p, cs, rc
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
// apiserver on a 3-member etcd, from 32 concurrent clients; without
// authentication (plain HTTP, every caller the admin, as before TLS), as the
// admin (TLS client certificate, system:masters), and as a token user whose
// RoleBinding RBAC evaluates on every request.
func BenchmarkPodCreate(b *testing.B) {
	b.Run("auth=none", func(b *testing.B) {
		p, cs, _ := clusterWith(b, func(c *provider.Spec) { c.Insecure = true })
		benchPodCreate(b, p, cs)
	})
	b.Run("auth=admin-cert", func(b *testing.B) {
		p, cs, _ := cluster(b)
		benchPodCreate(b, p, cs)
	})
	b.Run("auth=token-rbac", func(b *testing.B) {
		const token = "bench-creator-token"
		p, admin, rc := clusterWith(b, func(c *provider.Spec) { c.Tokens = []string{token + ",creator,1001"} })
		ctx := context.Background()
		rule := rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods"}}
		if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "creator"}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "creator"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "creator"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "creator"}}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		user := rest.AnonymousClientConfig(rc)
		user.BearerToken, user.QPS, user.Burst = token, -1, -1
		cs, err := kubernetes.NewForConfig(user)
		if err != nil {
			b.Fatal(err)
		}
		// The binding reaches the RBAC index through the watch cache.
		for i := 0; ; i++ {
			_, err := cs.CoreV1().Pods("default").Create(ctx, pod("warmup"), metav1.CreateOptions{})
			if err == nil {
				break
			}
			if i == 100 {
				b.Fatalf("the token user cannot create pods: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		benchPodCreate(b, p, cs)
	})
}

func benchPodCreate(b *testing.B, p *process.Provider, cs *kubernetes.Clientset) {
	ctx := context.Background()
	var n atomic.Int64
	var mu sync.Mutex
	var lat []float64
	cpu0, cpuOK := apiserverCPU(p)
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
	// The apiserver's CPU per create does not depend on what else the
	// machine runs, as the rate does.
	if cpu1, ok := apiserverCPU(p); ok && cpuOK && len(lat) > 0 {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(len(lat)), "apiserver-cpu-µs/create")
	}
}

// apiserverCPU is the user+system CPU time the (one) apiserver process has
// used, from /proc; false where there is no /proc.
func apiserverCPU(p *process.Provider) (time.Duration, bool) {
	for _, a := range p.Actors() {
		if a.Role != provider.RoleAPIServer || a.PID == 0 {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", a.PID))
		if err != nil {
			return 0, false
		}
		// Fields after the command (which may hold spaces): state is
		// field 3, utime 14, stime 15, in clock ticks of 1/100 s.
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(f) < 13 {
			return 0, false
		}
		var utime, stime int64
		fmt.Sscan(f[11], &utime)
		fmt.Sscan(f[12], &stime)
		return time.Duration(utime+stime) * 10 * time.Millisecond, true
	}
	return 0, false
}

// etcdWatchers sums etcd's own watcher gauge over every member.
func etcdWatchers(b *testing.B, p *process.Provider) float64 {
	total := 0.0
	for _, a := range p.Actors() {
		if a.Role != provider.RoleEtcd {
			continue
		}
		base := a.Endpoint
		if a.MetricsURL != "" {
			base = a.MetricsURL // a secure cluster's: its client URL takes only etcd's certificates
		}
		resp, err := http.Get(base + "/metrics")
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
	p, cs, rc := cluster(b, apiserverArgs...)
	api := rc.Host
	before := etcdWatchers(b, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var acked sync.Map // pod name → ack time
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	hc, err := rest.HTTPClientFor(rc) // the admin's certificate
	if err != nil {
		b.Fatal(err)
	}
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
