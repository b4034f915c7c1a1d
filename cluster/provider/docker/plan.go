package docker

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
)

// The ports actors listen on inside their containers. Every container has
// its own network namespace, so they are fixed; the host reaches each
// actor's main port through the port published for it.
const (
	etcdClientPort = 2379
	etcdPeerPort   = 2380
	apiserverPort  = 6443
	metricsPort    = 10257 // controller-managers, schedulers, hollow nodes
	registryPort   = 5000
	kubeletPort    = 10250 // a node's kubelet /healthz and /metrics
)

// Directories inside the containers that live on the actor's volume.
const (
	etcdVolumeDir = "/var/lib/kstep/etcd"
	nodeVolumeDir = "/var/lib/kstep/node"
)

// actorCount is how many actors (and so published ports) cfg has.
func actorCount(c Config) int {
	n := c.EtcdMembers + c.APIServers + c.ControllerManagers + c.Schedulers
	if c.HollowNodes > 0 {
		n++
	}
	if c.Nodes > 0 {
		n += 1 + c.Nodes // the registry
	}
	return n
}

// plan lays the cluster's actors out: their containers, aliases, argv
// (the process provider's, with container addresses), volumes, and one
// published host port each, from hostPorts in order.
func plan(c Config, id string, images map[string]string, hostPorts []int) []actorState {
	shape := c.shape()
	dir := c.StateDir
	url := func(host string, port int) string { return "http://" + host + ":" + strconv.Itoa(port) }
	listen := func(port int) string { return "0.0.0.0:" + strconv.Itoa(port) }
	next := 0
	add := func(out []actorState, name string, role provider.Role, image string, port int, readyPath string, args []string) []actorState {
		hp := hostPorts[next]
		next++
		return append(out, actorState{
			Actor: provider.Actor{Name: name, Role: role, Endpoint: url("127.0.0.1", hp),
				LogPath: filepath.Join(dir, "logs", name+".log")},
			Container: containerName(id, name), Alias: name, Image: image, Args: args,
			Port: port, HostPort: hp, ReadyURL: url("127.0.0.1", hp) + readyPath,
		})
	}
	kubeconfig := func(name string) string { return filepath.Join(dir, "kubeconfigs", name+".kubeconfig") }
	cp := images[controlPlaneImage.kind]

	var initial, etcdServers []string
	for i := range c.EtcdMembers {
		name := fmt.Sprintf("etcd-%d", i)
		initial = append(initial, name+"="+url(name, etcdPeerPort))
		etcdServers = append(etcdServers, url(name, etcdClientPort))
	}
	var actors []actorState
	for i := range c.EtcdMembers {
		name := fmt.Sprintf("etcd-%d", i)
		args := shape.EtcdArgv(process.EtcdMember{
			Name: name, DataDir: etcdVolumeDir + "/data",
			ListenClient: url("0.0.0.0", etcdClientPort), AdvertiseClient: url(name, etcdClientPort),
			ListenPeer: url("0.0.0.0", etcdPeerPort), AdvertisePeer: url(name, etcdPeerPort),
			InitialCluster: initial,
		})
		actors = add(actors, name, provider.RoleEtcd, cp, etcdClientPort, "/health", args)
		a := &actors[len(actors)-1]
		a.Volume, a.VolumeDir = containerName(id, name), etcdVolumeDir
	}
	for i := range c.APIServers {
		name := fmt.Sprintf("apiserver-%d", i)
		actors = add(actors, name, provider.RoleAPIServer, cp, apiserverPort, "/readyz",
			shape.APIServerArgv(name, listen(apiserverPort), etcdServers))
	}
	for _, role := range []provider.Role{provider.RoleControllerManager, provider.RoleScheduler} {
		count := c.ControllerManagers
		if role == provider.RoleScheduler {
			count = c.Schedulers
		}
		for i := range count {
			name := fmt.Sprintf("%s-%d", role, i)
			actors = add(actors, name, role, cp, metricsPort, "/healthz",
				shape.LeaderElectedArgv(role, name, kubeconfig(name), listen(metricsPort)))
			actors[len(actors)-1].Kubeconfig = kubeconfig(name)
		}
	}
	if c.HollowNodes > 0 {
		name := string(provider.RoleHollowNodes)
		actors = add(actors, name, provider.RoleHollowNodes, cp, metricsPort, "/healthz",
			shape.HollowNodesArgv(kubeconfig(name), listen(metricsPort)))
		actors[len(actors)-1].Kubeconfig = kubeconfig(name)
	}
	if c.Nodes > 0 {
		name := string(provider.RoleRegistry)
		actors = add(actors, name, provider.RoleRegistry, cp, registryPort, "/healthz",
			process.RegistryArgv(listen(registryPort), binDir))
		for i := range c.Nodes {
			name := fmt.Sprintf("node-%d", i)
			args := shape.NodeArgv(process.RealNode{Name: name, Index: i + 1, Dir: nodeVolumeDir, BinDir: binDir,
				Registry: string(provider.RoleRegistry) + ":" + strconv.Itoa(registryPort), Kubeconfig: kubeconfig(name),
				KubeletMetricsListen: listen(kubeletPort)})
			// containerd's own output beside the actors' logs (a directory
			// of its own: logs/*.log is one file per actor).
			args = append(args, "--containerd-log="+filepath.Join(dir, "logs", "containerd", name+".log"),
				"--kubelet-arg=--cgroup-parent="+cgroupParent(id, name))
			actors = add(actors, name, provider.RoleNode, images[nodeImage.kind], kubeletPort, "/healthz", args)
			a := &actors[len(actors)-1]
			a.Kubeconfig = kubeconfig(name)
			a.Volume, a.VolumeDir = containerName(id, name), nodeVolumeDir
		}
	}
	return actors
}

// containerName is the Docker name of an actor's container (and volume).
func containerName(id, actor string) string { return "kstep-" + id + "-" + actor }
