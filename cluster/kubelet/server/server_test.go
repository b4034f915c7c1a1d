package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kstep-dev/kstep/cluster/kubelet"
	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// env is a secure apiserver (Node,RBAC), hollow kubelets that reach it
// with their node certificates, and one kubelet server for all of them.
type env struct {
	pki    *testenv.PKI
	api    *testenv.APIServer
	admin  kubernetes.Interface
	nodes  *Nodes
	addr   string
	sars   atomic.Int64 // SubjectAccessReviews the kubelets created
	server *Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	url, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	api := testenv.StartAPIServer(t, url, p.Secure(t, nil))
	admin, err := kubernetes.NewForConfig(p.ClientConfig(t, api.Config, pki.AdminUser, pki.MastersGroup))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{pki: p, api: api, admin: admin, nodes: NewNodes()}
	dir := t.TempDir()
	serving, err := p.CA.ServingCert("kubelet", "n1", "n2")
	if err != nil {
		t.Fatal(err)
	}
	if err := serving.Write(filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{CertFile: filepath.Join(dir, "kubelet.crt"), KeyFile: filepath.Join(dir, "kubelet.key"),
		ClientCAFile: p.CAFile(), Nodes: e.nodes.Lookup})
	if err != nil {
		t.Fatal(err)
	}
	e.server = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// startNode runs a hollow kubelet for node with its own client
// certificate and adds it to the server.
func (e *env) startNode(t *testing.T, node string, mutate func(*kubelet.Config)) *kubelet.Kubelet {
	t.Helper()
	return e.startNodeWith(t, node, nil, mutate)
}

// startNodeWith is startNode with the sim's RuntimeService wrapped.
func (e *env) startNodeWith(t *testing.T, node string, wrap func(*simruntime.Runtime) runtimeapi.RuntimeServiceServer, mutate func(*kubelet.Config)) *kubelet.Kubelet {
	t.Helper()
	rc := e.pki.ClientConfig(t, e.api.Config, pki.NodeUser(node), pki.NodesGroup)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/subjectaccessreviews") {
				e.sars.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := simruntime.New(node, simruntime.NodeCIDRFor(node), simruntime.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := kubelet.Config{NodeName: node, Client: cs, RelistPeriod: 100 * time.Millisecond,
		BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second,
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}
	if mutate != nil {
		mutate(&cfg)
	}
	var k *kubelet.Kubelet
	if wrap == nil {
		k, err = kubelet.NewHollow(cfg, sim)
	} else {
		cfg.Hollow, cfg.Network, cfg.LogReader = true, sim, sim.OpenLog
		cfg.Runtime = cri.New(cri.InProcess(wrap(sim), sim))
		cfg.NodeIP, cfg.PodCIDR = sim.NodeIP().String(), sim.PodCIDR()
		k, err = kubelet.New(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := k.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("kubelet %s: %v", node, err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, 20*time.Second, node+" registered", func() (bool, error) { return k.Registered(), nil })
	e.nodes.Set(k)
	return k
}

// spdyUpgrade asks for the upgrade exec, attach and port-forward need.
var spdyUpgrade = []string{"Connection", "Upgrade", "Upgrade", "SPDY/3.1"}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// client is an HTTPS client of the kubelet server asking for node (SNI)
// as user in groups; no user: no client certificate.
func (e *env) client(t *testing.T, node, user string, groups ...string) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.pki.CA.CertPEM())
	cfg := &tls.Config{RootCAs: roots, ServerName: node}
	if user != "" {
		pair, err := e.pki.CA.ClientCert(user, groups...)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func (e *env) do(t *testing.T, c *http.Client, method, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "https://"+e.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

func (e *env) createPod(t *testing.T, name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "app", Image: "registry.kstep.local/app:v1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
		}}},
	}
	for _, m := range mutate {
		m(p)
	}
	out, err := e.admin.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) waitRunning(t *testing.T, name string, restarts int32) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "pod "+name+" running", func() (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// The kubelet's informer may start the pod before it reports
		// itself synced, when the server begins to answer for its pods.
		if k, ok := e.nodes.Lookup(p.Spec.NodeName); !ok || k.NodeName() != p.Spec.NodeName {
			return false, nil
		} else if _, ok := k.Pod(p.Namespace, p.Name); !ok {
			return false, nil
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running != nil && c.RestartCount >= restarts {
				return true, nil
			}
		}
		return false, nil
	})
}

// allowStats lets user get nodes/stats, and nothing else of the kubelet.
func (e *env) allowStats(t *testing.T, user string) {
	t.Helper()
	ctx := context.Background()
	_, err := e.admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "stats-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/stats"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "stats-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "stats-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func TestKubeletServer(t *testing.T) {
	e := newEnv(t)
	e.startNode(t, "n1", func(c *kubelet.Config) { c.ServerPort = 10311 })
	e.startNode(t, "n2", nil)
	for node, port := range map[string]int32{"n1": 10311, "n2": 10250} {
		n, err := e.admin.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil || n.Status.DaemonEndpoints.KubeletEndpoint.Port != port {
			t.Fatalf("%s publishes kubelet port %v (%v), want %d", node, n.Status.DaemonEndpoints, err, port)
		}
	}
	e.createPod(t, "p1", "n1")
	e.createPod(t, "p2", "n2")
	e.waitRunning(t, "p1", 0)
	e.waitRunning(t, "p2", 0)
	apiserver := func(node string) *http.Client { return e.client(t, node, pki.APIServerKubeletClientUser) }

	t.Run("no client certificate is 401", func(t *testing.T) {
		code, body := e.do(t, e.client(t, "n1", ""), "GET", "/healthz")
		if code != http.StatusUnauthorized {
			t.Fatalf("got %d %q", code, body)
		}
	})

	t.Run("a user the apiserver denies is 403", func(t *testing.T) {
		code, body := e.do(t, e.client(t, "n1", "alice", "devs"), "GET", "/pods")
		if code != http.StatusForbidden || !strings.Contains(body, "user=alice") || !strings.Contains(body, "subresource=proxy") {
			t.Fatalf("got %d %q", code, body)
		}
	})

	t.Run("subresources by path", func(t *testing.T) {
		e.allowStats(t, "bob")
		bob := e.client(t, "n1", "bob")
		// Ask the apiserver until the binding is in force, so the kubelet
		// does not cache a denial from before it (30 s).
		testenv.Eventually(t, 10*time.Second, "binding in force", func() (bool, error) {
			r, err := e.admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: "get", Resource: "nodes", Subresource: "stats", Name: "n1"}}}, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed, err
		})
		if code, body := e.do(t, bob, "GET", "/stats/summary"); code != http.StatusOK {
			t.Fatalf("bob's stats: %d %q", code, body)
		}
		if code, body := e.do(t, bob, "GET", "/containerLogs/default/p1/app"); code != http.StatusForbidden {
			t.Fatalf("bob read logs (nodes/proxy): %d %q", code, body)
		}
	})

	t.Run("answers are cached", func(t *testing.T) {
		c := apiserver("n1")
		e.do(t, c, "GET", "/healthz")
		before := e.sars.Load()
		for i := 0; i < 5; i++ {
			if code, body := e.do(t, c, "GET", "/healthz"); code != http.StatusOK || body != "ok" {
				t.Fatalf("healthz: %d %q", code, body)
			}
		}
		if n := e.sars.Load() - before; n != 0 {
			t.Fatalf("%d SubjectAccessReviews for 5 requests already answered", n)
		}
		e.do(t, c, "POST", "/healthz") // another verb: asked again (and 405)
		if n := e.sars.Load() - before; n != 1 {
			t.Fatalf("%d SubjectAccessReviews for a new verb, want 1", n)
		}
	})

	t.Run("routing by server name", func(t *testing.T) {
		for node, pod := range map[string]string{"n1": "p1", "n2": "p2"} {
			code, body := e.do(t, apiserver(node), "GET", "/pods")
			if code != http.StatusOK {
				t.Fatalf("%s /pods: %d %q", node, code, body)
			}
			var list corev1.PodList
			if err := json.Unmarshal([]byte(body), &list); err != nil {
				t.Fatal(err)
			}
			if list.Kind != "PodList" || len(list.Items) != 1 || list.Items[0].Name != pod {
				t.Fatalf("%s /pods: %+v", node, list.Items)
			}
			if code, body := e.do(t, apiserver(node), "GET", "/containerLogs/default/"+pod+"/app"); code != http.StatusOK ||
				!strings.Contains(body, "started on hollow node "+node) {
				t.Fatalf("%s logs of %s: %d %q", node, pod, code, body)
			}
		}
		// p2 is not n1's.
		if code, body := e.do(t, apiserver("n1"), "GET", "/containerLogs/default/p2/app"); code != http.StatusNotFound {
			t.Fatalf("n1 served n2's pod: %d %q", code, body)
		}
		// A name the serving certificate holds (so the handshake passes) but no node has.
		code, body := e.do(t, e.client(t, "localhost", pki.APIServerKubeletClientUser), "GET", "/healthz")
		if code != http.StatusNotFound || !strings.Contains(body, `"localhost"`) {
			t.Fatalf("unknown node: %d %q", code, body)
		}
	})

	t.Run("hollow logs", func(t *testing.T) {
		code, body := e.do(t, apiserver("n1"), "GET", "/containerLogs/default/p1/app?timestamps=true")
		if code != http.StatusOK {
			t.Fatalf("%d %q", code, body)
		}
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if len(lines) < 3 || !strings.Contains(body, "image registry.kstep.local/app:v1") || !strings.Contains(body, "listening on :8080") {
			t.Fatalf("simulated log: %q", body)
		}
		for _, l := range lines {
			ts, _, _ := strings.Cut(l, " ")
			at, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil || time.Since(at) > time.Minute || time.Until(at) > time.Second {
				t.Fatalf("line %q: timestamp %v, %v", l, at, err)
			}
		}
		if code, body := e.do(t, apiserver("n1"), "GET", "/containerLogs/default/p1/app?tailLines=1"); code != http.StatusOK || body != "listening on :8080\n" {
			t.Fatalf("tail: %d %q", code, body)
		}
		if code, body := e.do(t, apiserver("n1"), "GET", "/containerLogs/default/p1/app?previous=true"); code != http.StatusBadRequest ||
			!strings.Contains(body, "previous terminated container") {
			t.Fatalf("previous of a first container: %d %q", code, body)
		}
	})

	t.Run("follow streams until the caller leaves", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+e.addr+"/containerLogs/default/p1/app?follow=true", nil)
		resp, err := apiserver("n1").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Flushed as read: the log arrives while the stream stays open.
		br := make([]byte, 4096)
		n, err := resp.Body.Read(br)
		if err != nil || !strings.Contains(string(br[:n]), "started on hollow node n1") {
			t.Fatalf("first read %q, %v", br[:n], err)
		}
		got := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(resp.Body)
			got <- string(b)
		}()
		select {
		case b := <-got:
			t.Fatalf("follow ended by itself: %q", b)
		case <-time.After(300 * time.Millisecond):
		}
		cancel()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the stream did not end with the caller")
		}
	})

	t.Run("stats summary", func(t *testing.T) {
		code, body := e.do(t, apiserver("n1"), "GET", "/stats/summary")
		if code != http.StatusOK {
			t.Fatalf("%d %q", code, body)
		}
		var s statsapi.Summary
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatal(err)
		}
		if s.Node.NodeName != "n1" || len(s.Pods) != 1 {
			t.Fatalf("summary: %s", body)
		}
		p := s.Pods[0]
		if p.PodRef.Name != "p1" || p.PodRef.Namespace != "default" || p.PodRef.UID == "" || len(p.Containers) != 1 || p.Containers[0].Name != "app" {
			t.Fatalf("pod stats: %s", body)
		}
		c := p.Containers[0]
		// 200m requested: 30–70 % of it.
		if c.CPU == nil || c.CPU.UsageNanoCores == nil || *c.CPU.UsageNanoCores < 60e6 || *c.CPU.UsageNanoCores > 140e6 {
			t.Fatalf("container cpu: %s", body)
		}
		// 40 % of the 128Mi limit, ramping up from 60 % of that.
		if c.Memory == nil || c.Memory.WorkingSetBytes == nil || *c.Memory.WorkingSetBytes < 30<<20 || *c.Memory.WorkingSetBytes > 52<<20 {
			t.Fatalf("container memory: %s", body)
		}
		if *s.Node.CPU.UsageNanoCores != *p.CPU.UsageNanoCores || *s.Node.Memory.WorkingSetBytes != *p.Memory.WorkingSetBytes {
			t.Fatalf("a hollow node is the sum of its pods: %s", body)
		}
		first := *c.CPU.UsageCoreNanoSeconds
		time.Sleep(50 * time.Millisecond)
		_, body = e.do(t, apiserver("n1"), "GET", "/stats/summary")
		var s2 statsapi.Summary
		if err := json.Unmarshal([]byte(body), &s2); err != nil {
			t.Fatal(err)
		}
		if got := *s2.Pods[0].Containers[0].CPU.UsageCoreNanoSeconds; got <= first {
			t.Fatalf("cumulative cpu did not grow: %d then %d", first, got)
		}
	})

	t.Run("streams on a hollow node", func(t *testing.T) {
		for _, path := range []string{
			"/exec/default/p1/app?command=date&stdout=1",
			"/attach/default/p1/app?stdout=true",
			"/portForward/default/p1?port=8080",
		} {
			code, body := e.do(t, apiserver("n1"), "POST", path, spdyUpgrade...)
			if code != http.StatusNotImplemented || !strings.Contains(body, "hollow node: containers run no processes") {
				t.Fatalf("%s: %d %q", path, code, body)
			}
		}
	})

	t.Run("bad input is a bounded 400, unknown objects 404", func(t *testing.T) {
		long := strings.Repeat("x", 10000)
		for path, want := range map[string]int{
			"/containerLogs/default/p1/app?tailLines=" + long:    http.StatusBadRequest,
			"/containerLogs/default/p1/app?sinceSeconds=-5":      http.StatusBadRequest,
			"/exec/default/p1/app?stdout=1":                      http.StatusBadRequest, // no command
			"/exec/default/p1/app?command=ls":                    http.StatusBadRequest, // no stream
			"/portForward/default/p1?port=0":                     http.StatusBadRequest,
			"/portForward/default/p1?port=" + long:               http.StatusBadRequest,
			"/containerLogs/default/nope/app":                    http.StatusNotFound,
			"/containerLogs/default/p1/" + long:                  http.StatusNotFound,
			"/exec/default/p1/wrong-uid/app?command=ls&stdout=1": http.StatusNotFound,
			"/containerLogs/default/p1":                          http.StatusNotFound,
			"/no/such/path":                                      http.StatusNotFound,
		} {
			method := "GET"
			if !strings.HasPrefix(path, "/containerLogs") && !strings.HasPrefix(path, "/no") {
				method = "POST"
			}
			code, body := e.do(t, apiserver("n1"), method, path, spdyUpgrade...)
			if code != want || len(body) > 600 {
				t.Errorf("%s %.80s: %d (%d bytes) %.200q, want %d", method, path, code, len(body), body, want)
			}
		}
	})
}

// TestContainerLogsFromFiles reads real CRI log files where the kubelet's
// runtime says they are: the current and the previous container's.
func TestContainerLogsFromFiles(t *testing.T) {
	e := newEnv(t)
	logs := t.TempDir()
	e.startNode(t, "n1", func(c *kubelet.Config) {
		c.PodLogsDir = logs
		c.LogReader = func(path string) (io.ReadCloser, error) { return os.Open(path) }
	})
	pod := e.createPod(t, "restarts", "n1", func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "300ms"}}
	})
	e.waitRunning(t, "restarts", 1)
	dir := filepath.Join(logs, "default_restarts_"+string(pod.UID), "app")
	write := func(attempt int, lines ...string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.log", attempt)), []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(t, "n1", pki.APIServerKubeletClientUser)
	// The container restarts every 300 ms: find the attempts the runtime
	// reports now and write both files before asking.
	testenv.Eventually(t, 20*time.Second, "current and previous logs", func() (bool, error) {
		for a := 0; a < 40; a++ {
			write(a, criLine(a, "stdout", "F", fmt.Sprintf("attempt %d", a)), criLine(a, "stderr", "F", fmt.Sprintf("attempt %d again", a)))
		}
		code, cur := e.do(t, c, "GET", "/containerLogs/default/restarts/app?tailLines=1")
		if code != http.StatusOK {
			return false, fmt.Errorf("current: %d %q", code, cur)
		}
		code, prev := e.do(t, c, "GET", "/containerLogs/default/restarts/app?previous=true")
		if code != http.StatusOK {
			return false, fmt.Errorf("previous: %d %q", code, prev)
		}
		var n, m int
		if _, err := fmt.Sscanf(cur, "attempt %d again\n", &n); err != nil {
			return false, fmt.Errorf("current %q: %v", cur, err)
		}
		if _, err := fmt.Sscanf(prev, "attempt %d\nattempt %d again\n", &m, &m); err != nil {
			return false, fmt.Errorf("previous %q: %v", prev, err)
		}
		// Restarts may race the two requests; the previous is older.
		return m < n, fmt.Errorf("previous attempt %d, current %d", m, n)
	})
}

func newTestKubelet(t *testing.T, node string) *kubelet.Kubelet {
	t.Helper()
	sim, err := simruntime.New(node, simruntime.NodeCIDRFor(node), simruntime.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kubelet.NewHollow(kubelet.Config{NodeName: node, Client: fakeClient()}, sim)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func fakeClient() kubernetes.Interface { return fake.NewClientset() }
