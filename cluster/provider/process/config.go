package process

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/etcd"
)

// Config configures a process-provider cluster. Start from DefaultConfig.
type Config struct {
	// StateDir holds cluster.json, the kubeconfig, etcd data and logs.
	StateDir string
	// Binary is the kstep binary every actor runs; "" means the running
	// executable.
	Binary string
	// EtcdMembers is the etcd cluster size: 1, 3, 5 or 7. Even sizes are
	// refused: they tolerate no more failures than one member fewer.
	EtcdMembers int
	// APIServers is the number of apiservers; 0 runs etcd alone.
	APIServers int
	// Detach makes actors outlive the process that started them: they run in
	// their own sessions. Otherwise they get SIGKILL when it dies.
	Detach bool
	// ControllerManagers and Schedulers are how many of each run; one leads
	// (a Lease), the others stand by. Each talks to apiserver i mod
	// APIServers through its own kubeconfig.
	ControllerManagers int
	Schedulers         int
	// Nodes is how many real nodes (containerd + runc + CNI + kubelet, each
	// a `kstep node` actor) run. They need root on Linux and the node
	// binaries next to Binary (make node-bins); a registry actor serving
	// registry.kstep.local comes with them.
	Nodes int
	// NodeArgs are extra flags for every `kstep node`.
	NodeArgs []string
	// HollowNodes is how many hollow nodes (kubelets over the in-process
	// simulated runtime) run, in one `kstep hollow-nodes` actor.
	HollowNodes int
	// HollowArgs are extra flags for the hollow-nodes actor (e.g.
	// --latency-profile=realistic).
	HollowArgs []string
	// TraceDir, when set, gets each actor's step events as <actor>.jsonl.
	TraceDir string
	// ControllerManagerArgs and SchedulerArgs are extra flags for those
	// actors, appended after kstep's own.
	ControllerManagerArgs []string
	SchedulerArgs         []string
	// APIServerArgs are extra flags for every `kstep apiserver`
	// (e.g. --watch-flush-interval=0s), appended after kstep's own.
	APIServerArgs []string
	// Etcd tunes every member; zero fields keep `kstep etcd`'s defaults.
	Etcd EtcdTuning
	// EtcdPeerProxy puts a proxy in front of every member's peer port, in
	// the process that runs Up, so Partition can cut a member off (the
	// chaos engine). The cluster then needs that process alive.
	EtcdPeerProxy bool
	// Insecure serves the API over plain HTTP with every caller the admin,
	// as before TLS and RBAC existed (no PKI is created): to measure what
	// authentication and authorization cost.
	Insecure bool
	// Tokens are extra lines of the apiservers' token file (upstream's CSV:
	// token,user,uid,"group1,group2"): users beyond the built-in identities.
	Tokens []string
	// ReadyTimeout bounds how long Up and Start wait for one actor to become
	// ready; 0 means one minute.
	ReadyTimeout time.Duration
	// StopGrace is how long Down waits after SIGTERM before SIGKILL; 0 means
	// ten seconds.
	StopGrace time.Duration
}

// EtcdTuning is passed to every `kstep etcd` as flags of the same names. A
// zero field passes nothing, leaving the member's default.
type EtcdTuning struct {
	HeartbeatInterval       time.Duration // --heartbeat-interval (ms)
	ElectionTimeout         time.Duration // --election-timeout (ms)
	SnapshotCount           uint64        // --snapshot-count
	QuotaBackendBytes       int64         // --quota-backend-bytes
	AutoCompactionMode      string        // --auto-compaction-mode
	AutoCompactionRetention string        // --auto-compaction-retention
	MaxRequestBytes         uint          // --max-request-bytes; apiservers get it too
	LogLevel                string        // --log-level
}

// The Raft timing kstep gives the clusters it starts. etcd's defaults
// (100 ms heartbeat, 1 s election timeout) are sized for members a data
// centre apart; kstep's members share one host or one Docker network, where
// a round trip takes well under a millisecond. etcd's tuning guide asks for
// a heartbeat near the round-trip time and an election timeout of at least
// ten heartbeats; 50 ms and 500 ms keep a wide margin over both and halve
// the time a dead leader stalls writes. A profile or scenario can set
// etcd's own (or any other) timing with its `etcd:` block.
const (
	DefaultEtcdHeartbeat = 50 * time.Millisecond
	DefaultEtcdElection  = 500 * time.Millisecond
)

// DefaultConfig returns a 3-member etcd cluster with 2 apiservers. StateDir
// must still be set.
func DefaultConfig() Config {
	return Config{
		EtcdMembers:        3,
		APIServers:         2,
		ControllerManagers: 2,
		Schedulers:         2,
		Etcd:               EtcdTuning{HeartbeatInterval: DefaultEtcdHeartbeat, ElectionTimeout: DefaultEtcdElection},
		ReadyTimeout:       time.Minute,
		StopGrace:          10 * time.Second,
	}
}

// DefaultTopology fills the zero control-plane counts with DefaultConfig's,
// so bench profiles and chaos scenarios default to the cluster `kstep up`
// starts.
func DefaultTopology(etcdMembers, apiservers, controllerManagers, schedulers *int) {
	d := DefaultConfig()
	for _, f := range []struct {
		n   *int
		def int
	}{
		{etcdMembers, d.EtcdMembers}, {apiservers, d.APIServers},
		{controllerManagers, d.ControllerManagers}, {schedulers, d.Schedulers},
	} {
		if *f.n == 0 {
			*f.n = f.def
		}
	}
}

// EtcdTiming is the `etcd:` block of a bench profile or chaos scenario:
// the members' Raft timing, as durations ("50ms"). A zero field keeps the
// provider's default.
type EtcdTiming struct {
	HeartbeatInterval metav1.Duration `json:"heartbeatInterval,omitzero"`
	ElectionTimeout   metav1.Duration `json:"electionTimeout,omitzero"`
}

// Apply sets t's non-zero fields on tu and checks the result by etcd's
// rules (etcd.ValidateTiming); a field still zero is checked as the
// member's own default, which it then gets.
func (t EtcdTiming) Apply(tu *EtcdTuning) error {
	hb, el := tu.HeartbeatInterval, tu.ElectionTimeout
	if t.HeartbeatInterval.Duration != 0 {
		hb = t.HeartbeatInterval.Duration
	}
	if t.ElectionTimeout.Duration != 0 {
		el = t.ElectionTimeout.Duration
	}
	d := etcd.DefaultConfig()
	chb, cel := cmp.Or(hb, d.HeartbeatInterval), cmp.Or(el, d.ElectionTimeout)
	if err := etcd.ValidateTiming("heartbeatInterval", "electionTimeout", chb, cel); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	tu.HeartbeatInterval, tu.ElectionTimeout = hb, el
	return nil
}

// maxEtcdMembers is etcd's own recommended upper bound.
const maxEtcdMembers = 7

// Validate reports whether c describes a cluster Up can start.
func (c Config) Validate() error {
	if err := c.validateStateDir(); err != nil {
		return err
	}
	tu := c.Etcd
	if err := (EtcdTiming{}).Apply(&tu); err != nil {
		return err
	}
	return c.validateTopology()
}

func (c Config) validateTopology() error {
	switch {
	case c.EtcdMembers < 1 || c.EtcdMembers > maxEtcdMembers:
		return fmt.Errorf("etcd members: %d is out of range: want 1, 3, 5 or 7", c.EtcdMembers)
	case c.EtcdMembers%2 == 0:
		return fmt.Errorf("etcd members: %d is even: an even cluster tolerates no more failures than %d members and needs a larger quorum; use %d or %d",
			c.EtcdMembers, c.EtcdMembers-1, c.EtcdMembers-1, c.EtcdMembers+1)
	case c.APIServers < 0:
		return fmt.Errorf("apiservers: %d is negative", c.APIServers)
	case c.Nodes < 0 || c.Nodes > 200:
		return fmt.Errorf("real nodes: %d is out of range 0-200", c.Nodes)
	case c.Nodes > 0 && c.APIServers == 0:
		return fmt.Errorf("real nodes need an apiserver")
	case c.HollowNodes < 0:
		return fmt.Errorf("hollow nodes: %d is negative", c.HollowNodes)
	case c.HollowNodes > 0 && c.APIServers == 0:
		return fmt.Errorf("hollow nodes need an apiserver")
	case c.ControllerManagers < 0 || c.Schedulers < 0:
		return fmt.Errorf("controller-managers (%d) and schedulers (%d) must not be negative", c.ControllerManagers, c.Schedulers)
	case c.EtcdPeerProxy && c.Detach:
		return fmt.Errorf("etcd peer proxies live in the process that runs Up: a detached cluster would lose them when it exits")
	case c.APIServers == 0 && c.ControllerManagers+c.Schedulers > 0:
		return fmt.Errorf("controller-managers and schedulers need an apiserver: set apiservers ≥ 1 or run them with 0")
	}
	return nil
}

func (c Config) validateStateDir() error {
	if c.StateDir == "" {
		return errors.New("state dir is empty")
	}
	return nil
}

// args renders the tuning as `kstep etcd` flags.
func (t EtcdTuning) args() []string {
	var a []string
	if t.HeartbeatInterval != 0 {
		a = append(a, "--heartbeat-interval="+strconv.FormatInt(t.HeartbeatInterval.Milliseconds(), 10))
	}
	if t.ElectionTimeout != 0 {
		a = append(a, "--election-timeout="+strconv.FormatInt(t.ElectionTimeout.Milliseconds(), 10))
	}
	if t.SnapshotCount != 0 {
		a = append(a, "--snapshot-count="+strconv.FormatUint(t.SnapshotCount, 10))
	}
	if t.QuotaBackendBytes != 0 {
		a = append(a, "--quota-backend-bytes="+strconv.FormatInt(t.QuotaBackendBytes, 10))
	}
	if t.AutoCompactionMode != "" {
		a = append(a, "--auto-compaction-mode="+t.AutoCompactionMode)
	}
	if t.AutoCompactionRetention != "" {
		a = append(a, "--auto-compaction-retention="+t.AutoCompactionRetention)
	}
	if t.MaxRequestBytes != 0 {
		a = append(a, "--max-request-bytes="+strconv.FormatUint(uint64(t.MaxRequestBytes), 10))
	}
	if t.LogLevel != "" {
		a = append(a, "--log-level="+t.LogLevel)
	}
	return a
}

// peerProxyPorts is how many extra ports the etcd peer proxies take.
func (c Config) peerProxyPorts() int {
	if c.EtcdPeerProxy {
		return c.EtcdMembers
	}
	return 0
}

// etcdPorts names a member's ports; "peer-proxy" is where peers reach it
// when the peer proxies run.
func (c Config) etcdPorts(client, peer, advertised int) map[string]int {
	m := map[string]int{"client": client, "peer": peer}
	if c.EtcdPeerProxy {
		m["peer-proxy"] = advertised
	}
	return m
}
