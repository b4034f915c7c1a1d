package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/docker"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/results"
)

// The providers a run can use. ProviderAuto is docker when a Docker daemon
// answers, process otherwise.
const (
	ProviderProcess = "process"
	ProviderDocker  = "docker"
	ProviderAuto    = "auto"
)

// ResolveProvider turns a --provider value into the provider to use: ""
// is process (the library default), auto is docker when a Docker daemon
// answers and process otherwise; for auto it says on log which it chose
// and why.
func ResolveProvider(ctx context.Context, name string, log io.Writer) (string, error) {
	say := func(format string, a ...any) {
		if log != nil {
			fmt.Fprintf(log, "kstep: --provider auto: "+format+"\n", a...)
		}
	}
	switch name {
	case "":
		return ProviderProcess, nil
	case ProviderProcess, ProviderDocker:
		return name, nil
	case ProviderAuto:
		if err := docker.Available(ctx); err != nil {
			say("process (no Docker daemon answers: %v)", err)
			return ProviderProcess, nil
		}
		say("docker (a Docker daemon answers; every actor runs in its own container)")
		return ProviderDocker, nil
	}
	return "", fmt.Errorf("provider %q: want process, docker or auto", name)
}

// newCluster makes the provider opts.Provider names for the profile's
// cluster: state in state, every actor's step events in traces. It returns
// the cluster's shape as a process.Config (real nodes dropped, and said so
// on logf, where this machine cannot run them) and records the node kinds
// in run.
func newCluster(prof *Profile, opts Options, state, traces string, run *results.Run, logf func(string, ...any)) (process.Config, provider.Provider, error) {
	cfg := process.DefaultConfig()
	cfg.Binary, cfg.StateDir, cfg.TraceDir = opts.Binary, state, traces
	cfg.EtcdMembers, cfg.APIServers = prof.Cluster.EtcdMembers, prof.Cluster.APIServers
	cfg.ControllerManagers, cfg.Schedulers = prof.Cluster.ControllerManagers, prof.Cluster.Schedulers
	cfg.HollowNodes = prof.Cluster.Nodes
	cfg.HollowArgs = []string{"--latency-profile=" + prof.Cluster.LatencyProfile}
	cfg.Nodes = prof.Cluster.RealNodes
	cfg.ReadyTimeout = 2 * time.Minute
	cfg.Insecure = prof.Cluster.Insecure
	if err := prof.Cluster.Etcd.Apply(&cfg.Etcd); err != nil {
		return cfg, nil, err
	}
	run.Cluster.EtcdHeartbeatMS = cfg.Etcd.HeartbeatInterval.Milliseconds()
	run.Cluster.EtcdElectionMS = cfg.Etcd.ElectionTimeout.Milliseconds()
	run.Cluster.Security = "TLS; x509 + token authn; RBAC + Node authz"
	if cfg.Insecure || opts.Provider == ProviderDocker {
		run.Cluster.Security = "none (plain HTTP, every caller the admin)"
	}
	realNodes := func() error { return process.CanRunRealNodes(cfg) }
	runtime := "containerd"
	if opts.Provider == ProviderDocker {
		realNodes = func() error { return docker.CanRunRealNodes(filepath.Dir(cfg.Binary)) }
		runtime = "containerd in Docker"
	}
	if err := realNodes(); cfg.Nodes > 0 && err != nil {
		logf("no real nodes in this run: %v", err)
		cfg.Nodes = 0
	}
	if cfg.Nodes > 0 {
		run.Runtime = "containerd+hollow"
		run.Cluster.NodeKind = fmt.Sprintf("%d real (%s) + %d hollow (%s)", cfg.Nodes, runtime, cfg.HollowNodes, prof.Cluster.LatencyProfile)
		run.Cluster.Nodes = cfg.Nodes + cfg.HollowNodes
	}
	if opts.Provider == ProviderDocker {
		dc := docker.ConfigFrom(cfg)
		dc.Log = opts.Log
		p, err := docker.New(dc)
		if err != nil {
			return cfg, nil, err
		}
		return cfg, p, nil
	}
	p, err := process.New(cfg)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, p, nil
}
