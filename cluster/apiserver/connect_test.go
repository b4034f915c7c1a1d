package apiserver_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"
)

// kubeletEnv is a secure apiserver with a kubelet client, and fake
// kubelets: TLS servers with a certificate for their node's name from the
// cluster's CA that require the apiserver's client certificate.
type kubeletEnv struct {
	*secureEnv
}

func newKubeletEnv(t *testing.T) *kubeletEnv {
	t.Helper()
	url, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	client, err := p.CA.ClientCert(pki.APIServerKubeletClientUser)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(p.Dir, "kubelet-client.crt"), filepath.Join(p.Dir, "kubelet-client.key")
	if err := client.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	secure := p.Secure(t, testTokens)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) {
		secure(o)
		o.KubeletClientCertFile, o.KubeletClientKeyFile, o.KubeletCAFile = certFile, keyFile, p.CAFile()
	})
	e := &kubeletEnv{secureEnv: &secureEnv{t: t, pki: p, api: api}}
	e.admin = e.certClient(pki.AdminUser, pki.MastersGroup)
	return e
}

// kubeletRequest is what a fake kubelet saw.
type kubeletRequest struct {
	Method, Path, Query, User, ServerName, Authorization string
}

type fakeKubelet struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []kubeletRequest
}

func (k *fakeKubelet) last(t *testing.T) kubeletRequest {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) == 0 {
		t.Fatal("the kubelet saw no request")
	}
	return k.seen[len(k.seen)-1]
}

// startKubelet serves h for node, registered with its address and port.
func (e *kubeletEnv) startKubelet(node string, h http.HandlerFunc) *fakeKubelet {
	t := e.t
	t.Helper()
	serving, err := e.pki.CA.ServingCert(node, node)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.CA.CertPEM())
	k := &fakeKubelet{}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.seen = append(k.seen, kubeletRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			User: r.TLS.PeerCertificates[0].Subject.CommonName, ServerName: r.TLS.ServerName, Authorization: r.Header.Get("Authorization")})
		k.mu.Unlock()
		h(w, r)
	}))
	k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	_, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	e.registerNode(node, int32(n))
	return k
}

func (e *kubeletEnv) registerNode(name string, port int32) {
	t := e.t
	t.Helper()
	ctx := ctxT(t)
	node, err := e.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "a"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "not-an-address.invalid"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	if _, err := e.admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// boundPod creates a pod bound to node with the given containers.
func (e *kubeletEnv) boundPod(ns, name, node string, containers ...string) *corev1.Pod {
	t := e.t
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}}, Spec: corev1.PodSpec{NodeName: node}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "registry.kstep.local/app:v1"})
	}
	out, err := e.admin.CoreV1().Pods(ns).Create(ctxT(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// send sends a request with c's credentials and returns the code and body.
func send(t *testing.T, c *rest.Config, method, path string, header http.Header) (int, string) {
	t.Helper()
	if header.Get("Upgrade") != "" {
		// Upgrades are HTTP/1.1's, as kubectl sends them.
		c = rest.CopyConfig(c)
		c.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, c.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestPodLogProxiedToKubelet(t *testing.T) {
	e := newKubeletEnv(t)
	k := e.startKubelet("node-a", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/containerLogs/default/gone/") {
			http.Error(w, `container "app" in pod "gone" is waiting to start: ContainerCreating`, http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "log of %s\n", r.URL.Path)
	})
	e.boundPod("default", "web", "node-a", "app")
	e.boundPod("default", "two", "node-a", "app", "sidecar")
	e.boundPod("default", "gone", "node-a", "app")
	ctx := ctxT(t)

	var body []byte
	testenv.Eventually(t, 10*time.Second, "pods/log through the kubelet", func() error {
		var err error
		body, err = e.admin.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{TailLines: ptr.To[int64](5), Timestamps: true, SinceSeconds: ptr.To[int64](30), LimitBytes: ptr.To[int64](1000)}).DoRaw(ctx)
		return err
	})
	if string(body) != "log of /containerLogs/default/web/app\n" {
		t.Fatalf("log body %q", body)
	}
	got := k.last(t)
	q, _ := url.ParseQuery(got.Query)
	if q.Get("tailLines") != "5" || q.Get("timestamps") != "true" || q.Get("sinceSeconds") != "30" || q.Get("limitBytes") != "1000" || q.Has("follow") {
		t.Errorf("kubelet query %q, want tailLines=5 timestamps=true sinceSeconds=30 limitBytes=1000", got.Query)
	}
	if got.User != pki.APIServerKubeletClientUser || got.ServerName != "node-a" {
		t.Errorf("kubelet saw user %q with server name %q, want %q for node-a", got.User, got.ServerName, pki.APIServerKubeletClientUser)
	}
	// limitBytes is held by the apiserver too.
	body, err := e.admin.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{LimitBytes: ptr.To[int64](3)}).DoRaw(ctx)
	if err != nil || string(body) != "log" {
		t.Errorf("limitBytes=3: %q %v", body, err)
	}

	admin := e.certClientConfig(pki.AdminUser, pki.MastersGroup)
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"tailLines=abc", 400, "tailLines"},
		{"tailLines=-1", 422, "tailLines: Invalid value: -1"},
		{"limitBytes=0", 422, "limitBytes"},
		{"sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z", 422, "at most one of"},
		{"follow=maybe", 400, "follow"},
		{"container=nope", 400, "container nope is not valid for pod web"},
	} {
		code, body := send(t, admin, "GET", "/api/v1/namespaces/default/pods/web/log?"+c.query, nil)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("log ?%s: %d %s, want %d naming %q", c.query, code, body, c.code, c.want)
		}
	}
	code, out := send(t, admin, "GET", "/api/v1/namespaces/default/pods/two/log", nil)
	if code != 400 || !strings.Contains(out, "a container name must be specified for pod two, choose one of: [app sidecar]") {
		t.Errorf("log of a two-container pod without container: %d %s", code, out)
	}
	body, err = e.admin.CoreV1().Pods("default").GetLogs("two", &corev1.PodLogOptions{Container: "sidecar"}).DoRaw(ctx)
	if err != nil || string(body) != "log of /containerLogs/default/two/sidecar\n" {
		t.Errorf("log of the sidecar: %q %v", body, err)
	}
	// The kubelet's refusal reaches the client with its code and words.
	code, out = send(t, admin, "GET", "/api/v1/namespaces/default/pods/gone/log", nil)
	if code != 400 || !strings.Contains(out, "is waiting to start: ContainerCreating") {
		t.Errorf("kubelet's 400: %d %s", code, out)
	}

	// Unbound, or bound to a node that does not exist.
	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, testPod("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out = send(t, admin, "GET", "/api/v1/namespaces/default/pods/pending/log", nil)
	if code != 400 || !strings.Contains(out, "pod pending does not have a host assigned") {
		t.Errorf("log of an unbound pod: %d %s", code, out)
	}
	e.boundPod("default", "orphan", "no-such-node", "app")
	code, out = send(t, admin, "GET", "/api/v1/namespaces/default/pods/orphan/log", nil)
	if code != 404 || !strings.Contains(out, `nodes \"no-such-node\" not found`) {
		t.Errorf("log of a pod on a missing node: %d %s", code, out)
	}
	code, out = send(t, admin, "GET", "/api/v1/namespaces/default/pods/absent/log", nil)
	if code != 404 {
		t.Errorf("log of a missing pod: %d %s", code, out)
	}
}

func TestNodeProxy(t *testing.T) {
	e := newKubeletEnv(t)
	k := e.startKubelet("node-p", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			// Switch, say what was asked, close.
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n%s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
			conn.Close()
			return
		}
		fmt.Fprintf(w, "%s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
	})
	ctx := ctxT(t)
	admin := e.certClientConfig(pki.AdminUser, pki.MastersGroup)
	var code int
	var body string
	testenv.Eventually(t, 10*time.Second, "nodes/proxy", func() error {
		if code, body = send(t, admin, "GET", "/api/v1/nodes/node-p/proxy/stats/summary?only_cpu_and_memory=true", nil); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	if body != "GET /stats/summary?only_cpu_and_memory=true" {
		t.Errorf("nodes/proxy body %q", body)
	}
	if code, body = send(t, admin, "POST", "/api/v1/nodes/node-p/proxy/run/x/", nil); code != 200 || body != "POST /run/x/?" {
		t.Errorf("POST nodes/proxy: %d %q", code, body)
	}
	if code, body = send(t, admin, "GET", "/api/v1/nodes/missing/proxy/healthz", nil); code != 404 {
		t.Errorf("nodes/proxy of a missing node: %d %s", code, body)
	}

	// RBAC by method verb; the user's token never reaches the kubelet.
	alice := e.pki.TokenConfig(e.api.Config, "alice-token")
	if code, body = send(t, alice, "GET", "/api/v1/nodes/node-p/proxy/healthz", nil); code != 403 {
		t.Errorf("alice without nodes/proxy: %d %s", code, body)
	}
	grant(t, e.secureEnv, "alice", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/proxy"}})
	testenv.Eventually(t, 10*time.Second, "alice's nodes/proxy", func() error {
		if code, body = send(t, alice, "GET", "/api/v1/nodes/node-p/proxy/healthz", nil); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	if got := k.last(t); got.Authorization != "" || got.User != pki.APIServerKubeletClientUser {
		t.Errorf("kubelet saw Authorization %q, user %q", got.Authorization, got.User)
	}
	if code, body = send(t, alice, "DELETE", "/api/v1/nodes/node-p/proxy/healthz", nil); code != 403 {
		t.Errorf("alice's DELETE with get only: %d %s", code, body)
	}
	// An upgrade keeps its query string (exec's command); an upgrade or
	// the kubelet's exec, attach, portForward and run need create: get
	// alone is refused.
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}
	if code, body = send(t, admin, "GET", "/api/v1/nodes/node-p/proxy/exec/default/p/app?command=ls&stdout=true", upgrade); code != 101 || body != "GET /exec/default/p/app?command=ls&stdout=true" {
		t.Errorf("upgrade through nodes/proxy: %d %q", code, body)
	}
	for _, c := range []struct {
		path   string
		header http.Header
	}{
		{"/api/v1/nodes/node-p/proxy/exec/default/p/app?command=ls", upgrade},
		{"/api/v1/nodes/node-p/proxy/attach/default/p/app", upgrade},
		{"/api/v1/nodes/node-p/proxy/portForward/default/p?port=80", upgrade},
		{"/api/v1/nodes/node-p/proxy/healthz", upgrade},
		{"/api/v1/nodes/node-p/proxy/exec/default/p/app?command=ls", nil},
		{"/api/v1/nodes/node-p/proxy/run/default/p/app?cmd=ls", nil},
	} {
		if code, body = send(t, alice, "GET", c.path, c.header); code != 403 {
			t.Errorf("alice with get nodes/proxy only, GET %s (upgrade %v): %d %s", c.path, c.header != nil, code, body)
		}
	}
	grant(t, e.secureEnv, "alice", rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"nodes/proxy"}})
	testenv.Eventually(t, 10*time.Second, "alice's create nodes/proxy", func() error {
		if code, body = send(t, alice, "GET", "/api/v1/nodes/node-p/proxy/exec/default/p/app?command=ls", upgrade); code != 101 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	_ = ctx
}

// grant gives user a ClusterRole of rules.
func grant(t *testing.T, e *secureEnv, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := ctxT(t)
	name := "grant-" + user + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := e.admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := e.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serveFakeExec is a kubelet's exec over SPDY (remotecommand v4): it
// writes the request's path to stdout, what stdin brought to stderr, and
// succeeds.
func serveFakeExec(w http.ResponseWriter, r *http.Request) {
	if _, err := httpstream.Handshake(r, w, []string{"v4.channel.k8s.io"}); err != nil {
		return
	}
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	q := r.URL.Query()
	want := 3 // error, stdout, stderr
	if q.Get("stdin") == "true" {
		want++
	}
	got := map[string]httpstream.Stream{}
	for len(got) < want {
		select {
		case s := <-streams:
			got[s.Headers().Get(corev1.StreamType)] = s
		case <-time.After(5 * time.Second):
			return
		}
	}
	fmt.Fprintf(got[corev1.StreamTypeStdout], "exec %s %s", r.URL.Path, strings.Join(q["command"], " "))
	if in := got[corev1.StreamTypeStdin]; in != nil {
		b, _ := io.ReadAll(in)
		_, _ = got[corev1.StreamTypeStderr].Write(b)
	}
	for _, s := range got {
		_ = s.Close()
	}
	select {
	case <-conn.CloseChan():
	case <-time.After(5 * time.Second):
	}
}

func execURL(cs *kubernetes.Clientset, ns, pod string, stdin bool) *url.URL {
	return cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "app", Command: []string{"kstep-app", "version"}, Stdin: stdin, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
}

func TestExecThroughKubelet(t *testing.T) {
	e := newKubeletEnv(t)
	k := e.startKubelet("node-x", serveFakeExec)
	e.boundPod("default", "web", "node-x", "app")
	ctx := ctxT(t)
	admin := e.certClientConfig(pki.AdminUser, pki.MastersGroup)
	u := execURL(e.admin, "default", "web", true)
	want := "exec /exec/default/web/app kstep-app version"

	// SPDY, as kubectl before 1.30 and its fallback.
	exec, err := remotecommand.NewSPDYExecutor(admin, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	testenv.Eventually(t, 10*time.Second, "exec over SPDY", func() error {
		stdout.Reset()
		stderr.Reset()
		return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("typed in"), Stdout: &stdout, Stderr: &stderr})
	})
	if stdout.String() != want || stderr.String() != "typed in" {
		t.Errorf("SPDY exec: stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if got := k.last(t); got.User != pki.APIServerKubeletClientUser || got.ServerName != "node-x" {
		t.Errorf("kubelet saw %+v", got)
	}

	// WebSocket v5, as kubectl negotiates today: translated to SPDY
	// toward the kubelet.
	ws, err := remotecommand.NewWebSocketExecutor(admin, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if err := ws.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("over websocket"), Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("WebSocket exec: %v", err)
	}
	if stdout.String() != want || stderr.String() != "over websocket" {
		t.Errorf("WebSocket exec: stdout %q stderr %q", stdout.String(), stderr.String())
	}

	// Not an upgrade: upstream's 400.
	code, body := send(t, admin, "POST", u.RequestURI(), nil)
	if code != 400 || !strings.Contains(body, "Upgrade request required") {
		t.Errorf("exec without an upgrade: %d %s", code, body)
	}
	code, body = send(t, admin, "POST", "/api/v1/namespaces/default/pods/web/exec?stdout=true", nil)
	if code != 400 || !strings.Contains(body, "at least one command") {
		t.Errorf("exec without a command: %d %s", code, body)
	}
}

func TestConnectRBAC(t *testing.T) {
	e := newKubeletEnv(t)
	e.startKubelet("node-r", serveFakeExec)
	e.boundPod("default", "web", "node-r", "app")
	bob := e.pki.TokenConfig(e.api.Config, "bob-token")
	grant(t, e.secureEnv, "bob", rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	testenv.Eventually(t, 10*time.Second, "bob's get pods", func() error {
		if code, body := send(t, bob, "GET", "/api/v1/namespaces/default/pods/web", nil); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}, "X-Stream-Protocol-Version": {"v4.channel.k8s.io"}}
	wsUpgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}, "Sec-Websocket-Protocol": {"v5.channel.k8s.io"}}
	exec := "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=true"
	forbidden := func(what, method, path string, h http.Header, verb string) {
		t.Helper()
		code, body := send(t, bob, method, path, h)
		if code != 403 || !strings.Contains(body, verb) {
			t.Errorf("%s: %d %s, want 403 naming %q", what, code, body, verb)
		}
	}
	forbidden("exec POST without pods/exec", "POST", exec, upgrade, "create pods/exec")
	forbidden("exec GET upgrade without pods/exec", "GET", exec, wsUpgrade, "get pods/exec")
	forbidden("attach POST", "POST", "/api/v1/namespaces/default/pods/web/attach?stdout=true", upgrade, "create pods/attach")
	forbidden("portforward POST", "POST", "/api/v1/namespaces/default/pods/web/portforward?ports=80", upgrade, "create pods/portforward")
	forbidden("log without pods/log", "GET", "/api/v1/namespaces/default/pods/web/log", nil, "get pods/log")

	// get on pods/exec is not enough for a GET upgrade: it needs create.
	grant(t, e.secureEnv, "bob", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/log"}})
	testenv.Eventually(t, 10*time.Second, "bob's pods/log", func() error {
		if code, body := send(t, bob, "GET", "/api/v1/namespaces/default/pods/web/log", nil); code == 403 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	forbidden("exec GET upgrade with get pods/exec only", "GET", exec, wsUpgrade, "create pods/exec")

	grant(t, e.secureEnv, "bob", rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods/exec"}})
	bobCS := e.tokenClient("bob-token")
	ex, err := remotecommand.NewWebSocketExecutor(bob, "GET", execURL(bobCS, "default", "web", false).String())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "bob's exec with get and create", func() error {
		var out bytes.Buffer
		if err := ex.StreamWithContext(ctxT(t), remotecommand.StreamOptions{Stdout: &out, Stderr: io.Discard}); err != nil {
			return err
		}
		if !strings.HasPrefix(out.String(), "exec /exec/default/web/app") {
			return fmt.Errorf("stdout %q", out.String())
		}
		return nil
	})
}

func TestConnectWithoutKubeletClient(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	if _, err := e.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := testPod("web")
	p.Spec.NodeName = "n"
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/default/pods/web/log"},
		{"POST", "/api/v1/namespaces/default/pods/web/exec?command=ls"},
		{"GET", "/api/v1/namespaces/default/pods/web/attach?stdout=true"},
		{"POST", "/api/v1/namespaces/default/pods/web/portforward?ports=80"},
		{"GET", "/api/v1/nodes/n/proxy/healthz"},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes"},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"},
	} {
		code, body := send(t, e.api.Config, c.method, c.path, nil)
		if code != 503 || !strings.Contains(body, "the apiserver has no kubelet client: start it with --kubelet-client-certificate") {
			t.Errorf("%s %s without a kubelet client: %d %s", c.method, c.path, code, body)
		}
	}
}

func TestConnectDiscovery(t *testing.T) {
	e := newEnv(t)
	core, err := e.cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string]string{}
	for _, r := range core.APIResources {
		verbs[r.Name] = strings.Join(r.Verbs, ",")
	}
	for name, want := range map[string]string{"pods/log": "get", "pods/exec": "create,get", "pods/attach": "create,get",
		"pods/portforward": "create,get", "nodes/proxy": "create,delete,get,patch,update"} {
		if verbs[name] != want {
			t.Errorf("discovery %s: verbs %q, want %q", name, verbs[name], want)
		}
	}
	groups, err := e.cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range groups.Groups {
		found = found || (g.Name == "metrics.k8s.io" && g.PreferredVersion.Version == "v1beta1")
	}
	if !found {
		t.Errorf("metrics.k8s.io/v1beta1 not in /apis")
	}
	m, err := e.cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.APIResources) != 2 || m.APIResources[0].Name != "nodes" || m.APIResources[1].Name != "pods" || !m.APIResources[1].Namespaced {
		t.Errorf("metrics.k8s.io resources %+v", m.APIResources)
	}
}

func TestSubjectAccessReview(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	sar := func(cs *kubernetes.Clientset, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReview, error) {
		return cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	}
	podsGet := &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "default", Name: "web"}
	r, err := sar(e.admin, authorizationv1.SubjectAccessReviewSpec{User: "carol", Groups: []string{"system:authenticated"}, ResourceAttributes: podsGet})
	if err != nil || r.Status.Allowed || r.Status.Reason == "" {
		t.Fatalf("carol before her role: %+v %v", r, err)
	}
	grant(t, e, "carol", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	testenv.Eventually(t, 10*time.Second, "carol allowed", func() error {
		r, err := sar(e.admin, authorizationv1.SubjectAccessReviewSpec{User: "carol", ResourceAttributes: podsGet})
		if err != nil {
			return err
		}
		if !r.Status.Allowed {
			return fmt.Errorf("denied: %s", r.Status.Reason)
		}
		return nil
	})
	// The spec's groups count, not the asker's.
	r, err = sar(e.admin, authorizationv1.SubjectAccessReviewSpec{User: "dave", Groups: []string{pki.MastersGroup}, ResourceAttributes: podsGet})
	if err != nil || !r.Status.Allowed {
		t.Errorf("a member of system:masters: %+v %v", r.Status, err)
	}
	r, err = sar(e.admin, authorizationv1.SubjectAccessReviewSpec{User: "dave", Groups: []string{"system:authenticated"},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/api"}})
	if err != nil || !r.Status.Allowed {
		t.Errorf("discovery for an authenticated user: %+v %v", r.Status, err)
	}

	// A kubelet asks about the apiserver's kubelet client, as the
	// kubelet's server authorizes it; and about a user without access.
	node := e.certClient(pki.NodeUser("node-1"), pki.NodesGroup)
	proxy := &authorizationv1.ResourceAttributes{Verb: "create", Resource: "nodes", Subresource: "proxy", Name: "node-1"}
	r, err = sar(node, authorizationv1.SubjectAccessReviewSpec{User: pki.APIServerKubeletClientUser, ResourceAttributes: proxy})
	if err != nil || !r.Status.Allowed {
		t.Errorf("node asks for kube-apiserver-kubelet-client: %+v %v", r, err)
	}
	stats := &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "stats", Name: "node-1"}
	r, err = sar(node, authorizationv1.SubjectAccessReviewSpec{User: pki.APIServerKubeletClientUser, ResourceAttributes: stats})
	if err != nil || !r.Status.Allowed {
		t.Errorf("kubelet client nodes/stats: %+v %v", r, err)
	}
	r, err = sar(node, authorizationv1.SubjectAccessReviewSpec{User: "carol", Groups: []string{"system:authenticated"}, ResourceAttributes: proxy})
	if err != nil || r.Status.Allowed {
		t.Errorf("node asks for carol's nodes/proxy: %+v %v", r, err)
	}
	// Asking needs create subjectaccessreviews; the spec needs a subject.
	_, err = sar(e.tokenClient("bob-token"), authorizationv1.SubjectAccessReviewSpec{User: "carol", ResourceAttributes: podsGet})
	wantCode(t, "bob asks", err, 403)
	_, err = sar(e.admin, authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: podsGet})
	wantCode(t, "no user nor group", err, 422)
	_, err = sar(e.admin, authorizationv1.SubjectAccessReviewSpec{User: "carol"})
	wantCode(t, "no attributes", err, 400)
}

// summary is a kubelet's /stats/summary for pods of 10m CPU and 1 MiB each.
func summary(node string, now time.Time, pods ...*corev1.Pod) statsv1alpha1.Summary {
	ts := metav1.NewTime(now)
	cpu := func(n uint64) *statsv1alpha1.CPUStats { return &statsv1alpha1.CPUStats{Time: ts, UsageNanoCores: &n} }
	mem := func(n uint64) *statsv1alpha1.MemoryStats {
		return &statsv1alpha1.MemoryStats{Time: ts, WorkingSetBytes: &n}
	}
	s := statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: node, StartTime: metav1.NewTime(now.Add(-time.Hour)), CPU: cpu(500_000_000), Memory: mem(1 << 30)}}
	for _, p := range pods {
		ps := statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)}, StartTime: metav1.NewTime(now.Add(-time.Hour))}
		for _, c := range p.Spec.Containers {
			ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{Name: c.Name, StartTime: metav1.NewTime(now.Add(-time.Hour)), CPU: cpu(10_000_000), Memory: mem(1 << 20)})
		}
		s.Pods = append(s.Pods, ps)
	}
	return s
}

func TestMetricsAPI(t *testing.T) {
	e := newKubeletEnv(t)
	ctx := ctxT(t)
	now := time.Now().Truncate(time.Second)
	var mu sync.Mutex
	sums := map[string]statsv1alpha1.Summary{}
	serve := func(node string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/stats/summary" {
				http.NotFound(w, r)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			_ = json.NewEncoder(w).Encode(sums[node])
		}
	}
	e.startKubelet("m1", serve("m1"))
	e.startKubelet("m2", serve("m2"))
	// m3's kubelet is down: its port refuses.
	down := e.startKubelet("m3", serve("m3"))
	down.srv.Close()
	a := e.boundPod("default", "a", "m1", "app")
	b := e.boundPod("default", "b", "m2", "app", "sidecar")
	c := e.boundPod("kube-system", "c", "m2", "app")
	lost := e.boundPod("default", "lost", "m3", "app")
	mu.Lock()
	sums["m1"] = summary("m1", now, a)
	sums["m2"] = summary("m2", now, b, c)
	sums["m3"] = summary("m3", now, lost)
	mu.Unlock()

	get := func(path string, into any) {
		t.Helper()
		testenv.Eventually(t, 10*time.Second, path, func() error {
			p, q, _ := strings.Cut(path, "?")
			req := e.admin.RESTClient().Get().AbsPath(p)
			if q != "" {
				v, _ := url.ParseQuery(q)
				req = req.Param("labelSelector", v.Get("labelSelector"))
			}
			body, err := req.DoRaw(ctx)
			if err != nil {
				return err
			}
			return json.Unmarshal(body, into)
		})
	}
	var nodes metricsv1beta1.NodeMetricsList
	get("/apis/metrics.k8s.io/v1beta1/nodes", &nodes)
	if len(nodes.Items) != 2 || nodes.Items[0].Name != "m1" || nodes.Items[1].Name != "m2" {
		t.Fatalf("node metrics with m3 down: %+v", nodes.Items)
	}
	n := nodes.Items[0]
	if n.Usage.Cpu().String() != "500m" || n.Usage.Memory().String() != "1Gi" || !n.Timestamp.Time.Equal(now) || n.Window.Duration <= 0 || n.Labels["pool"] != "a" {
		t.Errorf("node m1 metrics: %+v", n)
	}
	var one metricsv1beta1.NodeMetrics
	get("/apis/metrics.k8s.io/v1beta1/nodes/m2", &one)
	if one.Name != "m2" || one.Kind != "NodeMetrics" {
		t.Errorf("node m2: %+v", one)
	}
	admin := e.certClientConfig(pki.AdminUser, pki.MastersGroup)
	if code, body := send(t, admin, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/m3", nil); code != 404 {
		t.Errorf("metrics of the down node: %d %s", code, body)
	}

	var pods metricsv1beta1.PodMetricsList
	get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", &pods)
	if len(pods.Items) != 2 || pods.Items[0].Name != "a" || pods.Items[1].Name != "b" {
		t.Fatalf("default pods' metrics: %+v", pods.Items)
	}
	if cs := pods.Items[1].Containers; len(cs) != 2 || cs[0].Name != "app" || cs[1].Name != "sidecar" || cs[0].Usage.Cpu().String() != "10m" || cs[0].Usage.Memory().String() != "1Mi" {
		t.Errorf("b's containers: %+v", cs)
	}
	get("/apis/metrics.k8s.io/v1beta1/pods", &pods)
	if len(pods.Items) != 3 {
		t.Errorf("all pods' metrics: %+v", pods.Items)
	}
	get("/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dc", &pods)
	if len(pods.Items) != 1 || pods.Items[0].Name != "c" || pods.Items[0].Namespace != "kube-system" {
		t.Errorf("pods' metrics selected app=c: %+v", pods.Items)
	}
	var pm metricsv1beta1.PodMetrics
	get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a", &pm)
	if pm.Name != "a" || pm.Kind != "PodMetrics" || len(pm.Containers) != 1 {
		t.Errorf("pod a: %+v", pm)
	}
	if code, body := send(t, admin, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/lost", nil); code != 404 {
		t.Errorf("metrics of a pod on the down node: %d %s", code, body)
	}

	// RBAC: pods and nodes in metrics.k8s.io.
	alice := e.pki.TokenConfig(e.api.Config, "alice-token")
	if code, body := send(t, alice, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", nil); code != 403 {
		t.Errorf("alice's pod metrics without RBAC: %d %s", code, body)
	}
	grant(t, e.secureEnv, "alice", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods"}})
	testenv.Eventually(t, 10*time.Second, "alice's pod metrics", func() error {
		if code, body := send(t, alice, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", nil); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	if code, body := send(t, alice, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", nil); code != 403 {
		t.Errorf("alice's node metrics: %d %s", code, body)
	}
}
