package main

import (
	"github.com/kstep-dev/kstep/cluster/provider"
	// The providers register themselves (provider.Register); the harness
	// reaches them through cluster/provider alone.
	_ "github.com/kstep-dev/kstep/cluster/provider/docker"
	_ "github.com/kstep-dev/kstep/cluster/provider/external"
	_ "github.com/kstep-dev/kstep/cluster/provider/process"
)

// providerFlagUsage documents --provider for up, bench and chaos.
const providerFlagUsage = `where the actors run: "process" (child processes on 127.0.0.1), "docker" (a container each, on a private Docker network) or "auto" (docker when a Docker daemon answers, else process; it says which it chose)`

// providerNote is what up prints about where the actors run.
func providerNote(name string) string {
	if name == provider.Docker {
		return "in containers (docker ps --filter label=dev.kstep.managed)"
	}
	return "as child processes"
}
