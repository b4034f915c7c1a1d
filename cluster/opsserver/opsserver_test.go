package opsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/pki"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, hc *http.Client, method, url string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestInsecurePortIsOpen: without TLS files (an --insecure cluster) the
// port serves every path to anyone over plain HTTP.
func TestInsecurePortIsOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := freeAddr(t)
	ctl := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("done")) })
	if err := Serve(ctx, Config{Addr: addr, Handlers: []Handler{{Path: "/kstep/ctl", Handler: ctl}}}); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for _, c := range []struct{ method, path string }{{"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/livez"}, {"GET", "/metrics"}, {"GET", "/debug/pprof/"}, {"POST", "/kstep/ctl/x"}} {
		if code := get(t, hc, c.method, "http://"+addr+c.path); code != http.StatusOK {
			t.Errorf("%s %s: %d, want 200", c.method, c.path, code)
		}
	}
}

// TestSecurePortRefusesWithoutCertificate: with TLS, the health paths
// answer anyone (an unhealthy actor 503), and every other path, known or
// not, is 401 without a client certificate, before any review is asked.
func TestSecurePortRefusesWithoutCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := ca.Pair().Write(caFile, filepath.Join(dir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingCert("ops")
	if err != nil {
		t.Fatal(err)
	}
	files := TLS{CertFile: filepath.Join(dir, "ops.crt"), KeyFile: filepath.Join(dir, "ops.key"), ClientCAFile: caFile}
	if err := serving.Write(files.CertFile, files.KeyFile); err != nil {
		t.Fatal(err)
	}
	// A client of an address nothing listens on: a review asked would
	// fail (500), so a 401 shows none was.
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := freeAddr(t)
	var unhealthy atomic.Bool
	cfg := Config{Addr: addr, TLS: files, Reviews: cs.AuthorizationV1(), Healthy: func() error {
		if unhealthy.Load() {
			return io.ErrUnexpectedEOF
		}
		return nil
	}, Handlers: []Handler{{Path: "/kstep/ctl", Handler: http.NotFoundHandler()}}}
	if err := Serve(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	base := "https://" + addr
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		if code := get(t, hc, "GET", base+path); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, code)
		}
	}
	unhealthy.Store(true)
	if code := get(t, hc, "GET", base+"/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz of an unhealthy actor: %d, want 503", code)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/metrics"}, {"GET", "/debug/pprof/"}, {"GET", "/debug/pprof/profile?seconds=1"}, {"POST", "/kstep/ctl/x/stop"}, {"GET", "/nothing"}} {
		if code := get(t, hc, c.method, base+c.path); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a certificate: %d, want 401", c.method, c.path, code)
		}
	}
	if code := get(t, &http.Client{Timeout: 5 * time.Second}, "GET", "http://"+addr+"/metrics"); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the TLS port: %d, want 400", code)
	}
	// A secure port without a review client is a configuration error.
	if err := Serve(ctx, Config{Addr: freeAddr(t), TLS: files}); err == nil {
		t.Error("a secure port without Reviews served")
	}
}
