package docker

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// The ports actors listen on inside their containers. Every container has
// its own network namespace, so they are fixed; the host reaches each
// actor's main port (Component.Serve) through the port published for it.
var containerPorts = map[string]int{
	provider.PortClient:      2379,
	provider.PortPeer:        2380,
	provider.PortPeerProxy:   2381,
	provider.PortClientProxy: 2382,
	provider.PortAPI:         6443,
	provider.PortAPIProxy:    6444,
	provider.PortMetrics:     10257, // controller-managers, schedulers, hollow nodes; a secure cluster's etcd members
	provider.PortRegistry:    5000,
	provider.PortKubelet:     10248, // a node's kubelet /healthz and /metrics
	// The kubelets' HTTPS server (logs, exec, stats), of real nodes and of
	// the hollow-nodes actor alike, as upstream's.
	provider.PortKubeletServer: 10250,
}

// Directories inside the containers that live on the actor's volume.
const (
	etcdVolumeDir = "/var/lib/kstep/etcd"
	nodeVolumeDir = "/var/lib/kstep/node"
)

// addressing places the plan in containers: every actor reached by its
// name on the cluster's network, on the fixed ports, its data on a volume;
// the state and trace directories are bind-mounted at the host's paths.
func addressing(spec provider.Spec, id string) provider.Addressing {
	return provider.Addressing{
		Port:       func(_, use string) int { return containerPorts[use] },
		Host:       func(name string) string { return name },
		ListenHost: "0.0.0.0",
		DataDir: func(name string) string {
			if len(name) > 5 && name[:5] == "etcd-" {
				return etcdVolumeDir
			}
			return nodeVolumeDir
		},
		StateDir: spec.StateDir, TraceDir: spec.TraceDir, BinDir: binDir,
		NodeArgs: func(name string) []string {
			// containerd's own output beside the actors' logs (a directory
			// of its own: logs/*.log is one file per actor), and the pods'
			// cgroups in a tree of the cluster's own.
			return []string{"--containerd-log=" + filepath.Join(spec.StateDir, "logs", "containerd", name+".log"),
				"--kubelet-arg=--cgroup-parent=" + cgroupParent(id, name)}
		},
	}
}

// plan is provider.Plan in containers, with one published host port each,
// from hostPorts in order, then one more for each actor with a metrics
// port of its own (Component.Metrics: a secure cluster's etcd members),
// which is where the host probes its readiness and reads its metrics.
func plan(spec provider.Spec, id string, images map[string]string, hostPorts []int) []actorState {
	comps := provider.Plan(spec.Topology, addressing(spec, id))
	out := make([]actorState, 0, len(comps))
	extra := len(comps)
	for i, c := range comps {
		hp := hostPorts[i]
		ep := c.Scheme + "://127.0.0.1:" + strconv.Itoa(hp)
		ready, metrics, metricsPort, metricsHostPort := ep, "", 0, 0
		if c.Metrics != "" {
			metricsPort, metricsHostPort = c.Ports[c.Metrics], hostPorts[extra]
			extra++
			metrics = "http://127.0.0.1:" + strconv.Itoa(metricsHostPort)
			ready = metrics
		}
		image := images[controlPlaneImage.kind]
		if c.Role == provider.RoleNode {
			image = images[nodeImage.kind]
		}
		a := actorState{
			Actor: provider.Actor{Name: c.Name, Role: c.Role, Endpoint: ep, MetricsURL: metrics,
				LogPath: provider.LogPath(spec.StateDir, c.Name), APIServer: c.APIServer},
			Component: c,
			Container: containerName(id, c.Name), Alias: c.Name, Image: image,
			Port: c.Ports[c.Serve], HostPort: hp, MetricsPort: metricsPort, MetricsHostPort: metricsHostPort,
			ReadyURL: ready + c.ReadyPath,
		}
		if c.DataDir != "" {
			a.Volume, a.VolumeDir = containerName(id, c.Name), c.DataDir
		}
		out = append(out, a)
	}
	return out
}

// planSize is how many ports spec's actors publish.
func planSize(spec provider.Spec) int {
	n := 0
	for _, c := range provider.Plan(spec.Topology, addressing(spec, "")) {
		n++
		if c.Metrics != "" {
			n++
		}
	}
	return n
}

// containerName is the Docker name of an actor's container (and volume).
func containerName(id, actor string) string { return "kstep-" + id + "-" + actor }

// serverURL is how containers reach an apiserver: by its name, on its
// link's port when the cluster has link proxies.
func serverURL(secure, links bool) func(string) string {
	scheme := "https"
	if !secure {
		scheme = "http"
	}
	port := containerPorts[provider.PortAPI]
	if links {
		port = containerPorts[provider.PortAPIProxy]
	}
	return func(name string) string {
		return fmt.Sprintf("%s://%s:%d", scheme, name, port)
	}
}
