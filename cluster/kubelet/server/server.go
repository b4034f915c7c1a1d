package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet"
	"github.com/kstep-dev/kstep/cluster/reviewauth"
)

// Config is one kubelet server.
type Config struct {
	// Addr is host:port to listen on (Run); upstream's port is 10250.
	Addr string
	// CertFile and KeyFile are the serving certificate, valid for the
	// names the apiserver verifies (the node names).
	CertFile, KeyFile string
	// ClientCAFile holds the CA certificates client certificates must
	// chain to.
	ClientCAFile string
	// Nodes finds the kubelet a request is for by its TLS server name
	// (Single for a lone kubelet, a *Nodes for a hollow-nodes process).
	Nodes func(serverName string) (*kubelet.Kubelet, bool)
	Log   *slog.Logger
}

// Single serves one kubelet whatever server name the caller asks for.
func Single(k *kubelet.Kubelet) func(string) (*kubelet.Kubelet, bool) {
	return func(string) (*kubelet.Kubelet, bool) { return k, true }
}

// Nodes is a set of kubelets by node name, for a server shared by the
// nodes of one process. Safe for concurrent use.
type Nodes struct {
	mu sync.RWMutex
	m  map[string]*kubelet.Kubelet
}

// NewNodes is an empty set.
func NewNodes() *Nodes { return &Nodes{m: map[string]*kubelet.Kubelet{}} }

// Set adds a kubelet, or replaces the one of its node (a restarted one).
func (n *Nodes) Set(k *kubelet.Kubelet) {
	n.mu.Lock()
	n.m[k.NodeName()] = k
	n.mu.Unlock()
}

// Remove forgets node, if k is still its kubelet (nil: whichever it is).
func (n *Nodes) Remove(node string, k *kubelet.Kubelet) {
	n.mu.Lock()
	if cur, ok := n.m[node]; ok && (k == nil || cur == k) {
		delete(n.m, node)
	}
	n.mu.Unlock()
}

// Lookup is the kubelet of node; when the set holds one node, any name
// picks it.
func (n *Nodes) Lookup(node string) (*kubelet.Kubelet, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if k, ok := n.m[node]; ok {
		return k, true
	}
	if len(n.m) == 1 {
		for _, k := range n.m {
			return k, true
		}
	}
	return nil, false
}

// Len is how many nodes the set holds.
func (n *Nodes) Len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.m)
}

// Server is a kubelet server. Build it with New, then Run or Serve it once.
type Server struct {
	cfg   Config
	tls   *tls.Config
	log   *slog.Logger
	authz *reviewauth.Authorizer
	mux   *http.ServeMux
	host  *hostStats
	cpu   *rates
}

// New loads the certificates and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Nodes == nil {
		return nil, errors.New("kubelet server: Nodes is required")
	}
	if cfg.CertFile == "" || cfg.KeyFile == "" || cfg.ClientCAFile == "" {
		return nil, errors.New("kubelet server: a serving certificate, its key and a client CA file are required")
	}
	tc, err := reviewauth.ServerTLS(cfg.CertFile, cfg.KeyFile, cfg.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("kubelet server: %w", err)
	}
	tc.NextProtos = []string{"http/1.1"} // upgrades (SPDY, WebSocket) need HTTP/1.1
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Log, tls: tc, authz: reviewauth.NewAuthorizer(), host: newHostStats("/proc", "/sys/fs/cgroup"), cpu: newRates()}
	s.routes()
	return s, nil
}

// Run listens on Config.Addr and serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("kubelet server: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves TLS on ln until ctx ends, then closes it (hijacked
// streams are cut).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		TLSConfig:         s.tls,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	s.log.Info("kubelet server listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(ln, s.tls)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		_ = srv.Close()
		<-errc
		return nil
	}
}

type nodeKey struct{}

// ServeHTTP routes a request to its node, authenticates and authorizes
// it, then serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u, err := reviewauth.CertUser(r)
	if err != nil {
		http.Error(w, "Unauthorized: "+err.Error(), http.StatusUnauthorized)
		return
	}
	k, ok := s.cfg.Nodes(r.TLS.ServerName)
	if !ok {
		http.Error(w, fmt.Sprintf("node %q is not served here", bounded(r.TLS.ServerName)), http.StatusNotFound)
		return
	}
	attrs := requestAttributes(u, k.NodeName(), r)
	d, err := s.authz.Authorize(r.Context(), k.Client().AuthorizationV1(), attrs)
	if err != nil {
		s.log.Warn("kubelet server: authorization error", "node", k.NodeName(), "user", u.Name, "err", err)
		http.Error(w, fmt.Sprintf("Authorization error (%s)", attrs), http.StatusInternalServerError)
		return
	}
	if !d.Allowed {
		msg := fmt.Sprintf("Forbidden (%s)", attrs)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), nodeKey{}, k)))
}

func nodeOf(r *http.Request) *kubelet.Kubelet { return r.Context().Value(nodeKey{}).(*kubelet.Kubelet) }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if !nodeOf(r).Registered() {
			http.Error(w, "node not registered yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	m.HandleFunc("GET /pods", s.pods)
	m.HandleFunc("GET /stats/summary", s.summary)
	m.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", s.containerLogs)
	m.HandleFunc("/exec/{ns}/{pod}/{container}", s.exec)
	m.HandleFunc("/exec/{ns}/{pod}/{uid}/{container}", s.exec)
	m.HandleFunc("/attach/{ns}/{pod}/{container}", s.attach)
	m.HandleFunc("/attach/{ns}/{pod}/{uid}/{container}", s.attach)
	m.HandleFunc("/portForward/{ns}/{pod}", s.portForward)
	m.HandleFunc("/portForward/{ns}/{pod}/{uid}", s.portForward)
	s.mux = m
}

// pods is the node's pods, as upstream's /pods: a v1 PodList.
func (s *Server) pods(w http.ResponseWriter, r *http.Request) {
	ps := nodeOf(r).Pods()
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: make([]corev1.Pod, 0, len(ps))}
	for _, p := range ps {
		list.Items = append(list.Items, *p)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := &list.Items[i], &list.Items[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	writeJSON(w, list)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// bounded cuts caller-supplied text quoted in an answer.
func bounded(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}
