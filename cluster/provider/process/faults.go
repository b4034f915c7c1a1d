package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// Pause freezes the actor's process with SIGSTOP.
func (p *Provider) Pause(ctx context.Context, name string) error {
	return p.Stop(ctx, name, syscall.SIGSTOP)
}

// Unpause thaws a paused actor with SIGCONT.
func (p *Provider) Unpause(ctx context.Context, name string) error {
	return p.Stop(ctx, name, syscall.SIGCONT)
}

// Partition cuts an etcd member off from its peers: the peer proxies
// (Config.EtcdPeerProxy) close every connection into the member and every
// connection it opened, and refuse new ones until Heal. Its clients (the
// apiservers) still reach it, as with a real network split between etcd
// hosts. Other actors, and clusters without peer proxies, are
// ErrUnsupported: every actor shares the host's loopback.
func (p *Provider) Partition(_ context.Context, name string) error {
	pp, err := p.proxiesFor(name)
	if err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	if err := pp.partition(name); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	return nil
}

// Heal undoes Partition.
func (p *Provider) Heal(_ context.Context, name string) error {
	pp, err := p.proxiesFor(name)
	if err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	if err := pp.heal(name); err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	return nil
}

// proxiesFor returns the peer proxies that can cut name's traffic.
func (p *Provider) proxiesFor(name string) (*peerProxies, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadedLocked(); err != nil {
		return nil, err
	}
	a, err := p.st.actor(name)
	if err != nil {
		return nil, err
	}
	if a.Role != provider.RoleEtcd {
		return nil, fmt.Errorf("only etcd members' peer traffic can be cut by the process provider: %w", provider.ErrUnsupported)
	}
	if p.proxies == nil {
		return nil, fmt.Errorf("the cluster runs without etcd peer proxies (Config.EtcdPeerProxy) in this process: %w", provider.ErrUnsupported)
	}
	return p.proxies, nil
}

// startPeerProxiesLocked starts the peer proxies of the recorded cluster's
// etcd members, if it has them. Caller holds p.mu.
func (p *Provider) startPeerProxiesLocked() error {
	members := map[string][2]int{}
	for _, a := range p.st.Actors {
		if adv, ok := a.Ports["peer-proxy"]; ok && a.Role == provider.RoleEtcd {
			members[a.Name] = [2]int{adv, a.Ports["peer"]}
		}
	}
	if len(members) == 0 {
		return nil
	}
	pp, err := startPeerProxies(members)
	if err != nil {
		return err
	}
	p.proxies = pp
	return nil
}

// stopPeerProxies closes the peer proxies, if any.
func (p *Provider) stopPeerProxies() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.proxies.close()
	p.proxies = nil
}

// Logs opens the actor's log file.
func (p *Provider) Logs(_ context.Context, name string) (io.ReadCloser, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadedLocked(); err != nil {
		return nil, fmt.Errorf("logs %s: %w", name, err)
	}
	a, err := p.st.actor(name)
	if err != nil {
		return nil, fmt.Errorf("logs: %w", err)
	}
	return os.Open(a.LogPath)
}
