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

// Partition is not supported by the process provider yet: every actor shares
// the host's loopback.
func (p *Provider) Partition(_ context.Context, name string) error {
	return fmt.Errorf("partition %s: %w", name, provider.ErrUnsupported)
}

// Heal undoes Partition.
func (p *Provider) Heal(_ context.Context, name string) error {
	return fmt.Errorf("heal %s: %w", name, provider.ErrUnsupported)
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
