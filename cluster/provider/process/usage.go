package process

import (
	"os"
	"syscall"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// addUsage adds an exited process's resource use to its actor's account.
// wait4's rusage covers the process and the descendants it reaped (a node's
// containerd, for instance).
func (p *Provider) addUsage(actor string, ps *os.ProcessState) {
	u := provider.Usage{CPUSeconds: (ps.UserTime() + ps.SystemTime()).Seconds()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		u.PeakRSSBytes = maxRSSBytes(ru)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	acc := p.usage[actor]
	acc.CPUSeconds += u.CPUSeconds
	acc.PeakRSSBytes = max(acc.PeakRSSBytes, u.PeakRSSBytes)
	p.usage[actor] = acc
}

// Usage is what each actor's exited processes consumed, summed over restarts.
func (p *Provider) Usage() map[string]provider.Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]provider.Usage, len(p.usage))
	for k, v := range p.usage {
		out[k] = v
	}
	return out
}
