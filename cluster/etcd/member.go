package etcd

import (
	"github.com/kstep-dev/kstep/cluster/netfault"

	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"go.etcd.io/etcd/server/v3/embed"
)

// Member is a running etcd member. It is ready (part of a cluster with a
// leader, serving clients) when Start returns it.
type Member struct {
	name      string
	e         *embed.Etcd
	links     *netfault.Links // the member's link proxies (Config.PeerProxyListen, ClientProxyListen)
	closeOnce sync.Once
}

// Run starts the member described by cfg, waits until it is ready, and serves
// until ctx is cancelled (then closes it cleanly and returns nil, also when
// it was not ready yet) or etcd fails (then returns the failure).
func Run(ctx context.Context, cfg Config) error {
	m, err := Start(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while waiting for peers
		}
		return err
	}
	return m.Wait(ctx)
}

// Start starts the member and returns once it is ready. A member of a new
// multi-member cluster is ready only when a quorum of its peers has started
// too, so Start blocks until then or until ctx is cancelled.
func Start(ctx context.Context, cfg Config) (*Member, error) {
	ec, err := cfg.embedConfig()
	if err != nil {
		return nil, err
	}
	// The links serve before the member starts: peers reach each other
	// through them from the first bootstrap message.
	links, err := startLinks(cfg, ec)
	if err != nil {
		return nil, err
	}
	if links != nil {
		control := linkControl(cfg, links)
		ec.UserHandlers = map[string]http.Handler{netfault.ControlPath: control, netfault.ControlPath + "/": control}
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		if links != nil {
			links.Close()
		}
		return nil, fmt.Errorf("etcd member %q: start: %w", cfg.Name, err)
	}
	m := &Member{name: cfg.Name, e: e, links: links}
	select {
	case <-e.Server.ReadyNotify():
		return m, nil
	case err, ok := <-e.Err():
		m.Close()
		if !ok {
			err = errors.New("stopped before it was ready")
		}
		return nil, fmt.Errorf("etcd member %q: %w", cfg.Name, err)
	case <-e.Server.StopNotify():
		m.Close()
		return nil, fmt.Errorf("etcd member %q: server stopped before it was ready", cfg.Name)
	case <-ctx.Done():
		m.Close()
		return nil, fmt.Errorf("etcd member %q: waiting for readiness: %w", cfg.Name, context.Cause(ctx))
	}
}

// Wait blocks until ctx is cancelled, then closes the member and returns nil;
// or until etcd fails or stops on its own (for example after being removed
// from the cluster), then closes it and returns why.
func (m *Member) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		m.Close()
		return nil
	case err, ok := <-m.e.Err():
		m.Close()
		if !ok {
			return fmt.Errorf("etcd member %q: stopped", m.name)
		}
		return fmt.Errorf("etcd member %q: %w", m.name, err)
	case <-m.e.Server.StopNotify():
		m.Close()
		return fmt.Errorf("etcd member %q: server stopped", m.name)
	}
}

// Close stops the member: it drains client requests, stops Raft and closes
// the listeners. It is safe to call more than once.
func (m *Member) Close() {
	// embed.Etcd.Close closes its error channel, so it must run only once.
	m.closeOnce.Do(func() {
		m.e.Close()
		if m.links != nil {
			m.links.Close()
		}
	})
}

// Name returns the member's name.
func (m *Member) Name() string { return m.name }

// ClientURLs returns the URLs clients reach the member on.
func (m *Member) ClientURLs() []string {
	urls := m.e.Config().AdvertiseClientUrls
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = u.String()
	}
	return out
}
