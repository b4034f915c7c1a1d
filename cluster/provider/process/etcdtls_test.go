package process

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// TestEtcdTakesOnlyItsOwnCertificates: a secure cluster's etcd member
// refuses plain HTTP, TLS without a certificate and a certificate of the
// cluster's CA (a controller-manager's) on its client URL, and every one of
// those and the apiservers' etcd client certificate on its peer URL and
// its peer link; the apiservers' certificate reads keys, a member's peer
// certificate reaches the peer URL, only kstep-etcd-admin controls the
// links, and the metrics URL serves metrics but no keys.
func TestEtcdTakesOnlyItsOwnCertificates(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := newCluster(t, bin, 1, 0, func(c *provider.Spec) { c.LinkProxies = true })
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	member := p.st.Actors[0]
	if member.Role != provider.RoleEtcd || !strings.HasPrefix(member.Endpoint, "https://") || member.MetricsURL == "" {
		t.Fatalf("etcd-0 = %+v, want an https endpoint and a metrics URL", member.Actor)
	}
	files := provider.PKIPaths(p.StateDir())
	pair := func(cert, key string) []tls.Certificate {
		t.Helper()
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{c}
	}
	caPool := func(path string) *x509.CertPool {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			t.Fatalf("%s holds no certificate", path)
		}
		return pool
	}
	// Another actor's identity: the controller-manager's certificate, from
	// the cluster's CA.
	clusterCA, err := pki.LoadCA(filepath.Join(files.Dir, "ca.crt"), filepath.Join(files.Dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := clusterCA.ClientCert(pki.ControllerManagerUser)
	if err != nil {
		t.Fatal(err)
	}
	cmCert, err := tls.X509KeyPair(cm.CertPEM, cm.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	etcdCA, adminCert, adminKey := files.EtcdAdmin()
	etcdDir := files.EtcdDir()
	ids := map[string][]tls.Certificate{
		"no certificate":     nil,
		"controller-manager": {cmCert},
		"apiserver":          pair(filepath.Join(etcdDir, "apiserver-etcd-client.crt"), filepath.Join(etcdDir, "apiserver-etcd-client.key")),
		"etcd-admin":         pair(adminCert, adminKey),
		"member peer":        pair(filepath.Join(etcdDir, "etcd-0-peer.crt"), filepath.Join(etcdDir, "etcd-0-peer.key")),
	}
	// The client presents its certificate whatever CAs the server asks
	// for (Go's own choice would send none of another CA's), so the
	// server's refusal is what is tested.
	client := func(id string, roots *x509.CertPool) *http.Client {
		present := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(ids[id]) == 0 {
				return &tls.Certificate{}, nil
			}
			return &ids[id][0], nil
		}
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: roots, GetClientCertificate: present}}}
	}
	do := func(hc *http.Client, method, url, body string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b), nil
	}
	// Every key: /v3/kv/range from "\0" to the end.
	const rangeAll = `{"key":"AA==","range_end":"AA==","count_only":true}`
	port := func(use string) string { return fmt.Sprintf("127.0.0.1:%d", member.Ports[use]) }

	// The client URL.
	if code, body, err := do(client("", nil), http.MethodPost, "http://"+port(provider.PortClient)+"/v3/kv/range", rangeAll); err == nil {
		t.Errorf("plain HTTP to the client URL answered %d %q, want no answer", code, body)
	}
	for _, id := range []string{"no certificate", "controller-manager"} {
		if code, body, err := do(client(id, caPool(etcdCA)), http.MethodPost, member.Endpoint+"/v3/kv/range", rangeAll); err == nil {
			t.Errorf("client URL, %s: answered %d %q, want the handshake refused", id, code, body)
		} else {
			t.Logf("client URL, %s: %v", id, err)
		}
	}
	for _, id := range []string{"apiserver", "etcd-admin"} {
		if code, body, err := do(client(id, caPool(etcdCA)), http.MethodPost, member.Endpoint+"/v3/kv/range", rangeAll); err != nil || code != http.StatusOK || !strings.Contains(body, `"cluster_id"`) {
			t.Errorf("client URL, %s: %d %q %v, want a range answered", id, code, body, err)
		}
	}

	// The peer URL and the peer link (the advertised peer address): only
	// a peer certificate gets a session.
	peerCA := caPool(filepath.Join(etcdDir, "peer-ca.crt"))
	for _, use := range []string{provider.PortPeer, provider.PortPeerProxy} {
		if code, _, err := do(client("", nil), http.MethodGet, "http://"+port(use)+"/version", ""); err == nil {
			t.Errorf("plain HTTP to %s answered %d, want no answer", use, code)
		}
		for _, id := range []string{"no certificate", "controller-manager", "apiserver", "etcd-admin"} {
			if code, _, err := do(client(id, peerCA), http.MethodGet, "https://"+port(use)+"/version", ""); err == nil {
				t.Errorf("%s, %s: answered %d, want the handshake refused", use, id, code)
			} else {
				t.Logf("%s, %s: %v", use, id, err)
			}
		}
		if code, body, err := do(client("member peer", peerCA), http.MethodGet, "https://"+port(use)+"/version", ""); err != nil || code != http.StatusOK {
			t.Errorf("%s, a member's peer certificate: %d %q %v, want etcd's version", use, code, body, err)
		}
	}

	// The link control: kstep-etcd-admin's only.
	if code, _, err := do(client("apiserver", caPool(etcdCA)), http.MethodGet, member.Endpoint+netfault.ControlPath, ""); err != nil || code != http.StatusForbidden {
		t.Errorf("link control as the apiserver: %d %v, want 403", code, err)
	}
	if code, body, err := do(client("etcd-admin", caPool(etcdCA)), http.MethodGet, member.Endpoint+netfault.ControlPath, ""); err != nil || code != http.StatusOK || !strings.Contains(body, "etcd-peer") {
		t.Errorf("link control as kstep-etcd-admin: %d %q %v, want the links", code, body, err)
	}

	// The metrics URL: metrics, no keys.
	if code, body, err := do(client("", nil), http.MethodGet, member.MetricsURL+"/metrics", ""); err != nil || code != http.StatusOK || !strings.Contains(body, "etcd_server_has_leader") {
		t.Errorf("metrics URL /metrics: %d %v, want etcd's metrics", code, err)
	}
	if code, body, err := do(client("", nil), http.MethodPost, member.MetricsURL+"/v3/kv/range", rangeAll); err == nil && code == http.StatusOK {
		t.Errorf("metrics URL /v3/kv/range answered %q", body)
	}
}
