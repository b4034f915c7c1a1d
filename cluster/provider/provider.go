package provider

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Role is what an actor is in the system under test.
type Role string

// The roles of the actors a provider runs.
const (
	RoleEtcd              Role = "etcd"
	RoleAPIServer         Role = "apiserver"
	RoleControllerManager Role = "controller-manager"
	RoleScheduler         Role = "scheduler"
	RoleHollowNodes       Role = "hollow-nodes"
	RoleRegistry          Role = "registry"
	RoleNode              Role = "node"
)

// Actor is one process of a running cluster as a provider sees it.
type Actor struct {
	// Name is unique in the cluster, e.g. "etcd-0" or "apiserver-1".
	Name string `json:"name"`
	// Role is what the actor is.
	Role Role `json:"role"`
	// Endpoint is the URL clients reach the actor on: an etcd member's client
	// URL, an apiserver's base URL.
	Endpoint string `json:"endpoint"`
	// PID is the actor's process ID, 0 when it is not running.
	PID int `json:"pid"`
	// LogPath is the file the actor's stdout and stderr go to.
	LogPath string `json:"log"`
	// MetricsURL, when set, is where the actor's /metrics is read apart
	// from Endpoint, plain and without credentials: an etcd member's
	// metrics URL (its client URL takes only etcd's certificates).
	MetricsURL string `json:"metrics,omitempty"`
	// APIServer is the apiserver an apiserver client talks to ("" for
	// the others): the harness measures its watch latency from that
	// apiserver's watch-cache stamps.
	APIServer string `json:"apiserver,omitempty"`
}

// Running reports whether the actor has a live process.
func (a Actor) Running() bool { return a.PID != 0 }

// Errors providers wrap so callers can tell the cases apart with errors.Is.
var (
	// ErrUnknownActor: no actor has the given name.
	ErrUnknownActor = errors.New("unknown actor")
	// ErrActorRunning: Start was asked for an actor that is already running.
	ErrActorRunning = errors.New("actor is running")
	// ErrActorNotRunning: Stop was asked for an actor that is not running.
	ErrActorNotRunning = errors.New("actor is not running")
	// ErrClusterRunning: Up found a cluster that is still alive.
	ErrClusterRunning = errors.New("cluster is running")
	// ErrNoCluster: the provider has no cluster to act on.
	ErrNoCluster = errors.New("no cluster")
	// ErrUnsupported: the provider cannot do this to this actor (e.g. a
	// network partition of an actor whose traffic it does not control).
	ErrUnsupported = errors.New("not supported by this provider")
)

// Scope is what a partition cuts.
type Scope string

const (
	// ScopePeers cuts an etcd member off from its peers (both directions,
	// every connection), while its clients (the apiservers) still reach it:
	// a network split between etcd hosts. Needs Topology.LinkProxies.
	ScopePeers Scope = "peers"
	// ScopeAll takes the whole actor off the cluster's network: it reaches
	// nothing and nothing reaches it.
	ScopeAll Scope = "all"
)

// Provider runs a cluster somewhere: child processes, containers, or a
// cluster someone else runs. Its shape follows kwok's Runtime. Every
// provider materialises the same Plan; the harness (bench, chaos, load)
// reaches a cluster through this interface alone.
//
// Every blocking method takes a context and returns when the work is done or
// the context ends. Implementations are safe for concurrent use.
type Provider interface {
	// Name is the provider's registered name ("process", "docker",
	// "external").
	Name() string
	// StateDir is the absolute path of the cluster's state directory.
	StateDir() string
	// Up starts every actor and returns once all of them are ready to serve.
	// If it fails, it stops what it started.
	Up(ctx context.Context) error
	// Down stops every actor (Shutdown's order), gracefully first and
	// forcibly after a grace period, and forgets the cluster.
	Down(ctx context.Context) error
	// Purge deletes what clusters left in the state directory; it refuses
	// while a recorded cluster is alive.
	Purge() error
	// Start starts a stopped actor again with the same configuration, on the
	// same addresses and the same data, and returns once it is ready.
	Start(ctx context.Context, actor string) error
	// Stop sends sig to the actor. For SIGKILL and SIGTERM it also waits for
	// the actor to exit; SIGSTOP and SIGCONT pause and resume it. A real
	// node that is SIGKILLed goes as a machine does: its pods with it.
	Stop(ctx context.Context, actor string, sig os.Signal) error
	// Pause freezes every process of the actor (SIGSTOP, docker pause) and
	// returns once it is frozen; Unpause thaws it.
	Pause(ctx context.Context, actor string) error
	Unpause(ctx context.Context, actor string) error
	// Signal sends sig to the process named process (its command name)
	// inside the actor, e.g. a real node's containerd or kubelet; the
	// actor's own supervisor restarts what it kills.
	Signal(ctx context.Context, actor, process string, sig os.Signal) error
	// Partition cuts the actor off, as scope says, until Heal. Providers
	// return ErrUnsupported, with the reason, for what they cannot cut.
	Partition(ctx context.Context, actor string, scope Scope) error
	Heal(ctx context.Context, actor string) error
	// Logs is the actor's stdout and stderr so far.
	Logs(ctx context.Context, actor string) (io.ReadCloser, error)
	// Actors lists the cluster's actors in plan order: etcd members first,
	// then apiservers, each by index. Endpoint is where each is reached from
	// the host.
	Actors() []Actor
	// Kubeconfig is the path of the host's kubeconfig for the cluster, ""
	// if it has no apiserver.
	Kubeconfig() string
	// Usage is what each actor's processes consumed so far, summed over
	// restarts: every life that ended and, for a running actor, its
	// current life up to now, so that two calls bracket a window (the load
	// of a bench run). Peak memory is of the lives that ended.
	Usage(ctx context.Context) map[string]Usage
}

// Usage is what an actor's processes consumed: CPU (user + system, the actor
// and every child it reaped) and the largest resident set any of them had.
type Usage struct {
	CPUSeconds   float64 `json:"cpu_s"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
}

// ProgramIs reports whether argv runs the program name: argv[0]'s base
// name, or the kstep subcommand (argv[1] of a kstep), so that "containerd"
// and "kubelet" both name a real node's processes (Provider.Signal).
func ProgramIs(argv []string, name string) bool {
	if len(argv) == 0 {
		return false
	}
	base := filepath.Base(argv[0])
	return base == name || (base == "kstep" && len(argv) > 1 && argv[1] == name)
}

// Accounts sum each actor's Usage over its lives (restarts): CPU adds up,
// the peak is the largest. Both providers keep their figures in one. The
// zero value is ready; it is safe for concurrent use.
type Accounts struct {
	mu sync.Mutex
	m  map[string]Usage
}

// Add counts one life of the actor.
func (a *Accounts) Add(actor string, u Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]Usage{}
	}
	acc := a.m[actor]
	acc.CPUSeconds += u.CPUSeconds
	acc.PeakRSSBytes = max(acc.PeakRSSBytes, u.PeakRSSBytes)
	a.m[actor] = acc
}

// Usage is a copy of every actor's account.
func (a *Accounts) Usage() map[string]Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]Usage, len(a.m))
	for k, v := range a.m {
		out[k] = v
	}
	return out
}
