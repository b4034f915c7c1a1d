package apiclient

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Timing of the failover (variables only so tests can shorten them). Dials and probes are not on the eight-step path:
// a dead apiserver is left on the first refused dial, the prober only finds
// hung ones and the preferred one coming back.
var (
	// DialTimeout bounds one attempt to reach one apiserver (a stopped
	// container's address answers nothing; the next apiserver is tried).
	DialTimeout = 3 * time.Second
	// ProbeInterval is how often each apiserver's /readyz is read.
	ProbeInterval = time.Second
	// ProbeTimeout bounds one probe; /readyz itself gives etcd 2 s. Three
	// failed probes take at most about 8 s, kstep's node grace period: a
	// hung apiserver is left before its nodes' Leases run out.
	ProbeTimeout = 2500 * time.Millisecond
	// Fall is how many probes in a row must fail before an apiserver is
	// taken for down; Rise how many must pass before it is up again.
	Fall, Rise = 3, 2
)

// Servers is every apiserver a kubeconfig names (the server of each of its
// contexts' clusters, in cluster-name order starting at the current
// context's) and the current context's credentials to reach them.
type Servers struct {
	base  *rest.Config
	hosts []string // host:port
	tls   bool
}

// Load reads a kubeconfig. Actors talk to the apiservers at high rates, so
// client-side throttling is off.
func Load(path string) (*Servers, error) {
	if path == "" {
		return nil, fmt.Errorf("--kubeconfig is required")
	}
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	base, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	base.QPS, base.Burst = -1, -1
	cur, err := url.Parse(base.Host)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: server %q: %w", path, base.Host, err)
	}
	// Every context's cluster, ordered by cluster name (shorter first, so
	// apiserver-10 follows apiserver-9) and rotated to start at the current
	// context's: the plan's order, wrapping around after the preferred one.
	type entry struct{ cluster, host string }
	var all []entry
	seen := map[string]bool{}
	for _, ctx := range raw.Contexts {
		c := raw.Clusters[ctx.Cluster]
		if c == nil {
			continue
		}
		u, err := url.Parse(c.Server)
		if err != nil || u.Scheme != cur.Scheme || seen[hostPort(u)] {
			continue
		}
		seen[hostPort(u)] = true
		all = append(all, entry{ctx.Cluster, hostPort(u)})
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i].cluster) != len(all[j].cluster) {
			return len(all[i].cluster) < len(all[j].cluster)
		}
		return all[i].cluster < all[j].cluster
	})
	start := 0
	for i, e := range all {
		if e.host == hostPort(cur) {
			start = i
		}
	}
	s := &Servers{base: base, tls: cur.Scheme == "https"}
	for i := range all {
		s.hosts = append(s.hosts, all[(start+i)%len(all)].host)
	}
	if len(s.hosts) == 0 {
		s.hosts = []string{hostPort(cur)}
	}
	return s, nil
}

// hostPort is the address a URL's server is dialed at.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// Base is the current context's config, without failover: for requests
// meant for one apiserver (set its Host).
func (s *Servers) Base() *rest.Config { return rest.CopyConfig(s.base) }

// Hosts are the apiservers' addresses, the preferred first.
func (s *Servers) Hosts() []string { return append([]string(nil), s.hosts...) }

func (s *Servers) url(host string) string {
	if s.tls {
		return "https://" + host
	}
	return "http://" + host
}

// Config is a rest.Config that prefers apiserver prefer (mod their number,
// in Hosts order) and fails over to the others in order after it. Its
// prober runs until ctx ends. log may be nil.
func (s *Servers) Config(ctx context.Context, prefer int, log *slog.Logger) *rest.Config {
	cfg, _ := s.balance(ctx, prefer, log)
	return cfg
}

// balance is Config and its Balancer (nil with one apiserver).
func (s *Servers) balance(ctx context.Context, prefer int, log *slog.Logger) (*rest.Config, *Balancer) {
	cfg := rest.CopyConfig(s.base)
	n := len(s.hosts)
	order := make([]string, n)
	for i := range order {
		order[i] = s.hosts[(prefer+i)%n]
	}
	cfg.Host = s.url(order[0])
	if n == 1 {
		return cfg, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Balancer{log: log.With("component", "apiclient")}
	for _, h := range order {
		probe := rest.CopyConfig(s.base)
		probe.Host, probe.Timeout = s.url(h), ProbeTimeout
		hc, err := rest.HTTPClientFor(probe)
		if err != nil {
			hc = nil // probe reports it; the base config built a client already
		}
		b.servers = append(b.servers, &server{host: h, readyz: s.url(h) + "/readyz", up: true, probe: hc, conns: map[*conn]struct{}{}})
	}
	cfg.Dial = b.DialContext
	go b.run(ctx)
	return cfg, b
}

// Config loads a kubeconfig and returns the config of its preferred
// (current context's) apiserver, failing over to the others.
func Config(ctx context.Context, path string, log *slog.Logger) (*rest.Config, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	return s.Config(ctx, 0, log), nil
}

// Balancer chooses the apiserver each new connection goes to.
type Balancer struct {
	log     *slog.Logger
	dialer  net.Dialer
	mu      sync.Mutex
	servers []*server // in preference order
	active  int
}

type server struct {
	host       string
	readyz     string // the URL probed
	probe      *http.Client
	up         bool
	fails, oks int
	conns      map[*conn]struct{}
}

// Active is the address new connections go to.
func (b *Balancer) Active() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.servers[b.active].host
}

// DialContext connects to the active apiserver, or, when it cannot be
// reached, to the first other one that can (those believed up first).
// addr, the preferred apiserver's address as client-go asks for it, is
// ignored: every connection this config makes is to an apiserver.
func (b *Balancer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var last error
	for _, i := range b.order() {
		host := b.servers[i].host
		actx, cancel := context.WithTimeout(ctx, DialTimeout)
		c, err := b.dialer.DialContext(actx, network, host)
		cancel()
		if err == nil {
			return b.connected(i, c), nil
		}
		last = err
		b.unreachable(i, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// order is the dial order: the active apiserver, the others believed up,
// then the rest, each group in preference order.
func (b *Balancer) order() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []int{b.active}
	for _, up := range []bool{true, false} {
		for i, s := range b.servers {
			if i != b.active && s.up == up {
				out = append(out, i)
			}
		}
	}
	return out
}

func (b *Balancer) connected(i int, c net.Conn) net.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i != b.active {
		b.log.Warn("apiserver unreachable; failing over", "from", b.servers[b.active].host, "to", b.servers[i].host)
		b.active = i
	}
	w := &conn{Conn: c, b: b, s: b.servers[i]}
	b.servers[i].conns[w] = struct{}{}
	return w
}

// unreachable takes an apiserver that refused a dial for down at once; the
// prober brings it back.
func (b *Balancer) unreachable(i int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.servers[i]
	if s.up {
		b.log.Warn("apiserver unreachable", "server", s.host, "err", err)
	}
	s.up, s.oks, s.fails = false, 0, Fall
}

// run probes every apiserver until ctx ends.
func (b *Balancer) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range b.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(ProbeInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				b.observe(i, b.probe(ctx, i))
			}
		}()
	}
	wg.Wait()
	for _, sv := range b.servers {
		if sv.probe != nil {
			sv.probe.CloseIdleConnections()
		}
	}
}

// probe reads one apiserver's /readyz.
func (b *Balancer) probe(ctx context.Context, i int) error {
	s := b.servers[i]
	if s.probe == nil {
		return fmt.Errorf("no probe client")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.readyz, nil)
	if err != nil {
		return err
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}

// observe records a probe's verdict and moves the active apiserver when it
// should: back to the preferred one once it is up, or off an active one that
// is down while another is up. The connections to every other apiserver are
// closed, so what runs on them (watches, long requests) moves too.
func (b *Balancer) observe(i int, err error) {
	b.mu.Lock()
	s := b.servers[i]
	if err == nil {
		s.oks, s.fails = s.oks+1, 0
		if !s.up && s.oks >= Rise {
			s.up = true
			b.log.Info("apiserver ready", "server", s.host)
		}
	} else {
		s.oks, s.fails = 0, s.fails+1
		if s.up && s.fails >= Fall {
			s.up = false
			b.log.Warn("apiserver not ready", "server", s.host, "err", err)
		}
	}
	want := b.active
	if b.servers[0].up {
		want = 0
	} else if !b.servers[b.active].up {
		for j, o := range b.servers {
			if o.up {
				want = j
				break
			}
		}
	}
	var closing []*conn
	if want != b.active {
		b.log.Info("switching apiserver", "from", b.servers[b.active].host, "to", b.servers[want].host)
		b.active = want
		for j, o := range b.servers {
			if j == want {
				continue
			}
			for c := range o.conns {
				closing = append(closing, c)
			}
		}
	}
	b.mu.Unlock()
	for _, c := range closing {
		_ = c.Close()
	}
}

// conn is a connection the balancer made, so it can close it.
type conn struct {
	net.Conn
	b    *Balancer
	s    *server
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.b.mu.Lock()
		delete(c.s.conns, c)
		c.b.mu.Unlock()
	})
	return c.Conn.Close()
}
