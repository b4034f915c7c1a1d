package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// Schema is the version of run.json. A change that removes or renames a key
// bumps it; ReadRun still reads every older one (SchemaV1).
const Schema = "kstep.dev/run/v3"

// SchemaV2 is run.json before steps were split by node kind and every
// transition started from a stamp that causally precedes its end (v2's ②,
// ④, ⑥ and ⑧ started from the writer's acknowledgement, which etcd's watch
// can overtake). It is read as it is: its steps are all pods ("all").
const SchemaV2 = "kstep.dev/run/v2"

// SchemaV1 is run.json before the cluster's shape became a Topology
// (cluster.nodes counted every node, cluster.node_kind said which).
const SchemaV1 = "kstep.dev/run/v1"

// Run is run.json.
type Run struct {
	Schema   string `json:"schema"`
	ID       string `json:"id"`
	Provider string `json:"provider"`
	// Runtime is what ran the pods: "hollow" (simulated CRI) or "real".
	Runtime string `json:"runtime"`
	Profile string `json:"profile"`
	// EndpointsStamp is which controller stamped step ⑧'s
	// endpoints.updated: "endpoints" (its Endpoints write) or
	// "endpointslices" (its EndpointSlice write). Runs before the choice
	// existed have none: the Endpoints controller's (EndpointsObject).
	EndpointsStamp string `json:"endpoints_stamp,omitempty"`
	// Version is the kstep build that ran (git describe of its commit).
	Version string `json:"version,omitempty"`
	Valid   bool   `json:"valid"`
	// Invalid says why Valid is false, one reason a line.
	Invalid []string `json:"invalid,omitempty"`
	// Disrupted: a leader Lease changed hands or a node left Ready during
	// the load (Disruptions lists them). Its latencies are not those of a
	// healthy cluster: compare refuses it unless forced.
	Disrupted bool `json:"disrupted"`
	// Negative lists samples whose end was stamped before their start: a
	// bug in a causal chain, so the run is invalid.
	Negative   []NegativeSample `json:"negative,omitempty"`
	StartedAt  string           `json:"started_at"`
	DurationS  float64          `json:"duration_s"`
	Cluster    Cluster          `json:"cluster"`
	Steps      []Step           `json:"steps"`
	EndToEnd   Step             `json:"end_to_end"`
	Throughput Throughput       `json:"throughput"`
	// Populations are the pods by node kind (real containerd nodes, hollow
	// nodes): their end to end and the share of step ⑦ in it.
	Populations []Population `json:"populations,omitempty"`
	// Unavailable lists the steps no actor of this run stamps: reported,
	// never invented.
	Unavailable []string `json:"unavailable,omitempty"`
	// NotObservable lists, on a cluster whose components do not stamp
	// kstep's tracer (the external provider), the steps only a component
	// could see: not observable on this cluster, never invented.
	NotObservable []string `json:"not_observable,omitempty"`
	// Sources says, step by step, where this run's stamps came from.
	Sources []StepSource `json:"sources,omitempty"`
	// OutsideView: the load generator's watches also stamped what is seen
	// from outside the cluster (the profile's outsideView; always on with
	// the external provider), so the run has the outside rows: what
	// `kstep compare` sets beside an external run's rows.
	OutsideView bool `json:"outside_view,omitempty"`
	// Incomplete lists the pods missing a step that this run's actors stamp.
	Incomplete []MissingSteps `json:"incomplete,omitempty"`
	// Drops is each actor's count of lost trace events, where the actor
	// reports one; DropsUnknown lists actors that do not.
	Drops        map[string]uint64 `json:"drops"`
	DropsUnknown []string          `json:"drops_unknown,omitempty"`
	Pods         int               `json:"pods"`
	Events       int               `json:"events"`
	// Waterfalls are the median and the p99 pod (by end to end), step by
	// step: when each stamp happened after the client sent the ReplicaSet.
	Waterfalls []Waterfall `json:"waterfalls,omitempty"`
	// API is request latency by verb and resource, summed over every
	// apiserver's /metrics at the end of the load: every client's requests
	// (controllers, schedulers, kubelets and the load generator).
	API []APILatency `json:"api,omitempty"`
	// EtcdRequests is the apiservers' own etcd requests, by operation
	// (Verb: create, update, delete, get, list) and resource type
	// (Resource: the key's /registry/<type>/ segment), retries included:
	// how much of API's latency was etcd's. Errors is not counted here.
	EtcdRequests []APILatency `json:"etcd_requests,omitempty"`
	// Actors is what each actor's processes consumed over the run, and
	// over the load alone.
	Actors []ActorUsage `json:"actors,omitempty"`
	// LoadS is the load's wall time, the window of the actors'
	// LoadCPUSeconds: from the first request of the load job to its end
	// (every pod Ready, and the job's later phases). 0: not measured.
	LoadS float64 `json:"load_s,omitempty"`
	// LoadPods is every pod the load made Ready, where it is more than
	// the run's pods (a capacity search: all its steps, while the step
	// table is one of them); the writes and CPU per pod divide by it.
	LoadPods int `json:"load_pods,omitempty"`
	// Etcd is each member's work during the load phase.
	Etcd []EtcdMember `json:"etcd,omitempty"`
	// Disruptions seen during the load, in order; a healthy run has none.
	Disruptions []Disruption `json:"disruptions,omitempty"`
	// WarmUp is the start of the load the rows leave out (the steps, end
	// to end and the populations; validity, throughput, the costs per pod
	// and the waterfalls count every pod); nil: none left out.
	WarmUp *WarmUp `json:"warm_up,omitempty"`
	// FindMax is the capacity search of a `kstep bench --find-max` run:
	// its curve and its answer. The run's step table is then the highest
	// step that held the SLO.
	FindMax *FindMax `json:"find_max,omitempty"`
}

// WarmUp is the start of a run's load left out of its rows: the objects
// among the first Objects the load generator sent, and those sent within
// DurationS of its first send. A fresh cluster's first objects meet cold
// caches, informers still syncing and a Go heap still growing; leaving
// them out measures the steady state the rest of the load sees.
type WarmUp struct {
	Objects   int     `json:"objects,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
	// LeftOutObjects and Pods are what the rule left out in this run.
	LeftOutObjects int `json:"left_out_objects"`
	Pods           int `json:"pods"`
}

// Text says the warm-up in one line.
func (w *WarmUp) Text() string {
	var rule []string
	if w.Objects > 0 {
		rule = append(rule, fmt.Sprintf("the first %d objects", w.Objects))
	}
	if w.DurationS > 0 {
		rule = append(rule, fmt.Sprintf("those sent in the first %g s", w.DurationS))
	}
	return fmt.Sprintf("%s of the load left out of the rows (%d objects, %d pods)", strings.Join(rule, " and "), w.LeftOutObjects, w.Pods)
}

// Rule is the warm-up's rule alone (what two runs must share to be
// measured alike): "objects=N duration=Ts", "none" for nil.
func (w *WarmUp) Rule() string {
	if w == nil {
		return "none"
	}
	return fmt.Sprintf("objects=%d duration=%gs", w.Objects, w.DurationS)
}

// FindMax is a capacity search on one cluster: steps at rising offered
// rates (×Factor), then bisection, each step judged on an SLO.
type FindMax struct {
	// SLO is what a step had to hold, as stated ("control-plane p99 ≤ 1s
	// and no disruption").
	SLO           string  `json:"slo"`
	Factor        float64 `json:"factor"`
	StepDurationS float64 `json:"step_duration_s"`
	StepPods      int     `json:"step_pods"`
	Precision     float64 `json:"precision"`
	// PodsPerS is the answer: the pods/s achieved by the highest offered
	// rate that held the SLO (OfferedPodsPerS, step Step); 0 when no
	// step held it.
	PodsPerS        float64 `json:"pods_per_s"`
	OfferedPodsPerS float64 `json:"offered_pods_per_s"`
	Step            int     `json:"step,omitempty"`
	// Bracketed: a step held the SLO and a higher one broke it, so the
	// answer is the capacity, not a bound.
	Bracketed bool   `json:"bracketed"`
	Reason    string `json:"reason"`
	// Steps is the curve, in the order run.
	Steps []FindMaxStep `json:"steps"`
}

// FindMaxStep is one step of the search.
type FindMaxStep struct {
	Step int `json:"step"`
	// Phase is "raise", "bisect" or "lower".
	Phase           string  `json:"phase"`
	OfferedPodsPerS float64 `json:"offered_pods_per_s"`
	// AchievedPodsPerS is the step's pods Ready over (last Ready − first
	// send), as the run's throughput.
	AchievedPodsPerS float64 `json:"achieved_pods_per_s"`
	// The step's latencies, from the load generator's own watch: client
	// sent → pod seen bound (control plane) and → seen Ready (e2e).
	ControlPlaneP50MS float64 `json:"control_plane_p50_ms"`
	ControlPlaneP99MS float64 `json:"control_plane_p99_ms"`
	E2EP50MS          float64 `json:"e2e_p50_ms"`
	E2EP99MS          float64 `json:"e2e_p99_ms"`
	// P99MS is the SLO's latency's p99.
	P99MS       float64 `json:"p99_ms"`
	Pods        int     `json:"pods"`
	Ready       int     `json:"ready"`
	Disruptions int     `json:"disruptions"`
	// StartS is when the step began, after the run's load began.
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	Held      bool    `json:"held"`
	// Why says how a step broke the SLO.
	Why string `json:"why,omitempty"`
}

// Where a step's stamps came from (StepSource.Where).
const (
	// FromHarness: kstep's load generator stamped it on kstep's clock, at
	// ns: its own requests (client.rs.*) and its own watches (client.pod.*,
	// pod.ready.observed, client.endpoints.listed).
	FromHarness = "harness"
	// FromCluster: an actor of the cluster stamped it at the moment it
	// acted (kstep's components).
	FromCluster = "cluster"
	// FromNowhere: no actor of this run stamps it.
	FromNowhere = "unavailable"
	// NotObservable: only a component of the cluster could see it, and
	// this cluster's components do not stamp kstep's tracer.
	NotObservable = "not observable on this cluster"
)

// StepSource is where one step's stamps came from.
type StepSource struct {
	Step  string `json:"step"`
	Where string `json:"where"`
	// Actors are the stamping actors (as they stamp).
	Actors []string `json:"actors,omitempty"`
}

// External is what the harness found of a cluster it does not run (the
// external provider): how it answered, and its nodes.
type External struct {
	// Server is the apiserver URL of the kubeconfig's context, Context
	// that context's name.
	Server  string `json:"server"`
	Context string `json:"context"`
	// Version is the server's /version (gitVersion).
	Version string `json:"version"`
	// Nodes is the node count, Ready the Ready ones, when the run began.
	Nodes int `json:"nodes"`
	Ready int `json:"ready"`
	// Kinds counts nodes by kind: "hollow (kstep)" (nodeInfo.osImage
	// "kstep hollow node"), "fake (kwok)" (annotation
	// kwok.x-k8s.io/node=fake), "real" (anything else). KindsBy says so.
	Kinds   map[string]int `json:"kinds"`
	KindsBy string         `json:"kinds_by"`
	// Label is the label (provider.RunLabel=<value>) everything the run
	// created carried, and was removed by.
	Label string `json:"label"`
}

// Waterfall is one pod's path through the steps.
type Waterfall struct {
	Label     string  `json:"label"` // "p50 pod", "p99 pod"
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	EndToEnd  float64 `json:"end_to_end_ms"`
	Marks     []Mark  `json:"marks"`
}

// Mark is one step's stamp, in ms after the pod's first stamp.
type Mark struct {
	Step string  `json:"step"`
	AtMS float64 `json:"at_ms"`
}

// APILatency is one verb on one resource, from the apiservers' request
// duration histograms. Quantiles are interpolated within histogram buckets,
// as Prometheus's histogram_quantile does.
type APILatency struct {
	Verb     string  `json:"verb"`
	Resource string  `json:"resource"` // group/resource/subresource, core group empty
	Count    uint64  `json:"count"`
	Errors   uint64  `json:"errors"` // 5xx and 429 responses
	MeanMS   float64 `json:"mean_ms"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
}

// EtcdMember is what one etcd member did during the load, from its own
// /metrics read before and after: where step ①'s write time goes.
type EtcdMember struct {
	Name string `json:"name"`
	// Leader: the member led when the load ended.
	Leader bool `json:"leader"`
	// LeaderChanges this member saw; above 0 in a run without faults means
	// elections under load (the Raft timing is too tight for the machine).
	LeaderChanges      uint64 `json:"leader_changes"`
	ProposalsCommitted uint64 `json:"proposals_committed"`
	ProposalsFailed    uint64 `json:"proposals_failed"`
	HeartbeatFailures  uint64 `json:"heartbeat_send_failures"`
	// SlowApplies are applies that took over 100 ms.
	SlowApplies        uint64  `json:"slow_applies"`
	Fsyncs             uint64  `json:"wal_fsyncs"`
	FsyncP50MS         float64 `json:"wal_fsync_p50_ms"`
	FsyncP99MS         float64 `json:"wal_fsync_p99_ms"`
	BackendCommitP99MS float64 `json:"backend_commit_p99_ms"`
	// The member's database before and after the load (etcd's
	// etcd_mvcc_db_total_size_in_bytes and …_in_use_in_bytes): the file
	// and what its live pages take. Keys is etcd's key count after
	// (etcd_debugging_mvcc_keys_total), BytesPerKey in use after / Keys.
	DBSizeBefore  int64   `json:"db_size_before"`
	DBSizeAfter   int64   `json:"db_size_after"`
	DBInUseBefore int64   `json:"db_in_use_before"`
	DBInUseAfter  int64   `json:"db_in_use_after"`
	Keys          int64   `json:"keys"`
	BytesPerKey   float64 `json:"bytes_per_key"`
}

// Disruption is something a healthy run never shows, seen during the load:
// a leader Lease changing hands, a node leaving Ready. Past what the
// machine sustains, renewals and heartbeats queue behind the load and
// these follow; they distort every latency after them.
type Disruption struct {
	// AtS is seconds after the load started.
	AtS    float64 `json:"at_s"`
	Kind   string  `json:"kind"` // leader, node
	Detail string  `json:"detail"`
}

// ActorUsage is one actor's CPU time and peak resident memory.
type ActorUsage struct {
	Actor string `json:"actor"`
	// CPUSeconds is over the actor's whole life: start-up, load and
	// teardown.
	CPUSeconds float64 `json:"cpu_s"`
	// LoadCPUSeconds is over the load alone (Run.LoadS): the provider's
	// accounts read when the load began and when it ended. Runs before
	// the figure existed, and external runs, have none.
	LoadCPUSeconds float64 `json:"load_cpu_s,omitempty"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
}

// Cluster is the cluster a run measured: its Topology (the same
// document as a profile's cluster block) and what the run made of it.
type Cluster struct {
	Topology provider.Topology `json:"topology"`
	// NodeKind says what ran the pods, e.g. "2 real (containerd) + 50
	// hollow (zero)".
	NodeKind string  `json:"node_kind"`
	Objects  int     `json:"objects"`
	Replicas int     `json:"replicas"`
	QPS      float64 `json:"qps"`
	// Security is what the apiservers' write chain authenticated and
	// authorized with.
	Security string `json:"security,omitempty"`
	// External is the cluster the external provider reached (Topology is
	// then empty: kstep ran none of it).
	External *External `json:"external,omitempty"`
	// NotAsUp is every setting in which the cluster differs from the one
	// `kstep up` starts with its defaults, one "name: value (kstep up:
	// value)" each (bench.NotAsUp); empty when none does. Nil: not
	// recorded (a run on the external provider, whose cluster kstep does
	// not run, or a run.json from before the field).
	NotAsUp []string `json:"not_as_up,omitzero"`
}

// NotAsUpText is the report header's line on NotAsUp: every setting in
// which the cluster is not as `kstep up` starts it, or that none is; ""
// when the run did not record them.
func (c Cluster) NotAsUpText() string {
	switch {
	case c.NotAsUp == nil:
		return ""
	case len(c.NotAsUp) == 0:
		return "cluster settings: as kstep up starts it (no setting differs from its defaults)"
	}
	return "cluster settings not as kstep up starts it: " + strings.Join(c.NotAsUp, "; ")
}

// clusterV1 is SchemaV1's cluster.
type clusterV1 struct {
	EtcdMembers        int     `json:"etcd_members"`
	APIServers         int     `json:"apiservers"`
	ControllerManagers int     `json:"controller_managers"`
	Schedulers         int     `json:"schedulers"`
	Nodes              int     `json:"nodes"`
	NodeKind           string  `json:"node_kind"`
	Objects            int     `json:"objects"`
	Replicas           int     `json:"replicas"`
	QPS                float64 `json:"qps"`
	Security           string  `json:"security,omitempty"`
	EtcdHeartbeatMS    int64   `json:"etcd_heartbeat_ms,omitempty"`
	EtcdElectionMS     int64   `json:"etcd_election_ms,omitempty"`
}

// cluster converts: v1 counted every node in Nodes, and its NodeKind began
// "<n> real" when some were real ("2 real (containerd) + 50 hollow (zero)");
// otherwise all were hollow.
func (c clusterV1) cluster() Cluster {
	t := provider.Topology{EtcdMembers: c.EtcdMembers, APIServers: c.APIServers,
		ControllerManagers: c.ControllerManagers, Schedulers: c.Schedulers, HollowNodes: c.Nodes}
	var real int
	if n, err := fmt.Sscanf(c.NodeKind, "%d real", &real); err == nil && n == 1 && real <= c.Nodes {
		t.RealNodes, t.HollowNodes = real, c.Nodes-real
	}
	t.Etcd.HeartbeatInterval.Duration = time.Duration(c.EtcdHeartbeatMS) * time.Millisecond
	t.Etcd.ElectionTimeout.Duration = time.Duration(c.EtcdElectionMS) * time.Millisecond
	return Cluster{Topology: t, NodeKind: c.NodeKind, Objects: c.Objects, Replicas: c.Replicas, QPS: c.QPS, Security: c.Security}
}

// Node kinds of a Step or a Population.
const (
	NodesAll    = "all"    // every pod, or a ReplicaSet-level step
	NodesReal   = "real"   // pods on real (containerd) nodes
	NodesHollow = "hollow" // pods on hollow nodes (simulated runtime)
)

// VerdictSimulated is the verdict of a transition that ran on the hollow
// nodes' simulated runtime: it measures the latency profile, so it is set
// beside no documented range.
const VerdictSimulated = "simulated"

// Step is one transition's latency distribution.
type Step struct {
	Step string `json:"step"` // ①, ②, ... or e2e
	Name string `json:"name"`
	// Nodes is the population the samples come from: all, real or hollow.
	Nodes string `json:"nodes"`
	From  string `json:"from"`
	To    string `json:"to"`
	// Chain says why From causally precedes To (who stamps each, and the
	// message that links them).
	Chain string `json:"chain,omitempty"`
	// Simulated: the transition ran on the hollow nodes' simulated runtime
	// (step ⑦ there), so it measures the latency profile, not a runtime.
	Simulated bool `json:"simulated,omitempty"`
	Summary
	// DocumentedMS is the documented time scale [lo, hi]; nil when none.
	DocumentedMS *[2]float64 `json:"documented_ms"`
	// Verdict compares p50 with the range: faster, within, slower, n/a, or
	// simulated (no verdict on what was not measured for real).
	Verdict string `json:"verdict"`
	// SamplesMS are the raw latencies, for compare's rank test.
	SamplesMS []float64 `json:"samples_ms,omitempty"`
}

// Key identifies a step across runs: its number, name and population.
func (s Step) Key() string {
	n := s.Nodes
	if n == "" {
		n = NodesAll
	}
	return s.Step + "|" + s.Name + "|" + n
}

// Population is the pods of one node kind.
type Population struct {
	Nodes string `json:"nodes"` // real or hollow
	// Runtime is what ran the pods: "containerd" or "simulated (<latency
	// profile>)".
	Runtime  string `json:"runtime"`
	Pods     int    `json:"pods"`
	EndToEnd Step   `json:"end_to_end"`
	// Step7SharePct is the distribution of each pod's share of step ⑦
	// (kubelet noticed → readiness) in its end to end, in percent, beside
	// the documented 80–95 % (DocumentedStep7Share).
	Step7SharePct Summary `json:"step7_share_pct"`
}

// DocumentedStep7Share is the documented share of step ⑦ in the end to end,
// in percent.
var DocumentedStep7Share = [2]float64{80, 95}

// NegativeSample is one sample whose end was stamped before its start.
type NegativeSample struct {
	Step      string  `json:"step"`
	Name      string  `json:"name"`
	Namespace string  `json:"namespace"`
	Pod       string  `json:"pod"`
	UID       string  `json:"uid"`
	MS        float64 `json:"ms"`
	// From and To say which actor stamped each end.
	FromActor string `json:"from_actor"`
	ToActor   string `json:"to_actor"`
}

// Summary is a distribution in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Throughput is pods reaching Ready.
type Throughput struct {
	// PodsPerS is Ready pods over (last Ready − first client send).
	PodsPerS float64 `json:"pods_per_s"`
	// PerSecond[i] is how many pods were seen Ready in second i of the run.
	PerSecond []int `json:"per_second"`
}

// MissingSteps is one pod and the steps it lacks.
type MissingSteps struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	UID       string   `json:"uid"`
	Missing   []string `json:"missing"`
}

// ReadRun reads dir/run.json (or the file itself when path is one).
func ReadRun(path string) (*Run, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "run.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	var head struct {
		Schema  string          `json:"schema"`
		Cluster json.RawMessage `json:"cluster"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	switch head.Schema {
	case Schema, SchemaV2:
		var r Run
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("run %s: %w", path, err)
		}
		r.Cluster.Topology = recordHollowEvents(r.Cluster.Topology)
		return &r, nil
	case SchemaV1:
		// Everything but the cluster kept its keys.
		var r struct {
			Run
			Cluster json.RawMessage `json:"cluster"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("run %s: %w", path, err)
		}
		var c clusterV1
		if len(r.Cluster) > 0 {
			if err := json.Unmarshal(r.Cluster, &c); err != nil {
				return nil, fmt.Errorf("run %s: cluster: %w", path, err)
			}
		}
		run := r.Run
		run.Cluster = c.cluster()
		run.Cluster.Topology = recordHollowEvents(run.Cluster.Topology)
		return &run, nil
	}
	return nil, fmt.Errorf("run %s: schema %q, this kstep reads %q, %q and %q", path, head.Schema, Schema, SchemaV2, SchemaV1)
}

// recordHollowEvents fills in hollowEvents for a run.json written before
// the field: hollow-nodes then wrote Events only with --events in its args.
// A run without hollow nodes keeps none.
func recordHollowEvents(t provider.Topology) provider.Topology {
	if t.HollowEvents == nil && t.HollowNodes > 0 {
		on := t.HollowEventsBeforeField()
		t.HollowEvents = &on
	}
	return t
}

// EndpointsObject names the object whose acknowledged write stamped the
// run's endpoints.updated: "EndpointSlice" or "Endpoints".
func (r *Run) EndpointsObject() string {
	if r.EndpointsStamp == "endpointslices" {
		return "EndpointSlice"
	}
	return "Endpoints"
}
