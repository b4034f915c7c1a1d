package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/pki"
)

// streamingSim is a sim whose Exec, Attach and PortForward answer URLs on
// a stream server, as containerd's CRI does.
type streamingSim struct {
	*simruntime.Runtime
	url  string
	mu   sync.Mutex
	reqs []any
}

func (s *streamingSim) record(r any) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

func (s *streamingSim) last() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

func (s *streamingSim) Exec(_ context.Context, r *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	s.record(r)
	return &runtimeapi.ExecResponse{Url: s.url + "/exec/token1"}, nil
}

func (s *streamingSim) Attach(_ context.Context, r *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	s.record(r)
	return &runtimeapi.AttachResponse{Url: s.url + "/attach/token2"}, nil
}

func (s *streamingSim) PortForward(_ context.Context, r *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	s.record(r)
	return &runtimeapi.PortForwardResponse{Url: s.url + "/portforward/token3"}, nil
}

// echoStreams is a stream server: it upgrades any upgrade request, says
// which path it served, then echoes.
func echoStreams(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto := r.Header.Get("Upgrade")
		if proto == "" || !strings.EqualFold(r.Header.Get("Connection"), "Upgrade") {
			http.Error(w, "upgrade required", http.StatusBadRequest)
			return
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n%s\n", proto, r.URL.Path)
		_ = rw.Flush()
		buf := make([]byte, 1024)
		for {
			n, err := rw.Read(buf)
			if n > 0 {
				_, _ = conn.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// upgrade sends an upgrade request over TLS as user and returns the
// response and the connection.
func (e *env) upgrade(t *testing.T, node, method, path string, headers ...string) (*http.Response, *bufio.Reader, *tls.Conn) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.pki.CA.CertPEM())
	pair, err := e.pki.CA.ClientCert(pki.APIServerKubeletClientUser)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	conn, err := tls.Dial("tcp", e.addr, &tls.Config{RootCAs: roots, ServerName: node, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", method, path, node, strings.Join(headers, ""))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, br, conn
}

func TestStreamsAreProxiedToTheRuntime(t *testing.T) {
	e := newEnv(t)
	streams := echoStreams(t)
	var sim *streamingSim
	e.startNodeWith(t, "n1", func(r *simruntime.Runtime) runtimeapi.RuntimeServiceServer {
		sim = &streamingSim{Runtime: r, url: streams.URL}
		return sim
	}, nil)
	e.createPod(t, "p1", "n1")
	e.waitRunning(t, "p1", 0)

	spdy := []string{"Connection: Upgrade\r\n", "Upgrade: SPDY/3.1\r\n", "X-Stream-Protocol-Version: v4.channel.k8s.io\r\n"}
	ws := []string{"Connection: Upgrade\r\n", "Upgrade: websocket\r\n", "Sec-WebSocket-Version: 13\r\n",
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n"}
	for _, tc := range []struct {
		name, method, path string
		headers            []string
		served             string
		check              func(any) error
	}{
		{"exec over SPDY", "POST", "/exec/default/p1/app?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1", spdy, "/exec/token1",
			func(r any) error {
				x := r.(*runtimeapi.ExecRequest)
				if strings.Join(x.Cmd, " ") != "sh -c echo hi" || !x.Stdin || !x.Stdout || !x.Stderr || x.Tty {
					return fmt.Errorf("exec request %+v", x)
				}
				return nil
			}},
		{"exec over WebSocket, tty drops stderr", "GET", "/exec/default/p1/app?command=date&stdout=true&stderr=true&tty=true", ws, "/exec/token1",
			func(r any) error {
				x := r.(*runtimeapi.ExecRequest)
				if !x.Tty || x.Stderr || !x.Stdout {
					return fmt.Errorf("exec request %+v", x)
				}
				return nil
			}},
		{"attach", "POST", "/attach/default/p1/app?output=1", spdy, "/attach/token2", func(r any) error {
			if _, ok := r.(*runtimeapi.AttachRequest); !ok {
				return fmt.Errorf("%T", r)
			}
			return nil
		}},
		{"port forward", "GET", "/portForward/default/p1?port=8080&port=9090", ws, "/portforward/token3", func(r any) error {
			x := r.(*runtimeapi.PortForwardRequest)
			if x.PodSandboxId == "" || len(x.Port) != 2 || x.Port[0] != 8080 || x.Port[1] != 9090 {
				return fmt.Errorf("port forward request %+v", x)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, br, conn := e.upgrade(t, "n1", tc.method, tc.path, tc.headers...)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("%d %q", resp.StatusCode, b)
			}
			if err := tc.check(sim.last()); err != nil {
				t.Fatal(err)
			}
			line, err := br.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != tc.served {
				t.Fatalf("stream server served %q (%v), want %s", line, err, tc.served)
			}
			if _, err := io.WriteString(conn, "ping\n"); err != nil {
				t.Fatal(err)
			}
			if echo, err := br.ReadString('\n'); err != nil || echo != "ping\n" {
				t.Fatalf("echo %q, %v", echo, err)
			}
		})
	}
	t.Run("no upgrade is 400", func(t *testing.T) {
		code, body := e.do(t, e.client(t, "n1", pki.APIServerKubeletClientUser), "POST", "/exec/default/p1/app?command=ls&output=1")
		if code != http.StatusBadRequest || !strings.Contains(strings.ToLower(body), "upgrade") {
			t.Fatalf("%d %q", code, body)
		}
	})
}
