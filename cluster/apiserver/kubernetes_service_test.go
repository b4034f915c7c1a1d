package apiserver_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// apiserverEndpoints is what default/kubernetes's Endpoints and
// EndpointSlices list, as sorted "ip:port" strings each.
func apiserverEndpoints(ctx context.Context, cs kubernetes.Interface) (fromEndpoints, fromSlices []string, err error) {
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	for _, sub := range ep.Subsets {
		for _, a := range sub.Addresses {
			for _, p := range sub.Ports {
				fromEndpoints = append(fromEndpoints, fmt.Sprintf("%s:%d", a.IP, p.Port))
			}
		}
	}
	list, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return nil, nil, err
	}
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			for _, p := range sl.Ports {
				fromSlices = append(fromSlices, fmt.Sprintf("%s:%d", e.Addresses[0], *p.Port))
			}
		}
	}
	slices.Sort(fromEndpoints)
	slices.Sort(fromSlices)
	return fromEndpoints, fromSlices, nil
}

func hostPort(t *testing.T, a *testenv.APIServer) string {
	t.Helper()
	u, err := url.Parse(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// waitEndpoints waits until both objects list exactly want and returns how
// long that took.
func waitEndpoints(t *testing.T, cs kubernetes.Interface, timeout time.Duration, want ...string) time.Duration {
	t.Helper()
	slices.Sort(want)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var eps, sls []string
	var err error
	for ctx.Err() == nil {
		eps, sls, err = apiserverEndpoints(ctx, cs)
		if err == nil && slices.Equal(eps, want) && slices.Equal(sls, want) {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("after %v: endpoints %v, slices %v (err %v); want %v", timeout, eps, sls, err, want)
	return 0
}

// Every apiserver is in default/kubernetes's Endpoints and EndpointSlices
// while it lives: one that stops leaves at once (its lease is revoked), one
// that dies leaves when its lease expires, one that returns is back. The
// Service has the first address of the service range, 443 → the port.
func TestKubernetesServiceEndpoints(t *testing.T) {
	etcdURL, etcdCli := testenv.Etcd(t)
	start := func(name string) *testenv.APIServer {
		return testenv.StartAPIServer(t, etcdURL, func(o *apiserver.Options) { o.Name, o.EndpointLeaseTTL = name, 3*time.Second })
	}
	a0, a1 := start("apiserver-0"), start("apiserver-1")
	cs := kubernetes.NewForConfigOrDie(a0.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	took := waitEndpoints(t, cs, 20*time.Second, hostPort(t, a0), hostPort(t, a1))
	t.Logf("both apiservers listed %v after the second was ready", took)
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Selector != nil {
		t.Fatalf("service: %+v", svc.Spec)
	}
	// The address is kept: nobody else gets it.
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taker"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1",
		Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := cs.CoreV1().Services("default").Create(ctx, other, metav1.CreateOptions{}); err == nil {
		t.Fatal("a second service got 10.96.0.1")
	}
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ep.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" {
		t.Fatalf("endpoints labels %v: the mirroring controller would copy them", ep.Labels)
	}

	// A stopped apiserver revokes its lease.
	a1.Stop()
	took = waitEndpoints(t, cs, 5*time.Second, hostPort(t, a0))
	t.Logf("a stopped apiserver left the endpoints after %v", took)

	// A dead one's lease expires: an apiserver that wrote its key and died
	// without a word (a lease nobody keeps alive).
	g, err := etcdCli.Grant(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcdCli.Put(ctx, "/registry/masterleases/127.0.0.1:1", `{"name":"ghost","ip":"127.0.0.1","port":1}`, clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	waitEndpoints(t, cs, 5*time.Second, hostPort(t, a0), "127.0.0.1:1")
	took = waitEndpoints(t, cs, 15*time.Second, hostPort(t, a0))
	t.Logf("a dead apiserver left the endpoints %v after it was listed (lease TTL 3s)", took)

	// A returning one is back, and a hand edit is undone.
	a2 := start("apiserver-1")
	waitEndpoints(t, cs, 10*time.Second, hostPort(t, a0), hostPort(t, a2))
	ep, err = cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Subsets = nil
	edited, err := cs.CoreV1().Endpoints("default").Update(ctx, ep, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit := time.Now()
	for {
		cur, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cur.ResourceVersion != edited.ResourceVersion && len(cur.Subsets) > 0 {
			break
		}
		if time.Since(edit) > 15*time.Second {
			t.Fatalf("the hand edit stands after 15s: %+v", cur.Subsets)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took = waitEndpoints(t, cs, 10*time.Second, hostPort(t, a0), hostPort(t, a2))
	t.Logf("a hand edit was undone after %v (resync every lease TTL, 3s)", took+time.Since(edit))
}
