package process

import (
	"context"
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

// Usage is what each actor's processes consumed so far: every exited life
// (wait4's rusage) plus, for an actor that is running, its process group's
// CPU time to now, from /proc (every live process of the group, and what
// they reaped). Where /proc is not there, a running life is not counted
// until it exits. A life that ends between the two readings may be
// counted in neither for the one call.
func (p *Provider) Usage(ctx context.Context) map[string]provider.Usage {
	out := p.usage.Usage()
	groups, err := cpuByGroup()
	if err != nil || ctx.Err() != nil {
		return out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == nil {
		return out
	}
	for i := range p.st.Actors {
		a := &p.st.Actors[i]
		if cpu, ok := groups[a.PID]; ok && p.runningLocked(a) {
			u := out[a.Name]
			u.CPUSeconds += cpu
			out[a.Name] = u
		}
	}
	return out
}
