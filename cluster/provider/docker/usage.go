package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// Usage is what each actor's containers consumed so far, summed over
// restarts: CPU time and the peak memory of the container's cgroup, as the
// Docker API reports them (cpu_stats.cpu_usage.total_usage,
// memory_stats.max_usage). Every stop Stop and Down make samples the
// container first, so each sample is one life of the actor (a container
// restarts with fresh cgroup counters); a running container's current life
// is read at the call and counted in its CPU. An actor that died on its own
// (not through the provider) loses its last life's figures; a node's pods
// run in cgroups of their own (cgroupParent) and are not counted in the
// node's.
func (p *Provider) Usage(ctx context.Context) map[string]provider.Usage {
	out := p.usage.Usage()
	st, err := p.recorded()
	if err != nil {
		return out
	}
	cli, err := p.client(ctx)
	if err != nil {
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range st.Actors {
		wg.Go(func() {
			if s, err := p.containerState(ctx, cli, a); err != nil || !s.Running {
				return
			}
			u, err := p.containerUsage(ctx, cli, a)
			if err != nil {
				return
			}
			mu.Lock()
			acc := out[a.Name]
			acc.CPUSeconds += u.CPUSeconds
			out[a.Name] = acc
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// sampleUsage adds a's container's current counters to its account.
func (p *Provider) sampleUsage(ctx context.Context, cli client.APIClient, a actorState) {
	u, err := p.containerUsage(ctx, cli, a)
	if err != nil {
		p.logf("usage of %s not sampled: %v", a.Name, err)
		return
	}
	p.usage.Add(a.Name, u)
}

// containerUsage is a's container's counters for its current life.
func (p *Provider) containerUsage(ctx context.Context, cli client.APIClient, a actorState) (provider.Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := cli.ContainerStats(ctx, a.Container, client.ContainerStatsOptions{})
	if err != nil {
		return provider.Usage{}, err
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return provider.Usage{}, err
	}
	mem := int64(st.MemoryStats.MaxUsage)
	if mem == 0 {
		mem = int64(st.MemoryStats.Usage) // cgroup v2 keeps no maximum here
	}
	return provider.Usage{CPUSeconds: float64(st.CPUStats.CPUUsage.TotalUsage) / 1e9, PeakRSSBytes: mem}, nil
}

// terminates reports whether Stop waits for the container to stop after
// sig.
func terminates(sig syscall.Signal) bool {
	return sig == syscall.SIGKILL || sig == syscall.SIGTERM || sig == syscall.SIGINT
}

// Signal sends sig to the process named process inside the actor's
// container (a node's containerd or kubelet): `kstep signal`, run in the
// container with docker exec, finds it in the container's own /proc, so
// nothing depends on the daemon sharing this host's process IDs.
func (p *Provider) Signal(ctx context.Context, name, process string, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok || s == 0 {
		return fmt.Errorf("signal %s of %s: %v is not a process signal", process, name, sig)
	}
	a, cli, err := p.lookup(ctx, "signal", name)
	if err != nil {
		return err
	}
	if st, err := p.containerState(ctx, cli, a); err != nil || !st.Running {
		return fmt.Errorf("signal %s of %s: %w", process, name, provider.ErrActorNotRunning)
	}
	ex, err := cli.ExecCreate(ctx, a.Container, client.ExecCreateOptions{
		Cmd:          []string{binDir + "/kstep", "signal", "--program=" + process, "--signal=" + strconv.Itoa(int(s))},
		AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return fmt.Errorf("signal %s of %s: exec: %w", process, name, err)
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("signal %s of %s: exec: %w", process, name, err)
	}
	out, _ := io.ReadAll(io.LimitReader(att.Reader, 64<<10))
	att.Close()
	ins, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return fmt.Errorf("signal %s of %s: exec: %w", process, name, err)
	}
	if ins.ExitCode != 0 {
		return fmt.Errorf("signal %s of %s: exit %d: %s", process, name, ins.ExitCode, strings.TrimSpace(string(out)))
	}
	return nil
}
