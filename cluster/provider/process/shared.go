package process

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// This file exports what another provider (cluster/provider/docker) runs
// the same way: each actor's command line, the kubeconfigs, port
// reservation and the readiness wait. Only the addresses differ between
// providers, so they are parameters here.

// Args renders the tuning as `kstep etcd` flags.
func (t EtcdTuning) Args() []string { return t.args() }

// EtcdMember is where one etcd member listens and what it advertises.
type EtcdMember struct {
	Name, DataDir string
	// ListenClient and ListenPeer are the URLs it binds; AdvertiseClient
	// and AdvertisePeer the URLs its peers and clients use.
	ListenClient, AdvertiseClient string
	ListenPeer, AdvertisePeer     string
	// InitialCluster is every member's name=peerURL.
	InitialCluster []string
}

// EtcdArgv is the argv (after the binary) of `kstep etcd` for m.
func (c Config) EtcdArgv(m EtcdMember) []string {
	args := []string{
		"etcd",
		"--name=" + m.Name,
		"--data-dir=" + m.DataDir,
		"--listen-client-urls=" + m.ListenClient,
		"--advertise-client-urls=" + m.AdvertiseClient,
		"--listen-peer-urls=" + m.ListenPeer,
		"--initial-advertise-peer-urls=" + m.AdvertisePeer,
		"--initial-cluster=" + strings.Join(m.InitialCluster, ","),
		"--initial-cluster-state=new",
	}
	return append(args, c.Etcd.args()...)
}

// traceArg is the --trace-file flag for actor, nil without a TraceDir.
func (c Config) traceArg(prefix, actor string) []string {
	if c.TraceDir == "" {
		return nil
	}
	return []string{prefix + "--trace-file=" + filepath.Join(c.TraceDir, actor+".jsonl")}
}

// APIServerArgv is the argv of `kstep apiserver` named name, listening on
// listen (host:port) and using etcdServers. security (TLS and
// authentication flags) comes before the configured APIServerArgs, so those
// can override it.
func (c Config) APIServerArgv(name, listen string, etcdServers []string, security ...string) []string {
	args := []string{
		"apiserver",
		"--name=" + name,
		"--listen=" + listen,
		"--etcd-servers=" + strings.Join(etcdServers, ","),
	}
	args = append(args, security...)
	// The apiserver must refuse what etcd would refuse, before etcd.
	if b := c.Etcd.MaxRequestBytes; b != 0 {
		args = append(args, "--max-request-bytes="+strconv.FormatUint(uint64(b), 10))
	}
	args = append(args, c.traceArg("", name)...)
	return append(args, c.APIServerArgs...)
}

// LeaderElectedArgv is the argv of a controller-manager or scheduler.
func (c Config) LeaderElectedArgv(role provider.Role, name, kubeconfig, metricsListen string) []string {
	args := []string{
		string(role),
		"--name=" + name,
		"--kubeconfig=" + kubeconfig,
		"--metrics-listen=" + metricsListen,
	}
	args = append(args, c.traceArg("", name)...)
	switch role {
	case provider.RoleControllerManager:
		args = append(args, c.ControllerManagerArgs...)
	case provider.RoleScheduler:
		args = append(args, c.SchedulerArgs...)
	}
	return args
}

// RegistryArgv is the argv of the registry actor.
func RegistryArgv(listen, binDir string) []string {
	return []string{"registry", "--listen=" + listen, "--bin-dir=" + binDir}
}

// RealNode is one `kstep node` actor's place.
type RealNode struct {
	Name string
	// Index is the node's --index (its pod subnet 10.88.<Index>.0/24).
	Index                                                   int
	Dir, BinDir, Registry, Kubeconfig, KubeletMetricsListen string
}

// NodeArgv is the argv of `kstep node` for n.
func (c Config) NodeArgv(n RealNode) []string {
	args := []string{"node", "--name=" + n.Name, "--index=" + strconv.Itoa(n.Index),
		"--dir=" + n.Dir, "--bin-dir=" + n.BinDir,
		"--registry=" + n.Registry, "--kubeconfig=" + n.Kubeconfig,
		"--kubelet-arg=--metrics-listen=" + n.KubeletMetricsListen}
	args = append(args, c.traceArg("--kubelet-arg=", n.Name)...)
	return append(args, c.NodeArgs...)
}

// HollowNodesArgv is the argv of the hollow-nodes actor; security (the
// nodes' token file) comes before the configured HollowArgs.
func (c Config) HollowNodesArgv(kubeconfig, metricsListen string, security ...string) []string {
	name := string(provider.RoleHollowNodes)
	args := []string{name, "--count=" + strconv.Itoa(c.HollowNodes), "--kubeconfig=" + kubeconfig,
		"--metrics-listen=" + metricsListen}
	args = append(args, security...)
	args = append(args, c.traceArg("", name)...)
	return append(args, c.HollowArgs...)
}

// ValidateTopology checks the cluster's shape alone (not StateDir).
func (c Config) ValidateTopology() error { return c.validateTopology() }

// FreePorts returns n distinct free TCP ports on 127.0.0.1 (see freePorts).
func FreePorts(n int) ([]int, error) { return freePorts(n) }

// AdminKubeconfig is the kubeconfig with one cluster and context per
// apiserver ("kstep" is the first, current), each at its Endpoint, with
// no credentials (an apiserver without TLS).
func AdminKubeconfig(apiservers []provider.Actor) *clientcmdapi.Config {
	st := make([]actorState, len(apiservers))
	for i, a := range apiservers {
		st[i].Actor = a
	}
	return kubeconfigFor(st, credentials{})
}

// ActorKubeconfig is one actor's kubeconfig: its own user on apiserver,
// with no credentials.
func ActorKubeconfig(actor string, apiserver provider.Actor) *clientcmdapi.Config {
	return actorKubeconfig(actor, actorState{Actor: apiserver}, credentials{})
}

// WaitReady polls readyURL until it answers 200, like Up does for a process
// actor. exited reports whether the actor is gone (and why); errors carry
// the tail of the actor's log (a.LogPath).
func WaitReady(ctx context.Context, a provider.Actor, readyURL string, timeout time.Duration, exited func() (bool, error)) error {
	return waitReady(ctx, actorState{Actor: a, ReadyURL: readyURL}, timeout, exited)
}

// LogTail is the end of the log at path, formatted to follow an error.
func LogTail(path string) string { return logTail(path) }

// ProcessAlive reports whether pid is a live process: it exists and (where
// the OS shows it) is not a zombie.
func ProcessAlive(pid int) bool { return processAlive(procRef{PID: pid}) }
