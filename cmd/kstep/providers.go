package main

import (
	"context"
	"io"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/docker"
	"github.com/kstep-dev/kstep/cluster/provider/process"
)

// cluster is what up and down need of a provider: both implementations
// record their cluster in a state directory and can purge it.
type cluster interface {
	provider.Provider
	StateDir() string
	Purge() error
}

var (
	_ cluster = (*process.Provider)(nil)
	_ cluster = (*docker.Provider)(nil)
)

// providerFlagUsage documents --provider for up and bench.
const providerFlagUsage = `where the actors run: "process" (child processes on 127.0.0.1), "docker" (a container each, on a private Docker network) or "auto" (docker when a Docker daemon answers)`

// newCluster makes the named provider (process, docker or auto) for the
// cluster cfg describes; log gets auto's choice and the docker provider's
// notes.
func newCluster(ctx context.Context, name string, cfg process.Config, log io.Writer) (cluster, string, error) {
	name, err := bench.ResolveProvider(ctx, name, log)
	if err != nil {
		return nil, "", err
	}
	if name == bench.ProviderDocker {
		dc := docker.ConfigFrom(cfg)
		dc.Log = log
		p, err := docker.New(dc)
		if err != nil {
			return nil, "", err
		}
		return p, name, nil
	}
	p, err := process.New(cfg)
	if err != nil {
		return nil, "", err
	}
	return p, name, nil
}

// existingCluster is the provider of the cluster recorded in stateDir: docker
// when the docker provider recorded it, process otherwise.
func existingCluster(cfg process.Config) (cluster, error) {
	if docker.HasCluster(cfg.StateDir) {
		return docker.New(docker.ConfigFrom(cfg))
	}
	return process.New(cfg)
}

// providerNote is what up prints about where the actors run.
func providerNote(name string) string {
	if name == bench.ProviderDocker {
		return "in containers (docker ps --filter label=dev.kstep.managed)"
	}
	return "as child processes"
}
