package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// Topology is the shape of a kstep cluster: how many of each actor run, and
// how. It is the one description of a cluster: `kstep up`'s flags, a bench
// profile's and a chaos scenario's `cluster:` block and run.json's
// `cluster.topology` are all a Topology, with these keys.
//
// Real nodes and hollow nodes are counted apart, always: RealNodes are
// containerd + runc + CNI + a kubelet each (`kstep node`), HollowNodes are
// kubelets over the simulated runtime, all in one `kstep hollow-nodes`
// actor. The key "nodes", which meant hollow nodes in bench profiles and
// real nodes in `kstep up`, is refused with the new names.
type Topology struct {
	// EtcdMembers is the etcd cluster size: 1, 3, 5 or 7.
	EtcdMembers int `json:"etcdMembers"`
	// APIServers is the number of apiservers; 0 runs etcd alone.
	APIServers int `json:"apiservers"`
	// ControllerManagers and Schedulers: one of each leads (a Lease), the
	// others stand by.
	ControllerManagers int `json:"controllerManagers"`
	Schedulers         int `json:"schedulers"`
	// RealNodes run containerd + runc + CNI + a kubelet each; a registry
	// actor serving registry.kstep.local comes with them.
	RealNodes int `json:"realNodes"`
	// HollowNodes are kubelets over the simulated runtime.
	HollowNodes int `json:"hollowNodes"`
	// LatencyProfile is the hollow runtime's behaviour: zero, realistic,
	// flaky or a file (cluster/kubelet/simruntime); "" is the actor's
	// default (zero).
	LatencyProfile string `json:"latencyProfile,omitempty"`
	// HollowEvents says whether the hollow kubelets write core/v1 Events
	// as real kubelets do (Pulling, Pulled, Created, Started, Killing,
	// Unhealthy, BackOff, Failed): nil or true, they do (hollow-nodes
	// --events=true); false, they write none, for runs that measure the
	// control plane's own throughput. An --events flag in HollowArgs wins
	// (HollowEventsOn). A run.json written before the field existed has
	// none: its hollow nodes wrote no Events unless their args said so
	// (results.ReadRun fills it in).
	HollowEvents *bool `json:"hollowEvents,omitempty"`
	// Etcd tunes every member; zero fields keep the member's defaults, and
	// Defaults sets kstep's Raft timing.
	Etcd EtcdTuning `json:"etcd,omitzero"`
	// Insecure serves the API over plain HTTP with every caller the admin
	// (no PKI): to measure what authentication and authorization cost.
	// Otherwise the apiservers serve TLS, authenticate x509 client
	// certificates and tokens and authorize with Node + RBAC, on every
	// provider.
	Insecure bool `json:"insecure,omitempty"`
	// ActorProcs is every actor process's GOMAXPROCS (each gets
	// --gomaxprocs). Go sizes a process for the whole machine, but kstep's
	// actors share one: with Go's default each of ten processes on a
	// 2-core host ran two Ps, and every handoff between goroutines woke
	// another thread of the same process (a futex and a context switch,
	// costly on a virtual machine). Defaults sets DefaultActorProcs when
	// it is 0.
	ActorProcs int `json:"actorProcs,omitempty"`
	// ActorCPUs pins every actor process to these CPUs (a Linux cpuset
	// list: "1", "0-3", "2,3"): the process provider starts each actor
	// with that CPU affinity (sched_setaffinity, inherited by all its
	// threads), the docker provider runs each container with
	// --cpuset-cpus. The harness (kstep bench's load generator) is not
	// pinned: with the actors on some CPUs, the kernel keeps it on the
	// others. "": the kernel places them.
	ActorCPUs string `json:"actorCPUs,omitempty"`
	// LinkProxies puts kstep's link proxy (cluster/netfault) in front of
	// every link a fault can name, inside the actor on its receiving end:
	// each etcd member's peer port (so Partition can cut a member off its
	// peers) and client port (apiserver → etcd), and each apiserver (every
	// actor → the apiservers). Faults on links need it; the chaos engine
	// sets it for them. Off, no byte takes the extra hop.
	LinkProxies bool `json:"linkProxies,omitempty"`
	// Extra flags per actor kind, appended after kstep's own.
	APIServerArgs         []string `json:"apiserverArgs,omitempty"`
	ControllerManagerArgs []string `json:"controllerManagerArgs,omitempty"`
	SchedulerArgs         []string `json:"schedulerArgs,omitempty"`
	NodeArgs              []string `json:"nodeArgs,omitempty"`
	HollowArgs            []string `json:"hollowArgs,omitempty"`
}

// EtcdTuning is passed to every `kstep etcd` as flags of the same names. A
// zero field passes nothing, leaving the member's default.
type EtcdTuning struct {
	HeartbeatInterval       metav1.Duration `json:"heartbeatInterval,omitzero"`        // --heartbeat-interval (ms)
	ElectionTimeout         metav1.Duration `json:"electionTimeout,omitzero"`          // --election-timeout (ms)
	SnapshotCount           uint64          `json:"snapshotCount,omitempty"`           // --snapshot-count
	QuotaBackendBytes       int64           `json:"quotaBackendBytes,omitempty"`       // --quota-backend-bytes
	AutoCompactionMode      string          `json:"autoCompactionMode,omitempty"`      // --auto-compaction-mode
	AutoCompactionRetention string          `json:"autoCompactionRetention,omitempty"` // --auto-compaction-retention
	// MaxRequestBytes is --max-request-bytes; apiservers get it too, so
	// they refuse what etcd would refuse, before etcd.
	MaxRequestBytes uint   `json:"maxRequestBytes,omitempty"`
	LogLevel        string `json:"logLevel,omitempty"` // --log-level
}

// The Raft timing kstep gives the clusters it starts. etcd's defaults
// (100 ms heartbeat, 1 s election timeout) are sized for members a data
// centre apart; kstep's members share one host or one Docker network, where
// a round trip takes well under a millisecond. etcd's tuning guide asks for
// a heartbeat near the round-trip time and an election timeout of at least
// ten heartbeats; 50 ms and 500 ms keep a wide margin over both and halve
// the time a dead leader stalls writes.
const (
	DefaultEtcdHeartbeat = 50 * time.Millisecond
	DefaultEtcdElection  = 500 * time.Millisecond
)

// maxEtcdMembers is etcd's own recommended upper bound; maxRealNodes is
// what one host's pod subnets (10.88.<index>.0/24) allow with room.
const (
	maxEtcdMembers = 7
	maxRealNodes   = 200
)

// DefaultTopology is the cluster `kstep up` starts: 3 etcd members, 2
// apiservers, 2 controller-managers, 2 schedulers, no nodes, kstep's Raft
// timing.
func DefaultTopology() Topology {
	t := Topology{}
	t.Defaults()
	return t
}

// Defaults fills every zero control-plane count with DefaultTopology's and
// the Raft timing with kstep's. Node counts are the caller's: profiles and
// scenarios have their own.
// AppendArgs appends extra's per-kind actor flags after t's: what
// `kstep bench` and `kstep up --profile` add to a profile's cluster from
// their --*-arg flags.
func (t *Topology) AppendArgs(extra Topology) {
	t.APIServerArgs = append(t.APIServerArgs, extra.APIServerArgs...)
	t.ControllerManagerArgs = append(t.ControllerManagerArgs, extra.ControllerManagerArgs...)
	t.SchedulerArgs = append(t.SchedulerArgs, extra.SchedulerArgs...)
	t.NodeArgs = append(t.NodeArgs, extra.NodeArgs...)
	t.HollowArgs = append(t.HollowArgs, extra.HollowArgs...)
}

func (t *Topology) Defaults() {
	for _, f := range []struct {
		n   *int
		def int
	}{{&t.EtcdMembers, 3}, {&t.APIServers, 2}, {&t.ControllerManagers, 2}, {&t.Schedulers, 2}} {
		if *f.n == 0 {
			*f.n = f.def
		}
	}
	if t.Etcd.HeartbeatInterval.Duration == 0 {
		t.Etcd.HeartbeatInterval.Duration = DefaultEtcdHeartbeat
	}
	if t.Etcd.ElectionTimeout.Duration == 0 {
		t.Etcd.ElectionTimeout.Duration = DefaultEtcdElection
	}
	if t.ActorProcs == 0 {
		t.ActorProcs = DefaultActorProcs(*t, runtime.NumCPU())
	}
}

// DefaultActorProcs shares cpus among the actors that work under load: the
// etcd members, the apiservers, the leading controller-manager and
// scheduler (the others only keep their informers), and the nodes' actors
// as one, at least one each. On the 2-core reference machine that is 1:
// kstep bench --profile saturation spent 22–27 core-ms per pod (four runs)
// where Go's default (2) spent 29–31 (four runs), and reached 69–86 pods/s
// where the default reached 61–65. The etcd members alone at 2 (the
// leader's Raft messages then need not wait out its WAL fsync) were worse
// too: kstep bench --profile light, four interleaved pairs, e2e p99
// 36–48 ms at 1 against 46–64 ms at 2, and 88–101 against 94–116 core-ms
// per pod.
func DefaultActorProcs(t Topology, cpus int) int {
	busy := t.EtcdMembers + t.APIServers + min(t.ControllerManagers, 1) + min(t.Schedulers, 1) + 1
	return max(1, cpus/max(busy, 1))
}

// Validate reports whether t describes a cluster a provider can start. The
// etcd timing is checked by etcd's rules (etcdadmin.ValidateTiming), a zero
// field as the member's own default (etcdadmin.DefaultHeartbeatInterval,
// DefaultElectionTimeout).
func (t Topology) Validate() error {
	switch {
	case t.EtcdMembers < 1 || t.EtcdMembers > maxEtcdMembers:
		return fmt.Errorf("etcdMembers: %d is out of range: want 1, 3, 5 or 7", t.EtcdMembers)
	case t.EtcdMembers%2 == 0:
		return fmt.Errorf("etcdMembers: %d is even: an even cluster tolerates no more failures than %d members and needs a larger quorum; use %d or %d",
			t.EtcdMembers, t.EtcdMembers-1, t.EtcdMembers-1, t.EtcdMembers+1)
	case t.APIServers < 0:
		return fmt.Errorf("apiservers: %d is negative", t.APIServers)
	case t.RealNodes < 0 || t.RealNodes > maxRealNodes:
		return fmt.Errorf("realNodes: %d is out of range 0-%d", t.RealNodes, maxRealNodes)
	case t.HollowNodes < 0:
		return fmt.Errorf("hollowNodes: %d is negative", t.HollowNodes)
	case t.RealNodes+t.HollowNodes > 0 && t.APIServers == 0:
		return fmt.Errorf("nodes need an apiserver: set apiservers ≥ 1")
	case t.ControllerManagers < 0 || t.Schedulers < 0:
		return fmt.Errorf("controllerManagers (%d) and schedulers (%d) must not be negative", t.ControllerManagers, t.Schedulers)
	case t.ActorProcs < 0:
		return fmt.Errorf("actorProcs: %d is negative: give each actor's GOMAXPROCS, at least 1", t.ActorProcs)
	case t.ActorCPUs != "" && ParseCPUs(t.ActorCPUs) == nil:
		return fmt.Errorf("actorCPUs: %q is not a CPU list (\"1\", \"0-3\", \"2,3\") of CPUs below %d", t.ActorCPUs, maxCPU)
	case t.APIServers == 0 && t.ControllerManagers+t.Schedulers > 0:
		return fmt.Errorf("controller-managers and schedulers need an apiserver: set apiservers ≥ 1 or run them with 0")
	}
	hb, el := t.Etcd.HeartbeatInterval.Duration, t.Etcd.ElectionTimeout.Duration
	if hb == 0 {
		hb = etcdadmin.DefaultHeartbeatInterval
	}
	if el == 0 {
		el = etcdadmin.DefaultElectionTimeout
	}
	if err := etcdadmin.ValidateTiming("heartbeatInterval", "electionTimeout", hb, el); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// HollowEventsOn reports whether the hollow kubelets write Events: the
// HollowEvents field (nil: yes), unless HollowArgs, which the actor reads
// after kstep's own flags, set --events.
func (t Topology) HollowEventsOn() bool {
	on := t.HollowEvents == nil || *t.HollowEvents
	return eventsFlag(t.HollowArgs, on)
}

// HollowEventsBeforeField is what a run.json topology without HollowEvents
// meant: hollow-nodes wrote Events only when its args said --events.
func (t Topology) HollowEventsBeforeField() bool { return eventsFlag(t.HollowArgs, false) }

// eventsFlag is the value of the last --events flag in args (a boolean
// flag: --events or --events=<bool>), or def without one.
func eventsFlag(args []string, def bool) bool {
	for _, a := range args {
		name, val, hasVal := strings.Cut(a, "=")
		if name != "--events" && name != "-events" {
			continue
		}
		if !hasVal {
			def = true
			continue
		}
		if b, err := strconv.ParseBool(val); err == nil {
			def = b
		}
	}
	return def
}

// Nodes is every node, real and hollow.
func (t Topology) Nodes() int { return t.RealNodes + t.HollowNodes }

// String is the shape in one line, for logs and reports.
func (t Topology) String() string {
	return fmt.Sprintf("%d etcd, %d apiservers, %d controller-managers, %d schedulers, %d real + %d hollow nodes",
		t.EtcdMembers, t.APIServers, t.ControllerManagers, t.Schedulers, t.RealNodes, t.HollowNodes)
}

// Security says what the apiservers authenticate and authorize with, for
// run.json and reports: the same on every provider.
func (t Topology) Security() string {
	if t.Insecure {
		return "none (plain HTTP, every caller the admin)"
	}
	return "TLS; x509 + token authn; RBAC + Node authz"
}

// ErrRenamedKey is wrapped by the error a Topology document with a key of
// the old shape gets.
var ErrRenamedKey = errors.New("renamed key")

// renamed are keys that meant something else before Topology: each is
// refused with what to write instead.
var renamed = map[string]string{
	"etcdPeerProxies": `"etcdPeerProxies" is now "linkProxies": one link proxy in front of every link a fault can name, etcd peer links among them`,
	"nodes":           `"nodes" is ambiguous and no longer read (it meant hollow nodes in bench profiles and real nodes in kstep up): write "hollowNodes" for kubelets over the simulated runtime or "realNodes" for containerd nodes`,
}

// UnmarshalJSON decodes strictly: an unknown key is an error, and a renamed
// one (nodes) says what it is called now.
func (t *Topology) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for k := range keys {
		if msg, ok := renamed[k]; ok {
			return fmt.Errorf("cluster: %w: %s", ErrRenamedKey, msg)
		}
	}
	type plain Topology
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("cluster: trailing data")
	}
	*t = Topology(p)
	return nil
}

// Args renders the tuning as `kstep etcd` flags.
func (e EtcdTuning) Args() []string {
	var a []string
	if d := e.HeartbeatInterval.Duration; d != 0 {
		a = append(a, "--heartbeat-interval="+strconv.FormatInt(d.Milliseconds(), 10))
	}
	if d := e.ElectionTimeout.Duration; d != 0 {
		a = append(a, "--election-timeout="+strconv.FormatInt(d.Milliseconds(), 10))
	}
	if e.SnapshotCount != 0 {
		a = append(a, "--snapshot-count="+strconv.FormatUint(e.SnapshotCount, 10))
	}
	if e.QuotaBackendBytes != 0 {
		a = append(a, "--quota-backend-bytes="+strconv.FormatInt(e.QuotaBackendBytes, 10))
	}
	if e.AutoCompactionMode != "" {
		a = append(a, "--auto-compaction-mode="+e.AutoCompactionMode)
	}
	if e.AutoCompactionRetention != "" {
		a = append(a, "--auto-compaction-retention="+e.AutoCompactionRetention)
	}
	if e.MaxRequestBytes != 0 {
		a = append(a, "--max-request-bytes="+strconv.FormatUint(uint64(e.MaxRequestBytes), 10))
	}
	if e.LogLevel != "" {
		a = append(a, "--log-level="+e.LogLevel)
	}
	return a
}

// AttemptTimeout is how long the apiservers let one etcd request go
// unanswered before sending it again: twice the election timeout, by which
// every follower has given up on a dead leader and one of them leads (0:
// the apiserver's default, sized for etcd's).
func (e EtcdTuning) AttemptTimeout() time.Duration {
	return 2 * e.ElectionTimeout.Duration
}

// maxCPU bounds a CPU number in ActorCPUs: a cpuset list "0-99999999"
// must not become a set of a hundred million CPUs.
const maxCPU = 4096

// ParseCPUs is a cpuset list's CPUs, sorted; nil when it is not one, is
// empty, or names a CPU at or above maxCPU.
func ParseCPUs(list string) []int {
	// Bound the ranges before expanding them.
	for _, part := range strings.Split(list, ",") {
		for _, n := range strings.Split(part, "-") {
			if v, err := strconv.Atoi(strings.TrimSpace(n)); err != nil || v < 0 || v >= maxCPU {
				return nil
			}
		}
	}
	set, err := cpuset.Parse(list)
	if err != nil || set.Size() == 0 {
		return nil
	}
	return set.List()
}

// ProcsText describes ActorProcs for a report line, "" when unset (a run
// recorded before the field: Go's default, every CPU).
func (t Topology) ProcsText() string {
	if t.ActorProcs == 0 {
		return ""
	}
	if t.ActorCPUs != "" {
		return fmt.Sprintf("actor processes: GOMAXPROCS %d each, pinned to CPUs %s", t.ActorProcs, t.ActorCPUs)
	}
	return fmt.Sprintf("actor processes: GOMAXPROCS %d each", t.ActorProcs)
}

// Timing describes the Raft timing for a report line, "" when unset.
func (e EtcdTuning) Timing() string {
	hb, el := e.HeartbeatInterval.Duration, e.ElectionTimeout.Duration
	if hb == 0 && el == 0 {
		return ""
	}
	return fmt.Sprintf("etcd Raft: heartbeat %d ms, election timeout %d ms", hb.Milliseconds(), el.Milliseconds())
}
