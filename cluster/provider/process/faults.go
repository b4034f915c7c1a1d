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

// Partition cuts an etcd member off from its peers (provider.ScopePeers)
// through the etcd-peer links inside the members (Topology.LinkProxies):
// its clients (the apiservers) still reach it, as with a real network split
// between etcd hosts. A whole actor off the network (provider.ScopeAll) and
// other actors' traffic are ErrUnsupported: every actor shares the host's
// loopback.
func (p *Provider) Partition(ctx context.Context, name string, scope provider.Scope) error {
	if err := p.peerActor(name, scope); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	if err := provider.SetPeerCut(ctx, p.cfg.StateDir, p.Actors(), name, true); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	return nil
}

// Heal undoes Partition.
func (p *Provider) Heal(ctx context.Context, name string) error {
	if err := p.peerActor(name, provider.ScopePeers); err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	if err := provider.SetPeerCut(ctx, p.cfg.StateDir, p.Actors(), name, false); err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	return nil
}

// peerActor checks that name is an etcd member and scope is peers.
func (p *Provider) peerActor(name string, scope provider.Scope) error {
	if scope != provider.ScopePeers {
		return fmt.Errorf("the process provider runs every actor on the host's loopback and cannot take one off the network (scope %q; docker can): %w", scope, provider.ErrUnsupported)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadedLocked(); err != nil {
		return err
	}
	a, err := p.st.actor(name)
	if err != nil {
		return err
	}
	if a.Role != provider.RoleEtcd {
		return fmt.Errorf("only etcd members' peer traffic can be cut by the process provider: %w", provider.ErrUnsupported)
	}
	return nil
}

// Signal sends sig to the process named process (argv[0]'s base name, or
// the kstep subcommand: "containerd", "kubelet") among the actor's
// descendants, found in /proc.
func (p *Provider) Signal(_ context.Context, name, process string, sig os.Signal) error {
	s, err := toSyscall(sig)
	if err != nil {
		return fmt.Errorf("signal %s of %s: %w", process, name, err)
	}
	p.mu.Lock()
	if err := p.loadedLocked(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("signal %s of %s: %w", process, name, err)
	}
	a, err := p.st.actor(name)
	running := err == nil && p.runningLocked(a)
	var pid int
	if running {
		pid = a.PID
	}
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	if !running {
		return fmt.Errorf("signal %s of %s: %w", process, name, provider.ErrActorNotRunning)
	}
	target, err := descendantNamed(pid, process)
	if err != nil {
		return fmt.Errorf("signal %s of %s: %w", process, name, err)
	}
	if err := signalProcess(target, s); err != nil {
		return fmt.Errorf("signal %s of %s: %w", process, name, err)
	}
	return nil
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
