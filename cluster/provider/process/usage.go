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
	p.usage.Add(actor, u)
}

// Usage is what each actor's exited processes consumed, summed over restarts.
func (p *Provider) Usage() map[string]provider.Usage { return p.usage.Usage() }
