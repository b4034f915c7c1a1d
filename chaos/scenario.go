package chaos

import (
	"embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/cluster/failpoint"
	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/loadgen"
)

// APIVersion and Kind identify a Scenario document.
const (
	APIVersion = "kstep.dev/v1alpha1"
	Kind       = "Scenario"
)

// Duration is a time.Duration written as "1.5s" in YAML.
type Duration = loadgen.Duration

// Action is what a fault does to its target.
type Action string

// The fault actions.
const (
	// ActionKill sends SIGKILL; the actor is started again after Duration.
	ActionKill Action = "kill"
	// ActionStop sends SIGTERM; the actor is started again after Duration.
	ActionStop Action = "stop"
	// ActionPause freezes the actor (SIGSTOP) for Duration.
	ActionPause Action = "pause"
	// ActionRestart stops the actor (SIGTERM) and starts it at once.
	ActionRestart Action = "restart"
	// ActionPartition cuts an etcd member off from its peers for Duration
	// (provider.ScopePeers): its clients still reach it.
	ActionPartition Action = "partition"
	// ActionIsolate takes the whole actor off the cluster's network for
	// Duration (provider.ScopeAll); providers that cannot (process: every
	// actor shares the loopback) refuse it, and the run says so.
	ActionIsolate Action = "isolate"
	// ActionLink puts a fault (Fault.Link: delay, loss, blackhole,
	// bandwidth, resets) on a link into the target for Duration, through
	// the link proxy inside the target (cluster/netfault).
	ActionLink Action = "link"
	// ActionFill fills etcd's space quota under the load: it writes large
	// ConfigMaps through the apiservers until etcd refuses one for the
	// quota (NOSPACE, the injection), leaves the quota full for Duration,
	// then recovers as an operator would: deletes the filler, compacts,
	// defragments and disarms the alarm (what `kstep etcd recover` does).
	// Its target is etcd-members; cluster.etcd.quotaBackendBytes sets the
	// quota it fills.
	ActionFill Action = "fill"
	// ActionFailpoint arms a failpoint (Fault.Failpoint) of the target
	// apiservers for Duration, then disarms it: testing only, for apiservers
	// started with --enable-failpoints (cluster/failpoint.Path).
	// The negative controls use it to prove the checkers can fail.
	ActionFailpoint Action = "failpoint"
)

// FailpointFault is the failpoint an ActionFailpoint fault arms: Name is
// freeze-watch-cache (Resource: one resource's cache, or all) or
// drop-watch-event (the next Count events of Resource's watch streams
// whose User-Agent contains UserAgent; the engine's watchers are
// kstep-chaos-watcher/<name>).
type FailpointFault struct {
	Name      string `json:"name"`
	Resource  string `json:"resource,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	Count     int    `json:"count,omitempty"`
}

// maxFillQuota bounds the quota a fill fault fills: at the filler's pace
// a larger one takes minutes to reach.
const maxFillQuota = 1 << 30

// LinkFault is what an ActionLink fault does to a link into its target.
type LinkFault struct {
	// Link is the link: etcd-client (apiserver → the member) or etcd-peer
	// (the other members → the member) on etcd targets, apiserver (every
	// actor → the apiserver) on apiserver targets. Default: etcd-client,
	// or apiserver.
	Link string `json:"link,omitempty"`
	// Up is the direction into the target, Down the answers.
	Up   netfault.Fault `json:"up,omitzero"`
	Down netfault.Fault `json:"down,omitzero"`
	// Reset is the share of the link's connections reset, open and new.
	Reset float64 `json:"reset,omitempty"`
}

// Target names the role a fault is aimed at; it is resolved to actors at
// the moment of injection.
type Target string

// The targets.
const (
	TargetEtcdLeader        Target = "etcd-leader"   // the member etcd reports as leader
	TargetEtcdFollower      Target = "etcd-follower" // one member that is not the leader
	TargetEtcdQuorum        Target = "etcd-quorum"   // a majority of members, the leader among them
	TargetEtcdMembers       Target = "etcd-members"  // every member
	TargetAPIServer         Target = "apiserver"     // one apiserver (the last)
	TargetAPIServers        Target = "apiservers"    // every apiserver
	TargetControllerManager Target = "controller-manager-leader"
	TargetScheduler         Target = "scheduler-leader"
	TargetKubelet           Target = "kubelet"         // the kubelet of a node with pods
	TargetContainerd        Target = "node-containerd" // a real node's containerd
	TargetNode              Target = "node"            // a whole node with pods
	TargetActorPrefix       Target = "actor:"          // actor:NAME, a fixed actor
)

var knownTargets = []Target{TargetEtcdLeader, TargetEtcdFollower, TargetEtcdQuorum, TargetEtcdMembers, TargetAPIServer, TargetAPIServers,
	TargetControllerManager, TargetScheduler, TargetKubelet, TargetContainerd, TargetNode, TargetClient, TargetLoad}

// Detection is the signal that the system noticed a fault.
type Detection string

// The detections.
const (
	DetectNone          Detection = "none"
	DetectEtcdLeader    Detection = "etcd-leader-changed"
	DetectLeaseHolder   Detection = "lease-holder-changed"
	DetectNodeNotReady  Detection = "node-not-ready"
	DetectWriteRejected Detection = "write-failed"
)

// Recovery is the signal that the system healed.
type Recovery string

// The recoveries.
const (
	RecoverNone        Recovery = "none"
	RecoverWrite       Recovery = "write-acked"      // first acknowledged write sent after the fault
	RecoverLeaderPod   Recovery = "leader-first-pod" // the new controller-manager leader's first pod
	RecoverLeaderBind  Recovery = "leader-first-bind"
	RecoverActorReady  Recovery = "actor-ready"      // the restarted actor is ready again
	RecoverNodesReady  Recovery = "nodes-ready"      // every node Ready again
	RecoverRescheduled Recovery = "pods-rescheduled" // a lost node's ReplicaSets whole again elsewhere
)

// Scenario is one chaos run: a cluster, a background load, faults.
type Scenario struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Seed is the failure-table row or upstream claim the scenario checks.
	Seed string `json:"seed,omitempty"`
	// Cluster is the Topology the scenario runs on, on any provider. A
	// scenario whose faults need real nodes cannot run without them.
	Cluster provider.Topology `json:"cluster"`
	// OptionalRealNodes are real nodes the run adds to Cluster where the
	// provider can run them (a note in the report says when it cannot):
	// the smoke suite's, so that running-pods-unaffected is checked
	// wherever the machine allows.
	OptionalRealNodes int `json:"optionalRealNodes,omitempty"`
	// Load is the background loadgen job; it starts with the scenario and
	// should outlast the faults (Count/QPS).
	Load  loadgen.Job `json:"load"`
	Probe Probe       `json:"probe"`
	// Supervise runs a supervisor (provider.Supervise: Restart=always with
	// a doubling backoff from 100 ms) beside the faults: a killed actor
	// comes back by itself, as under systemd, and the engine's own restart
	// finds it running. Off by default: the engine decides when actors
	// return.
	Supervise bool `json:"supervise,omitempty"`
	// Faults are injected at their offsets from the start of the load.
	Faults []Fault `json:"faults"`
	// Convergence bounds the wait, after the last fault, for every
	// ReplicaSet to be Ready.
	Convergence Duration `json:"convergence"`
}

// Probe is the engine's own client load, beside the loadgen job: writes at
// a steady rate (the write gap is measured on them) and watchers that run
// throughout.
type Probe struct {
	// WriteQPS is the rate of probe writes (ConfigMap creates).
	WriteQPS float64 `json:"writeQPS"`
	// Watchers watch every pod from the start to the end, one per
	// apiserver round-robin; each must see no gap.
	Watchers int `json:"watchers"`
	// Sequential makes the probe one writer: each write is sent when the
	// one before it has its answer (at most WriteQPS), as a single
	// client-go writer would; otherwise writes go out on the tick, up to
	// 64 in flight.
	Sequential bool `json:"sequential,omitempty"`
	// RequestTimeout is the client timeout of one request (default 3 s);
	// a request not answered by then has waited that long and is tried
	// again, on the next apiserver.
	RequestTimeout Duration `json:"requestTimeout,omitzero"`
	// Linearizability is the workload the linearizable invariant checks;
	// it runs in every scenario.
	Linearizability Linearizability `json:"linearizability,omitzero"`
	// ResumeEvery is how many events of a watcher go by between two
	// resumptions the watch-resumable invariant checks (default 25).
	ResumeEvery int `json:"resumeEvery,omitempty"`
}

// Fault is one injection.
type Fault struct {
	Name   string `json:"name"`
	Action Action `json:"action"`
	Target Target `json:"target"`
	// At is the offset from the start of the load.
	At Duration `json:"at"`
	// Duration is how long the actor stays down, paused or partitioned
	// before it is started, thawed or healed.
	Duration Duration `json:"duration"`
	// Link is the link fault of ActionLink.
	Link *LinkFault `json:"link,omitempty"`
	// Failpoint is the failpoint of ActionFailpoint.
	Failpoint *FailpointFault `json:"failpoint,omitempty"`
	// Workload is what a kill-pods or scale fault does to the load.
	Workload *WorkloadFault `json:"workload,omitempty"`
	// Expect says what detection and recovery to measure; defaults follow
	// the target and action.
	Expect Expect `json:"expect"`
}

// Expect is the detection and recovery a fault is measured by.
type Expect struct {
	Detection Detection `json:"detection"`
	Recovery  Recovery  `json:"recovery"`
	// Within is the recovery the scenario expects, for the report (the gate
	// decides pass or fail).
	Within Duration `json:"within,omitempty"`
}

// Defaults fills every zero field.
func (s *Scenario) Defaults() {
	if s.APIVersion == "" {
		s.APIVersion = APIVersion
	}
	if s.Kind == "" {
		s.Kind = Kind
	}
	c := &s.Cluster
	c.Defaults()
	if c.HollowNodes == 0 && c.RealNodes == 0 {
		c.HollowNodes = 5
	}
	if s.Load.Name == "" {
		s.Load.Name = "chaos"
	}
	if s.Load.QPS == 0 {
		s.Load.QPS = 2
	}
	if len(s.Load.Namespaces) == 0 {
		s.Load.Namespaces = []string{"chaos-load"}
	}
	s.Load.Defaults()
	if s.Probe.WriteQPS == 0 {
		s.Probe.WriteQPS = 20
	}
	if s.Probe.Watchers == 0 {
		s.Probe.Watchers = 2
	}
	if s.Probe.RequestTimeout.Duration == 0 {
		s.Probe.RequestTimeout.Duration = 3 * time.Second
	}
	s.Probe.Linearizability.defaults(c.APIServers)
	if s.Probe.ResumeEvery == 0 {
		s.Probe.ResumeEvery = 25
	}
	if s.Convergence.Duration == 0 {
		s.Convergence.Duration = 2 * time.Minute
	}
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Name == "" {
			f.Name = fmt.Sprintf("%s-%s", f.Action, strings.TrimPrefix(string(f.Target), string(TargetActorPrefix)))
		}
		if f.Duration.Duration == 0 && f.Action != ActionRestart {
			f.Duration.Duration = 5 * time.Second
		}
		d, r := defaultExpect(f.Target, f.Action)
		if f.Expect.Detection == "" {
			f.Expect.Detection = d
		}
		if f.Expect.Recovery == "" {
			f.Expect.Recovery = r
		}
	}
	if s.Load.Count == 0 {
		// Keep creating until 15 s after the last fault ends, so every
		// recovery has work to show (a new leader's first pod, ...).
		s.Load.Count = int(math.Ceil(s.Load.QPS * (s.lastFaultEnd() + 15*time.Second).Seconds()))
	}
}

// lastFaultEnd is when the last fault is undone, as scheduled.
func (s *Scenario) lastFaultEnd() time.Duration {
	var end time.Duration
	for _, f := range s.Faults {
		end = max(end, f.At.Duration+f.Duration.Duration)
	}
	return end
}

// defaultExpect is how a fault on target is measured unless the scenario
// says otherwise.
func defaultExpect(t Target, a Action) (Detection, Recovery) {
	if a == ActionFill {
		// Writes are refused from the injection on; recovered is the first
		// write acknowledged after the recovery.
		return DetectWriteRejected, RecoverWrite
	}
	switch a {
	case ActionDrain:
		// The first pod seen leaving the node; its ReplicaSets whole again
		// on the others.
		return DetectPodEvicted, RecoverRescheduled
	case ActionDeleteNode:
		return DetectNodeGone, RecoverNodeReturned
	case ActionKillPods:
		return DetectPodReplaced, RecoverLoadReady
	case ActionScale:
		return DetectPodsChanged, RecoverScaled
	}
	if a == ActionFailpoint {
		// A broken build, not an outage: what it breaks is the invariants'.
		return DetectNone, RecoverNone
	}
	if a == ActionLink {
		if t == TargetAPIServer || t == TargetAPIServers {
			// The actors' links: their nodes' heartbeats are what a client
			// of the cluster would lose.
			return DetectNone, RecoverNodesReady
		}
		return DetectNone, RecoverWrite
	}
	switch t {
	case TargetClient:
		// The cluster does not notice a client's death; the load's
		// convergence (load-objects) is what it is measured by.
		return DetectNone, RecoverNone
	case TargetEtcdLeader, TargetEtcdQuorum:
		return DetectEtcdLeader, RecoverWrite
	case TargetEtcdFollower, TargetAPIServer, TargetAPIServers:
		if a == ActionPause || a == ActionPartition || a == ActionIsolate {
			return DetectNone, RecoverWrite
		}
		return DetectNone, RecoverActorReady
	case TargetControllerManager:
		return DetectLeaseHolder, RecoverLeaderPod
	case TargetScheduler:
		return DetectLeaseHolder, RecoverLeaderBind
	case TargetKubelet, TargetContainerd:
		return DetectNodeNotReady, RecoverNodesReady
	case TargetNode:
		return DetectNodeNotReady, RecoverRescheduled
	}
	return DetectNone, RecoverActorReady
}

// linkOf is the link an ActionLink fault names, its default filled.
func (f Fault) linkOf() string {
	if f.Link == nil {
		return ""
	}
	if f.Link.Link != "" {
		return f.Link.Link
	}
	if f.Target == TargetAPIServer || f.Target == TargetAPIServers {
		return netfault.LinkAPIServer
	}
	return netfault.LinkEtcdClient
}

func (f Fault) validateFailpoint() error {
	fp := f.Failpoint
	if fp == nil {
		return errors.New("action failpoint needs failpoint: {name: ...}")
	}
	var errs []error
	if f.Target != TargetAPIServer && f.Target != TargetAPIServers && !strings.HasPrefix(string(f.Target), string(TargetActorPrefix)) {
		errs = append(errs, fmt.Errorf("target %s: failpoints are an apiserver's (%s, %s or actor:NAME)", f.Target, TargetAPIServer, TargetAPIServers))
	}
	if fp.Count < 0 || fp.Count > failpoint.MaxCount {
		errs = append(errs, fmt.Errorf("failpoint count %d: want 0 to %d", fp.Count, failpoint.MaxCount))
	}
	switch fp.Name {
	case failpoint.FreezeWatchCache:
	case failpoint.DropWatchEvent:
		if fp.Resource == "" || fp.UserAgent == "" {
			errs = append(errs, errors.New("failpoint drop-watch-event needs resource and userAgent"))
		}
	default:
		errs = append(errs, fmt.Errorf("failpoint %q: want %s or %s", fp.Name, failpoint.FreezeWatchCache, failpoint.DropWatchEvent))
	}
	return errors.Join(errs...)
}

func (f Fault) validateLink() error {
	switch {
	case f.Action != ActionLink && f.Link != nil:
		return fmt.Errorf("link: set for action %s (only action link has one)", f.Action)
	case f.Action != ActionLink:
		return nil
	case f.Link == nil:
		return errors.New("action link needs link: {up: ..., down: ...}")
	}
	r := netfault.Rule{Name: f.Name, Up: f.Link.Up, Down: f.Link.Down, Reset: f.Link.Reset}
	if err := r.Validate(); err != nil {
		return err
	}
	if f.Link.Up.Zero() && f.Link.Down.Zero() && f.Link.Reset == 0 {
		return errors.New("link: no fault in either direction")
	}
	etcdTarget := strings.HasPrefix(string(f.Target), "etcd")
	apiTarget := f.Target == TargetAPIServer || f.Target == TargetAPIServers
	switch l := f.linkOf(); {
	case etcdTarget && l != netfault.LinkEtcdClient && l != netfault.LinkEtcdPeer:
		return fmt.Errorf("link %q on an etcd target: want %s or %s", l, netfault.LinkEtcdClient, netfault.LinkEtcdPeer)
	case apiTarget && l != netfault.LinkAPIServer:
		return fmt.Errorf("link %q on an apiserver target: want %s", l, netfault.LinkAPIServer)
	case !etcdTarget && !apiTarget && !strings.HasPrefix(string(f.Target), string(TargetActorPrefix)):
		return fmt.Errorf("target %s has no links: links are into etcd members and apiservers", f.Target)
	}
	return nil
}

// Validate says what is wrong with s, every problem at once.
func (s *Scenario) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.APIVersion != APIVersion {
		bad("apiVersion: %q, want %q", s.APIVersion, APIVersion)
	}
	if s.Kind != Kind {
		bad("kind: %q, want %q", s.Kind, Kind)
	}
	if s.Name == "" {
		bad("name: empty")
	}
	c := s.Cluster
	if c.APIServers < 1 {
		bad("cluster.apiservers: %d, want at least 1", c.APIServers)
	}
	if s.OptionalRealNodes < 0 {
		bad("optionalRealNodes: %d is negative", s.OptionalRealNodes)
	}
	if err := c.Validate(); err != nil {
		bad("cluster.%v", err)
	}
	if err := s.Load.Validate(); err != nil {
		bad("load: %v", err)
	}
	if s.Probe.WriteQPS < 0 || s.Probe.Watchers < 0 {
		bad("probe: writeQPS %g and watchers %d must not be negative", s.Probe.WriteQPS, s.Probe.Watchers)
	}
	if d := s.Probe.RequestTimeout.Duration; d < 0 || d > probeTimeout {
		bad("probe: requestTimeout %v must be between 0 and %v", d, probeTimeout)
	}
	if err := s.Probe.Linearizability.validate(); err != nil {
		bad("probe.%v", err)
	}
	if s.Probe.ResumeEvery < 1 {
		bad("probe: resumeEvery %d, want at least 1", s.Probe.ResumeEvery)
	}
	if len(s.Faults) == 0 {
		bad("faults: none")
	}
	names := map[string]bool{}
	for i, f := range s.Faults {
		where := fmt.Sprintf("faults[%d] (%s)", i, f.Name)
		if names[f.Name] {
			bad("%s: name used twice", where)
		}
		names[f.Name] = true
		switch f.Action {
		case ActionKill, ActionStop, ActionPause, ActionRestart, ActionPartition, ActionIsolate, ActionLink, ActionFill:
		case ActionFailpoint:
			if err := f.validateFailpoint(); err != nil {
				bad("%s: %v", where, err)
			}
		case ActionDrain, ActionDeleteNode, ActionDeletePod, ActionKillPods, ActionScale:
			if err := f.validateAPI(); err != nil {
				bad("%s: %v", where, err)
			}
		default:
			bad("%s: action %q, want kill, stop, pause, restart, partition, isolate, link, fill, failpoint, drain, delete-node, delete-pod, kill-pods or scale", where, f.Action)
		}
		if f.Target == TargetLoad && !workloadAction(f.Action) {
			bad("%s: target %s is for %s and %s only", where, TargetLoad, ActionKillPods, ActionScale)
		}
		if err := f.validateWorkload(s.Load); err != nil {
			bad("%s: %v", where, err)
		}
		if f.Action == ActionFill {
			if f.Target != TargetEtcdMembers {
				bad("%s: fill fills etcd's quota, which every member shares: its target is %s", where, TargetEtcdMembers)
			}
			if q := c.Etcd.QuotaBackendBytes; q <= 0 || q > maxFillQuota {
				bad("%s: fill needs a small quota to fill: cluster.etcd.quotaBackendBytes %d, want 1 to %d (e.g. 268435456, 256 MiB)", where, q, maxFillQuota)
			}
		}
		if err := f.validateLink(); err != nil {
			bad("%s: %v", where, err)
		}
		if f.Target == TargetClient && f.Action != ActionKill && f.Action != ActionStop {
			bad("%s: the client (kstep load) is killed or stopped, then run again", where)
		}
		if f.Target == TargetEtcdMembers && f.Action != ActionLink && f.Action != ActionFill {
			bad("%s: %s (every member) is a target for link and fill faults only", where, f.Target)
		}
		if !validTarget(f.Target) {
			bad("%s: target %q, want one of %s or actor:NAME", where, f.Target, joinTargets())
		}
		if f.Action == ActionPartition && !strings.HasPrefix(string(f.Target), "etcd") &&
			!strings.HasPrefix(string(f.Target), string(TargetActorPrefix)) {
			bad("%s: partition needs an etcd target: it cuts a member from its peers (isolate takes any actor off the network)", where)
		}
		if f.Target == TargetEtcdQuorum && c.EtcdMembers < 3 {
			bad("%s: etcd-quorum needs at least 3 members", where)
		}
		if (f.Target == TargetControllerManager && c.ControllerManagers < 2) || (f.Target == TargetScheduler && c.Schedulers < 2) {
			bad("%s: %s needs a standby: run at least 2", where, f.Target)
		}
		if (f.Target == TargetContainerd || f.Target == TargetNode) && c.RealNodes == 0 && !apiAction(f.Action) {
			bad("%s: %s needs real nodes (cluster.realNodes)", where, f.Target)
		}
		if f.Target == TargetNode && apiAction(f.Action) && c.RealNodes+c.HollowNodes < 2 {
			bad("%s: a drained or deleted node's pods need another node to go to", where)
		}
		if f.Target == TargetNode && !apiAction(f.Action) && c.RealNodes+min(c.HollowNodes, 1) < 2 {
			bad("%s: a lost node's pods need another node to go to", where)
		}
		if f.At.Duration < 0 || f.Duration.Duration < 0 {
			bad("%s: at %v and duration %v must not be negative", where, f.At.Duration, f.Duration.Duration)
		}
		if f.Action == ActionRestart && f.Duration.Duration != 0 {
			bad("%s: restart has no duration (use stop or kill with a duration)", where)
		}
		switch f.Expect.Detection {
		case DetectNone, DetectEtcdLeader, DetectLeaseHolder, DetectNodeNotReady, DetectWriteRejected, DetectPodEvicted, DetectNodeGone,
			DetectPodReplaced, DetectPodsChanged:
		default:
			bad("%s: expect.detection %q unknown", where, f.Expect.Detection)
		}
		switch f.Expect.Recovery {
		case RecoverNone, RecoverWrite, RecoverLeaderPod, RecoverLeaderBind, RecoverActorReady, RecoverNodesReady, RecoverRescheduled, RecoverNodeReturned,
			RecoverLoadReady, RecoverScaled:
		default:
			bad("%s: expect.recovery %q unknown", where, f.Expect.Recovery)
		}
	}
	// Faults must not overlap: each is measured on its own.
	sorted := append([]Fault(nil), s.Faults...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].At.Duration < sorted[j].At.Duration })
	for i := 1; i < len(sorted); i++ {
		prev, cur := sorted[i-1], sorted[i]
		if cur.At.Duration < prev.At.Duration+prev.Duration.Duration {
			bad("faults %s and %s overlap: %s starts at %v, before %s ends at %v", prev.Name, cur.Name, cur.Name,
				cur.At.Duration, prev.Name, prev.At.Duration+prev.Duration.Duration)
		}
	}
	return errors.Join(errs...)
}

func validTarget(t Target) bool {
	if strings.HasPrefix(string(t), string(TargetActorPrefix)) {
		return len(t) > len(TargetActorPrefix)
	}
	for _, k := range knownTargets {
		if t == k {
			return true
		}
	}
	return false
}

func joinTargets() string {
	s := make([]string, len(knownTargets))
	for i, t := range knownTargets {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// Parse reads a Scenario from YAML, applies the defaults and validates it.
// Unknown fields are errors: a misspelt key must not silently mean default.
func Parse(data []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	s.Defaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return &s, nil
}

//go:embed scenarios/*.yaml
var builtin embed.FS

// Builtin lists the built-in scenarios' names.
func Builtin() []string {
	entries, _ := builtin.ReadDir("scenarios")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Load returns the built-in scenario called name, or reads name as a file.
func Load(name string) (*Scenario, error) {
	if b, err := builtin.ReadFile(path.Join("scenarios", name+".yaml")); err == nil {
		return Parse(b)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("scenario %q is neither built in (%s) nor a readable file: %w", name, strings.Join(Builtin(), ", "), err)
	}
	return Parse(b)
}
