package kubelet

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// BenchmarkHollowNodeHeap measures the heap one idle hollow node costs
// (kubelet, informer and watch, lease and status loops, simruntime; the
// apiserver in this process holds its side of the watch too) and how many
// fit in 1 GiB; then what the CRI connection would add per node if it went
// through a loopback gRPC connection (bufconn) instead of cri.InProcess.
//
//	go test -run '^$' -bench HollowNodeHeap -benchtime 1x ./cluster/kubelet/
func BenchmarkHollowNodeHeap(b *testing.B) {
	const nodes = 200
	c := testenv.StartCluster(b)
	for i := 0; i < b.N; i++ {
		base := heapInuse()
		f := startFleet(b, c.API.Config, nodes, simruntime.Config{})
		time.Sleep(3 * time.Second) // leases, a relist or two, status
		per := float64(heapInuse()-base) / nodes
		f.stop()
		b.ReportMetric(per, "heap-B/node")
		b.ReportMetric(float64(1<<30)/per, "nodes/GiB")
	}
	b.ReportMetric(bufconnHeap(b, 100), "bufconn-extra-B/node")
}

// bufconnHeap is the heap per node of a gRPC server and client over
// bufconn, serving a simruntime: the alternative to cri.InProcess.
func bufconnHeap(b *testing.B, n int) float64 {
	base := heapInuse()
	var stops []func()
	for i := 0; i < n; i++ {
		sim, err := simruntime.New(fmt.Sprint(i), simruntime.NodeCIDR(i), simruntime.Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		lis := bufconn.Listen(256 << 10)
		srv := grpc.NewServer()
		runtimeapi.RegisterRuntimeServiceServer(srv, sim)
		runtimeapi.RegisterImageServiceServer(srv, sim)
		go func() { _ = srv.Serve(lis) }()
		conn, err := grpc.NewClient("passthrough:///bufnet",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		c := cri.New(runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn))
		if _, err := c.Version(context.Background()); err != nil {
			b.Fatal(err)
		}
		stops = append(stops, func() { conn.Close(); srv.Stop() })
	}
	per := float64(heapInuse()-base) / float64(n)
	for _, s := range stops {
		s()
	}
	return per
}

// BenchmarkPodsToReady measures pods per second from create to Ready on
// 20 hollow nodes with a zero-latency runtime: the kubelet and the control
// plane alone (the apiserver's create throughput bounds it).
//
//	go test -run '^$' -bench PodsToReady -benchtime 1000x ./cluster/kubelet/
func BenchmarkPodsToReady(b *testing.B) {
	const nodes = 20
	c := testenv.StartCluster(b)
	startFleet(b, c.API.Config, nodes, simruntime.Config{})
	ready := readyCounter(b, c.Client)
	b.ResetTimer()
	start := time.Now()
	createPods(b, c.Client, "bench", b.N, nodes)
	testenv.Eventually(b, 5*time.Minute, "pods Ready", func() (bool, error) { return ready.Load() >= int64(b.N), nil }, fastPoll)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pods/s")
}
