package chaos

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync/atomic"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// apiservers is how the engine's clients reach the cluster: the
// kubeconfig's base config (credentials, CA: TLS keeps working) and every
// apiserver the kubeconfig names, so a client fails over like one behind a
// load balancer.
type apiservers struct {
	base  *rest.Config
	hosts []string
}

// loadAPIServers reads every context's server from the kubeconfig, the
// current context's first.
func loadAPIServers(kubeconfig string) (*apiservers, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	base, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == raw.CurrentContext) != (names[j] == raw.CurrentContext) {
			return names[i] == raw.CurrentContext
		}
		return names[i] < names[j]
	})
	var hosts []string
	seen := map[string]bool{}
	for _, n := range names {
		c := raw.Clusters[raw.Contexts[n].Cluster]
		if c == nil {
			continue
		}
		u, err := url.Parse(c.Server)
		if err != nil || seen[u.Host] {
			continue
		}
		seen[u.Host] = true
		hosts = append(hosts, u.Host)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("kubeconfig %s names no apiserver", kubeconfig)
	}
	base.QPS, base.Burst = -1, -1
	return &apiservers{base: base, hosts: hosts}, nil
}

// client returns a clientset that prefers apiserver i (mod their number)
// and fails over to the others.
func (a *apiservers) client(i int) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(a.base)
	f := &failover{hosts: a.hosts}
	f.cur.Store(int32(i % len(a.hosts)))
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		f.next = rt
		return f
	}
	return kubernetes.NewForConfig(cfg)
}

// failover sends each request to the apiserver that answered last, and to
// the next one when that one cannot be reached. Requests that may have
// reached an apiserver are retried elsewhere only when repeating them is
// harmless (GET, HEAD); a refused connection never reached one.
type failover struct {
	next  http.RoundTripper
	hosts []string
	cur   atomic.Int32
}

func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	start := int(f.cur.Load())
	var last error
	for i := range f.hosts {
		idx := (start + i) % len(f.hosts)
		r := req.Clone(req.Context())
		r.URL.Host, r.Host = f.hosts[idx], ""
		if i > 0 && req.Body != nil {
			if req.GetBody == nil {
				return nil, last
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, last
			}
			r.Body = b
		}
		resp, err := f.next.RoundTrip(r)
		if err == nil {
			f.cur.Store(int32(idx))
			return resp, nil
		}
		last = err
		if req.Context().Err() != nil || !(refused(err) || req.Method == http.MethodGet || req.Method == http.MethodHead) {
			return nil, err
		}
	}
	return nil, last
}

// refused reports a connection that was never established.
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}
