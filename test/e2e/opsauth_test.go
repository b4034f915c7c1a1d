package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/hollowctl"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
)

// TestOpsPortsAuth: on a secure cluster (the default) every actor's ops
// port (controller-manager, scheduler, hollow nodes) serves TLS; /healthz,
// /readyz and /livez answer anyone; /metrics, /debug/pprof/ and the hollow
// kubelets' control answer no one without a client certificate (401),
// refuse a user RBAC grants nothing (403), give system:monitoring metrics
// and pprof but not the control (403), and give the admin (the harness's
// identity: chaos stops hollow kubelets with it) everything.
func TestOpsPortsAuth(t *testing.T) {
	inLane(t, hollowProcs)
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary = binary(t)
	cfg.StateDir = t.TempDir()
	cfg.APIServers, cfg.ControllerManagers, cfg.Schedulers, cfg.HollowNodes = 1, 1, 1, 2
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v\n%s", err, logs(cfg.StateDir))
	}
	t.Cleanup(func() { _ = p.Down(context.Background()) })
	checkOpsPortsAuth(ctx, t, p, cfg.StateDir)
}

// checkOpsPortsAuth probes every ops port of p's cluster (a secure one,
// its PKI in stateDir/pki) as TestOpsPortsAuth says, and drives a hollow
// kubelet's control as the admin when the cluster has hollow nodes.
func checkOpsPortsAuth(ctx context.Context, t *testing.T, p provider.Provider, stateDir string) {
	t.Helper()
	dir := filepath.Join(stateDir, "pki")
	ca, err := pki.LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	as := func(user string, groups ...string) *http.Client {
		tc := &tls.Config{RootCAs: roots}
		if user != "" {
			pair, err := ca.ClientCert(user, groups...)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: tc}}
	}
	anonymous, nobody, monitor, admin := as(""), as("nobody", "developers"), as("prometheus", pki.MonitoringGroup), adminHTTPClient(t, p.Kubeconfig())
	// A certificate of another CA is no client certificate of this one,
	// whatever it names: 401 (Go's client offers none the server's CA list
	// does not accept; one offered would fail the handshake).
	other, err := pki.NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := other.ClientCert(pki.AdminUser, pki.MastersGroup)
	if err != nil {
		t.Fatal(err)
	}
	foreignCert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	foreign := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{foreignCert}}}}

	call := func(hc *http.Client, method, url string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}

	var ops []provider.Actor
	var hollow *provider.Actor
	roles := map[provider.Role]bool{}
	for _, a := range p.Actors() {
		switch a.Role {
		case provider.RoleControllerManager, provider.RoleScheduler, provider.RoleHollowNodes, provider.RoleNode:
			if !strings.HasPrefix(a.Endpoint, "https://") {
				t.Errorf("%s: ops endpoint %s, want https", a.Name, a.Endpoint)
			}
			ops = append(ops, a)
			roles[a.Role] = true
			if a.Role == provider.RoleHollowNodes {
				hollow = &a
			}
		}
	}
	if !roles[provider.RoleControllerManager] || !roles[provider.RoleScheduler] || !(roles[provider.RoleHollowNodes] || roles[provider.RoleNode]) {
		t.Fatalf("ops actors %v, want a controller-manager, a scheduler and nodes", ops)
	}
	const stop = hollowctl.Path + "/hollow-1/stop"
	for _, a := range ops {
		base := strings.TrimSuffix(a.Endpoint, "/")
		for _, path := range []string{"/healthz", "/readyz", "/livez"} {
			if code, body := call(anonymous, http.MethodGet, base+path); code != http.StatusOK {
				t.Errorf("%s: anonymous GET %s: %d %s, want 200", a.Name, path, code, body)
			}
		}
		type want struct {
			hc     *http.Client
			who    string
			method string
			path   string
			code   int
		}
		cases := []want{
			{anonymous, "anonymous", http.MethodGet, "/metrics", http.StatusUnauthorized},
			{anonymous, "anonymous", http.MethodGet, "/debug/pprof/", http.StatusUnauthorized},
			{anonymous, "anonymous", http.MethodGet, "/debug/pprof/heap", http.StatusUnauthorized},
			{anonymous, "anonymous", http.MethodPost, stop, http.StatusUnauthorized},
			{nobody, "nobody", http.MethodGet, "/metrics", http.StatusForbidden},
			{nobody, "nobody", http.MethodGet, "/debug/pprof/", http.StatusForbidden},
			{nobody, "nobody", http.MethodPost, stop, http.StatusForbidden},
			{monitor, "system:monitoring", http.MethodGet, "/metrics", http.StatusOK},
			{monitor, "system:monitoring", http.MethodGet, "/debug/pprof/", http.StatusOK},
			{monitor, "system:monitoring", http.MethodPost, stop, http.StatusForbidden},
			{admin, "admin", http.MethodGet, "/metrics", http.StatusOK},
			{admin, "admin", http.MethodGet, "/debug/pprof/", http.StatusOK},
		}
		for _, c := range cases {
			code, body := call(c.hc, c.method, base+c.path)
			if code != c.code {
				t.Errorf("%s: %s %s %s: %d %.300s, want %d", a.Name, c.who, c.method, c.path, code, body, c.code)
				continue
			}
			if code == http.StatusUnauthorized || code == http.StatusForbidden {
				var st metav1.Status
				if err := json.Unmarshal([]byte(body), &st); err != nil || st.Code != int32(code) {
					t.Errorf("%s: %s %s %s: body %.300q is no metav1.Status of %d (%v)", a.Name, c.who, c.method, c.path, body, code, err)
				}
			}
			if c.path == "/metrics" && code == http.StatusOK && !strings.Contains(body, "go_goroutines") {
				t.Errorf("%s: %s GET /metrics: no go_goroutines in %.300s", a.Name, c.who, body)
			}
		}
		if code, body := call(foreign, http.MethodGet, base+"/metrics"); code != http.StatusUnauthorized {
			t.Errorf("%s: GET /metrics with another CA's admin certificate: %d %.300s, want 401", a.Name, code, body)
		}
	}

	if hollow == nil {
		return
	}
	// The admin drives the hollow kubelets' control, as chaos does.
	c := hollowctl.Client{HC: admin, Base: hollow.Endpoint}
	k, err := c.Stop(ctx, "hollow-1")
	if err != nil || k.Running {
		t.Fatalf("admin stops hollow-1's kubelet: %+v %v", k, err)
	}
	if k, err = c.Start(ctx, "hollow-1"); err != nil || !k.Running || k.Starts != 2 {
		t.Fatalf("admin starts hollow-1's kubelet again: %+v %v", k, err)
	}
	if _, err := (hollowctl.Client{HC: anonymous, Base: hollow.Endpoint}).List(ctx); err == nil {
		t.Errorf("anonymous lists the hollow kubelets")
	}
}
