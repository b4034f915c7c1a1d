package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// rsLevel steps are stamped on the ReplicaSet (its UID); the others on a pod.
var rsLevel = map[string]bool{
	loadgen.ClientRSSent: true, loadgen.ClientRSAcked: true,
	trace.RSReceived: true, trace.RSPersisted: true, trace.RSCached: true, trace.RSObserved: true,
}

// repeats are steps an object may be stamped with more than once, of which
// a transition takes the first at or after its start (a status written
// again, a pod listed again after it left the endpoints).
var repeats = map[string]bool{trace.PodStatusPersisted: true, trace.EndpointsUpdated: true}

// allSteps is every step a run may carry, in chain order.
var allSteps = []string{
	loadgen.ClientRSSent, trace.RSReceived, trace.RSPersisted, trace.RSCached, loadgen.ClientRSAcked, trace.RSObserved,
	trace.PodCreateSent, trace.PodPersisted, trace.PodCached, loadgen.ClientPodAdded, trace.PodObservedSched, trace.PodScheduled, trace.PodBound,
	trace.PodBoundCached, loadgen.ClientPodBound, trace.PodObservedKubelet, trace.PodSandboxReady, trace.PodImagePulled, trace.PodContainerStarted, trace.PodProbeReady,
	trace.PodStatusPersisted, loadgen.ClientPodRunning, trace.PodReadyCached, trace.EndpointsUpdated, trace.PodReadyObserved, loadgen.ClientEndpointsListed,
}

// outsideSteps are the load generator's outside view (loadgen.Options.
// Outside): a run counts them among its steps only when it stamps them
// (Input.Outside), so a run without them does not list them unavailable.
var outsideSteps = map[string]bool{
	loadgen.ClientPodAdded: true, loadgen.ClientPodBound: true, loadgen.ClientPodRunning: true, loadgen.ClientEndpointsListed: true,
}

// harnessSteps are stamped by kstep's load generator (its requests and
// its watches, on its own clock); every other step by a cluster's actor.
var harnessSteps = map[string]bool{
	loadgen.ClientRSSent: true, loadgen.ClientRSAcked: true, trace.PodReadyObserved: true,
	loadgen.ClientPodAdded: true, loadgen.ClientPodBound: true, loadgen.ClientPodRunning: true, loadgen.ClientEndpointsListed: true,
}

// transition is one row of the step table, between two stamps of which the
// first causally precedes the second: Chain says why. From lists candidates:
// the first one this run's actors stamp is used.
type transition struct {
	step, name string
	from       []string
	to         string
	// viaAPIServer: From is a watch-cache stamp, taken from the apiserver
	// the actor that stamped To talks to (Input.APIServerOf): that
	// apiserver's watch delivered the change to it.
	viaAPIServer bool
	// runtime: the transition happens in the container runtime (step ⑦),
	// simulated on hollow nodes.
	runtime bool
	chain   string
	// chainOf, when set, is the chain for this run's Input (the object the
	// stamping actor wrote depends on it); chain is its default.
	chainOf func(Input) string
	doc     func(replicas int) *[2]float64
}

func rng(lo, hi float64) func(int) *[2]float64 {
	return func(int) *[2]float64 { return &[2]float64{lo, hi} }
}

// The documented time scales (shared/SEED-DIGEST.md). "A few ms" is read as
// 1–10 ms, "tens of ms" as up to 100 ms.
var transitions = []transition{
	{step: "①", name: "client → apiserver: sent → 201", from: []string{loadgen.ClientRSSent}, to: loadgen.ClientRSAcked, doc: rng(10, 50),
		chain: "the load generator stamps both: before it sends the create, when the 201 arrives"},
	{step: "①", name: "inside: admission + etcd write", from: []string{trace.RSReceived}, to: trace.RSPersisted, doc: rng(5, 30),
		chain: "the apiserver that serves the create stamps both: when the request arrived, when etcd acknowledged the write"},
	{step: "②", name: "watch propagation → controller", from: []string{trace.RSCached}, to: trace.RSObserved, viaAPIServer: true, doc: rng(1, 10),
		chain: "rs.cached: the controller-manager's apiserver's watch cache got the ReplicaSet from etcd, before it offered it to any watcher; rs.observed: the controller's informer handed it on"},
	{step: "③", name: "controller: rs observed → pod create sent", from: []string{trace.RSObserved}, to: trace.PodCreateSent,
		doc:   func(n int) *[2]float64 { return &[2]float64{1, 10 * float64(n)} },
		chain: "the controller-manager stamps both: when its informer handed the ReplicaSet on, when it sent the pod's create"},
	{step: "③", name: "pod write: sent → persisted", from: []string{trace.PodCreateSent}, to: trace.PodPersisted, doc: rng(5, 30),
		chain: "pod.create.sent: the controller, before it sends the create; pod.persisted: the apiserver serving it, when etcd acknowledged the write"},
	{step: "④", name: "scheduler notices", from: []string{trace.PodCached}, to: trace.PodObservedSched, viaAPIServer: true, doc: rng(1, 10),
		chain: "pod.cached: the scheduler's apiserver's watch cache got the new pod from etcd; pod.observed.scheduler: the scheduler's informer handed it on"},
	{step: "⑤", name: "node selection", from: []string{trace.PodObservedSched}, to: trace.PodScheduled, doc: rng(1, 100),
		chain: "the scheduler stamps both: when its informer handed the pod on, when its cycle chose a node"},
	{step: "⑤", name: "binding persisted", from: []string{trace.PodScheduled}, to: trace.PodBound,
		chain: "pod.scheduled: the scheduler, before it sends the binding; pod.bound: the apiserver serving pods/binding, when etcd acknowledged it"},
	{step: "⑥", name: "kubelet notices", from: []string{trace.PodBoundCached}, to: trace.PodObservedKubelet, viaAPIServer: true, doc: rng(1, 10),
		chain: "pod.bound.cached: the kubelet's apiserver's watch cache got the binding from etcd; pod.observed.kubelet: the kubelet's pod worker got the pod"},
	{step: "⑦-b", name: "sandbox + CNI + volumes", from: []string{trace.PodObservedKubelet}, to: trace.PodSandboxReady, runtime: true, doc: rng(500, 5000),
		chain: "the kubelet stamps both: when its pod worker got the pod, when RunPodSandbox returned"},
	{step: "⑦-a", name: "image pull", from: []string{trace.PodSandboxReady}, to: trace.PodImagePulled, runtime: true, doc: rng(1000, 60000),
		chain: "the kubelet stamps both: when the sandbox was ready, when the image was present"},
	{step: "⑦-c", name: "container start", from: []string{trace.PodImagePulled}, to: trace.PodContainerStarted, runtime: true,
		chain: "the kubelet stamps both: when the image was present, when StartContainer returned"},
	{step: "⑦-c", name: "readiness", from: []string{trace.PodContainerStarted}, to: trace.PodProbeReady, runtime: true,
		chain: "the kubelet stamps both: when the container started, when the readiness probe first passed"},
	{step: "⑦-c", name: "container start + readiness", from: []string{trace.PodImagePulled}, to: trace.PodProbeReady, runtime: true, doc: rng(1000, 300000),
		chain: "the kubelet stamps both: when the image was present, when the readiness probe first passed"},
	{step: "⑧", name: "status update persisted", from: []string{trace.PodProbeReady, trace.PodContainerStarted}, to: trace.PodStatusPersisted, doc: rng(1, 10),
		chain: "the kubelet stamps both: when the probe passed, when the apiserver acknowledged its status write (or, its reply lost, when its informer showed it persisted)"},
	{step: "⑧", name: "endpoints list the pod", from: []string{trace.PodReadyCached}, to: trace.EndpointsUpdated, viaAPIServer: true,
		chain: endpointsChain("endpoints", "Endpoints"), chainOf: func(in Input) string {
			if in.EndpointsStamp == controller.StampEndpointSlices {
				return endpointsChain("EndpointSlice", "EndpointSlice")
			}
			return endpointsChain("endpoints", "Endpoints")
		}},
	{step: "⑧", name: "client watch sees Ready", from: []string{trace.PodReadyCached}, to: trace.PodReadyObserved, viaAPIServer: true, doc: rng(1, 10),
		chain: "pod.ready.cached: the load generator's apiserver's watch cache got the Ready status from etcd; pod.ready.observed: the load generator's watch delivered it"},
	// The documented claim: the control plane's own part within 50 ms.
	{step: "①–⑤", name: "control plane: client sent → bound", from: []string{loadgen.ClientRSSent}, to: trace.PodBound, doc: rng(0, 50),
		chain: "client.rs.sent: the load generator, before it sends the ReplicaSet; pod.bound: the binding apiserver, when etcd acknowledged the pod's binding (every step between links them)"},
}

// endpointsChain is the ⑧ endpoints row's chain, naming the controller
// that stamps endpoints.updated and the object it wrote.
func endpointsChain(ctrl, object string) string {
	return "pod.ready.cached: the " + ctrl + " controller's apiserver's watch cache got the Ready status from etcd; endpoints.updated: the controller's " +
		object + " write listing the pod was acknowledged"
}

// The outside view: what kstep's own watches see of a pod, each row
// between two stamps of the load generator, on its clock. Every row but
// the first and the last is measured within one watch (the pod watch
// delivers one pod's changes in order), so each start precedes its end;
// those two start at the client's own send.
var outsideTransitions = []transition{
	{step: "①–③", name: "outside: client sent → pod seen created", from: []string{loadgen.ClientRSSent}, to: loadgen.ClientPodAdded,
		chain: "client.rs.sent: the load generator, before it sends the ReplicaSet; client.pod.added: its pod watch first delivered the pod the controller created for it"},
	{step: "④–⑤", name: "outside: pod seen created → seen bound", from: []string{loadgen.ClientPodAdded}, to: loadgen.ClientPodBound,
		chain: "both from the load generator's pod watch: when it first delivered the pod, when it first showed spec.nodeName set (0 when the first delivery was bound already)"},
	// The control plane's part as the client sees it: the row find-max's
	// SLO is judged on, on every provider.
	{step: "①–⑤", name: "outside: control plane: client sent → pod seen bound", from: []string{loadgen.ClientRSSent}, to: loadgen.ClientPodBound,
		chain: "client.rs.sent: the load generator, before it sends the ReplicaSet; client.pod.bound: its pod watch first showed the pod with spec.nodeName set (the watch delivered the binding after etcd stored it)"},
	{step: "⑥–⑦", name: "outside: seen bound → seen Running", from: []string{loadgen.ClientPodBound}, to: loadgen.ClientPodRunning,
		chain: "both from the load generator's pod watch: when it first showed spec.nodeName, when it first showed phase Running (the kubelet's status write)"},
	{step: "⑦–⑧", name: "outside: seen Running → seen Ready", from: []string{loadgen.ClientPodRunning}, to: trace.PodReadyObserved,
		chain: "both from the load generator's pod watch: when it first showed phase Running, when it first showed the Ready condition True"},
	// Not from pod.ready.observed: that is another watch (the pod watch),
	// which can deliver the Ready status after the Endpoints watch
	// delivers the listing the Ready status caused (seen up to 10 ms later
	// on a kstep cluster), so only the client's own send precedes it.
	{step: "①–⑧", name: "outside: client sent → Endpoints seen listing the pod", from: []string{loadgen.ClientRSSent}, to: loadgen.ClientEndpointsListed,
		chain: "client.rs.sent: the load generator, before it sends the ReplicaSet; client.endpoints.listed: its Endpoints watch first listed the pod as a ready address (the one stamp before it that precedes it for sure: its pod watch is another stream)"},
}

var endToEnd = transition{step: "e2e", name: "client sent → pod Ready observed", from: []string{loadgen.ClientRSSent}, to: trace.PodReadyObserved,
	chain: "client.rs.sent: the load generator, before it sends the ReplicaSet; pod.ready.observed: its watch delivered the pod Ready"}

// Input is what Analyze joins.
type Input struct {
	Events []trace.Event
	// Objects are the UIDs the load generator created (its write log).
	Objects []types.UID
	// Pods ties each pod the load generator watched to its ReplicaSet.
	Pods     []loadgen.PodOwner
	Replicas int
	// APIServerOf maps an actor, as it stamps, to the apiserver it talks
	// to, as that apiserver stamps: a watcher's receipt is measured from
	// its own apiserver's watch-cache stamp. An actor missing here is
	// measured from the earliest apiserver's (which is no later).
	APIServerOf map[string]string
	// HollowActors are the actors that run hollow nodes; a pod whose
	// kubelet stamps come from one ran on the simulated runtime, from any
	// other kubelet on a real node.
	HollowActors map[string]bool
	// LatencyProfile is the hollow runtime's (the topology's), for labels.
	LatencyProfile string
	// EndpointsStamp is the profile's: which controller stamped
	// endpoints.updated, and so which object its chain names.
	EndpointsStamp string
	// Outside: the load generator stamped the outside view (its watches'
	// client.pod.* and client.endpoints.listed).
	Outside bool
	// External: the cluster's components do not stamp kstep's tracer (the
	// external provider): a step only a component stamps is then not
	// observable on this cluster, rather than unavailable.
	External bool
	// NodeKinds maps a node to the kind of its pods (results.NodesReal,
	// results.NodesHollow), for pods no kubelet stamped: what the cluster's
	// node objects say (the external provider).
	NodeKinds map[string]string
	// WarmUp leaves the start of the load out of the rows (the steps, end
	// to end, the populations): the objects among the first
	// WarmUp.Objects the load generator sent (by client.rs.sent) and those
	// sent within WarmUp.Duration of its first send. Their pods still
	// count for validity, throughput and the waterfalls. Zero: none.
	WarmUp WarmUp
}

// stamp is one actor's stamp of a step.
type stamp struct {
	ts    int64
	actor string
}

// stamps holds every stamp of (step, uid), sorted by time.
type stamps map[string]map[types.UID][]stamp

// first is the earliest stamp of step for uid.
func (s stamps) first(step string, uid types.UID) (stamp, bool) {
	ts := s[step][uid]
	if len(ts) == 0 {
		return stamp{}, false
	}
	return ts[0], true
}

// end is the stamp a transition ends at: for a step that repeats, the first
// at or after start; otherwise the first (so an end stamped before its start
// shows as a negative sample, never hidden behind a later stamp).
func (s stamps) end(step string, uid types.UID, start int64) (stamp, bool) {
	ts := s[step][uid]
	if len(ts) == 0 {
		return stamp{}, false
	}
	if repeats[step] {
		for _, t := range ts {
			if t.ts >= start {
				return t, true
			}
		}
	}
	return ts[0], true
}

// by is actor's stamp of step for uid, else the earliest of any actor's.
func (s stamps) by(step string, uid types.UID, actor string) (stamp, bool) {
	ts := s[step][uid]
	if len(ts) == 0 {
		return stamp{}, false
	}
	if actor != "" {
		for _, t := range ts {
			if t.actor == actor {
				return t, true
			}
		}
	}
	return ts[0], true
}

// sample is one measured transition of one object.
type sample struct {
	ms       float64
	from, to stamp
	pod      *loadgen.PodOwner // nil for a ReplicaSet-level transition
	idx      int               // pod's index in the run's pods
	rs       types.UID
}

// Analyze joins the events by UID and fills the run's steps, end to end,
// populations, throughput, unavailable steps, negative samples and
// incomplete pods. It sets Valid to false (with a reason) when a pod misses
// a step this run stamps or a transition ends before it starts.
func Analyze(in Input, r *results.Run) {
	st := stamps{}
	for _, e := range in.Events {
		m := st[e.Step]
		if m == nil {
			m = map[types.UID][]stamp{}
			st[e.Step] = m
		}
		m[e.UID] = append(m[e.UID], stamp{e.TS, e.Actor})
	}
	for _, m := range st {
		for _, ts := range m {
			sort.SliceStable(ts, func(i, j int) bool { return ts[i].ts < ts[j].ts })
		}
	}
	available := func(step string) bool { return len(st[step]) > 0 }
	// steps are the steps this run may carry.
	var steps []string
	for _, s := range allSteps {
		if !outsideSteps[s] || in.Outside || available(s) {
			steps = append(steps, s)
		}
	}
	r.Unavailable, r.NotObservable, r.Sources = nil, nil, nil
	for _, s := range steps {
		src := results.StepSource{Step: s, Where: results.FromCluster}
		switch {
		case !available(s) && in.External && !harnessSteps[s]:
			src.Where = results.NotObservable
			r.NotObservable = append(r.NotObservable, s)
		case !available(s):
			src.Where = results.FromNowhere
		case harnessSteps[s]:
			src.Where = results.FromHarness
		}
		if !available(s) {
			r.Unavailable = append(r.Unavailable, s)
		}
		seen := map[string]bool{}
		for _, m := range st[s] {
			for _, t := range m {
				seen[t.actor] = true
			}
		}
		src.Actors = slices.Sorted(maps.Keys(seen))
		r.Sources = append(r.Sources, src)
	}
	objects := map[types.UID]bool{}
	for _, u := range in.Objects {
		objects[u] = true
	}
	var pods []loadgen.PodOwner
	for _, p := range in.Pods {
		if objects[p.RSUID] {
			pods = append(pods, p)
		}
	}
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	r.Pods = len(pods)
	r.Events = len(in.Events)
	warm := warmUpObjects(in.WarmUp, st, objects)
	r.WarmUp = nil
	if in.WarmUp.set() {
		r.WarmUp = &results.WarmUp{Objects: in.WarmUp.Objects, DurationS: in.WarmUp.Duration.Seconds(), LeftOutObjects: len(warm)}
		for _, p := range pods {
			if warm[p.RSUID] {
				r.WarmUp.Pods++
			}
		}
	}
	// steady are the samples the rows take: not of a warm-up object.
	steady := func(samples []sample) []sample {
		if len(warm) == 0 {
			return samples
		}
		out := make([]sample, 0, len(samples))
		for _, s := range samples {
			u := s.rs
			if s.pod != nil {
				u = s.pod.RSUID
			}
			if !warm[u] {
				out = append(out, s)
			}
		}
		return out
	}

	// uidFor is the UID a step is stamped on for pod p.
	uidFor := func(step string, p loadgen.PodOwner) types.UID {
		if rsLevel[step] {
			return p.RSUID
		}
		return p.UID
	}
	// kind is the node kind a pod ran on, from the actor that stamped its
	// kubelet steps; "" when no kubelet stamped it.
	kind := func(p loadgen.PodOwner) string {
		for _, step := range []string{trace.PodObservedKubelet, trace.PodSandboxReady, trace.PodContainerStarted} {
			if s, ok := st.first(step, p.UID); ok {
				if in.HollowActors[s.actor] {
					return results.NodesHollow
				}
				return results.NodesReal
			}
		}
		return in.NodeKinds[p.Node]
	}
	kinds := map[string]bool{}
	podKind := make([]string, len(pods))
	for i, p := range pods {
		podKind[i] = kind(p)
		if podKind[i] != "" {
			kinds[podKind[i]] = true
		}
	}

	// measure takes every sample of t: per ReplicaSet when both ends are
	// ReplicaSet steps, else per pod (pods[i] with podKind[i]).
	measure := func(t transition) (string, []sample, bool) {
		from := ""
		for _, f := range t.from {
			if available(f) {
				from = f
				break
			}
		}
		if from == "" || !available(t.to) {
			return "", nil, false
		}
		take := func(fromUID, toUID types.UID) (sample, bool) {
			var a, b stamp
			var ok bool
			if t.viaAPIServer {
				if b, ok = st.first(t.to, toUID); !ok {
					return sample{}, false
				}
				if a, ok = st.by(from, fromUID, in.APIServerOf[b.actor]); !ok {
					return sample{}, false
				}
			} else {
				if a, ok = st.first(from, fromUID); !ok {
					return sample{}, false
				}
				if b, ok = st.end(t.to, toUID, a.ts); !ok {
					return sample{}, false
				}
			}
			return sample{ms: float64(b.ts-a.ts) / 1e6, from: a, to: b}, true
		}
		var out []sample
		if rsLevel[from] && rsLevel[t.to] {
			for _, u := range sortedUIDs(objects) {
				if s, ok := take(u, u); ok {
					s.rs = u
					out = append(out, s)
				}
			}
		} else {
			for i := range pods {
				if s, ok := take(uidFor(from, pods[i]), uidFor(t.to, pods[i])); ok {
					s.pod, s.idx = &pods[i], i
					out = append(out, s)
				}
			}
		}
		return from, out, true
	}
	newStep := func(t transition, from, nodes string, samples []sample) results.Step {
		ms := make([]float64, len(samples))
		for i, s := range samples {
			ms[i] = s.ms
		}
		chain := t.chain
		if t.chainOf != nil {
			chain = t.chainOf(in)
		}
		s := results.Step{Step: t.step, Name: t.name, Nodes: nodes, From: from, To: t.to, Chain: chain,
			Summary: results.Summarize(ms), SamplesMS: ms}
		if t.doc != nil {
			s.DocumentedMS = t.doc(in.Replicas)
		}
		s.Verdict = results.Verdict(s.P50, s.Count, s.DocumentedMS)
		if t.runtime && nodes == results.NodesHollow {
			s.Simulated, s.Verdict = true, results.VerdictSimulated
		}
		return s
	}
	// split groups a pod-level transition's samples by node kind; with no
	// kind known (no kubelet stamps) they stay one "all" population.
	split := func(t transition, from string, samples []sample) []results.Step {
		if len(samples) == 0 || samples[0].pod == nil || len(kinds) == 0 {
			return []results.Step{newStep(t, from, results.NodesAll, samples)}
		}
		byKind := map[string][]sample{}
		for _, s := range samples {
			k := podKind[s.idx]
			byKind[k] = append(byKind[k], s)
		}
		var out []results.Step
		for _, k := range []string{results.NodesReal, results.NodesHollow, ""} {
			if ss, ok := byKind[k]; ok {
				if k == "" {
					k = results.NodesAll // pods no kubelet stamped: an incomplete run
				}
				out = append(out, newStep(t, from, k, ss))
			}
		}
		return out
	}
	r.Negative = nil
	negative := func(t transition, samples []sample) {
		for _, s := range samples {
			if s.ms >= 0 {
				continue
			}
			n := results.NegativeSample{Step: t.step, Name: t.name, MS: s.ms, FromActor: s.from.actor, ToActor: s.to.actor}
			if s.pod != nil {
				n.Namespace, n.Pod, n.UID = s.pod.Namespace, s.pod.Name, string(s.pod.UID)
			} else {
				n.UID = string(s.rs)
			}
			r.Negative = append(r.Negative, n)
		}
	}

	r.Steps = nil
	for _, t := range append(slices.Clip(transitions), outsideTransitions...) {
		from, samples, ok := measure(t)
		if !ok {
			continue
		}
		negative(t, samples)
		r.Steps = append(r.Steps, split(t, from, steady(samples))...)
	}
	from, e2e, ok := measure(endToEnd)
	if ok {
		negative(endToEnd, e2e)
		e2e = steady(e2e)
		r.EndToEnd = newStep(endToEnd, from, results.NodesAll, e2e)
	} else {
		r.EndToEnd = results.Step{Step: endToEnd.step, Name: endToEnd.name, Nodes: results.NodesAll, From: endToEnd.from[0], To: endToEnd.to,
			Chain: endToEnd.chain, Verdict: results.NA}
	}
	r.Populations = populations(st, pods, podKind, e2e, in.LatencyProfile, func(k string, ss []sample) results.Step {
		return newStep(endToEnd, from, k, ss)
	})
	if n := len(r.Negative); n > 0 {
		f := r.Negative[0]
		r.Valid = false
		r.Invalid = append(r.Invalid, fmt.Sprintf("%d samples end before they start, a broken causal chain (first: %s %s, %s/%s %.3f ms, %s → %s)",
			n, f.Step, f.Name, f.Namespace, f.Pod, f.MS, f.FromActor, f.ToActor))
	}

	r.Waterfalls = waterfalls(st, pods, steps, uidFor, available)

	// Completeness: every pod carries every step some actor of the run
	// stamps (RS steps through its ReplicaSet).
	r.Incomplete = nil
	for _, p := range pods {
		var missing []string
		for _, s := range steps {
			if !available(s) {
				continue
			}
			if _, ok := st.first(s, uidFor(s, p)); !ok {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			r.Incomplete = append(r.Incomplete, results.MissingSteps{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Missing: missing})
		}
	}
	if n := len(r.Incomplete); n > 0 {
		r.Valid = false
		r.Invalid = append(r.Invalid, fmt.Sprintf("%d of %d pods miss a step this run's actors stamp (first: %s/%s lacks %v)",
			n, len(pods), r.Incomplete[0].Namespace, r.Incomplete[0].Name, r.Incomplete[0].Missing))
	}
	if len(pods) == 0 {
		r.Valid = false
		r.Invalid = append(r.Invalid, "no pods of the job were observed")
	} else if r.WarmUp != nil && r.WarmUp.Pods == len(pods) {
		r.Valid = false
		r.Invalid = append(r.Invalid, fmt.Sprintf("the warm-up (%s) leaves out all %d pods: no row has a sample", r.WarmUp.Rule(), len(pods)))
	}

	// Throughput: pods Ready over the time since the first client send.
	start := int64(math.MaxInt64)
	for _, u := range sortedUIDs(objects) {
		if a, ok := st.first(loadgen.ClientRSSent, u); ok && a.ts < start {
			start = a.ts
		}
	}
	var ready []int64
	for _, p := range pods {
		if b, ok := st.first(trace.PodReadyObserved, p.UID); ok {
			ready = append(ready, b.ts)
		}
	}
	r.Throughput = results.Throughput{}
	if len(ready) > 0 && start != math.MaxInt64 {
		sort.Slice(ready, func(i, j int) bool { return ready[i] < ready[j] })
		span := float64(ready[len(ready)-1]-start) / 1e9
		if span > 0 {
			r.Throughput.PodsPerS = float64(len(ready)) / span
		}
		secs := make([]int, int(span)+1)
		for _, b := range ready {
			if i := int((b - start) / 1e9); i >= 0 && i < len(secs) {
				secs[i]++
			}
		}
		r.Throughput.PerSecond = secs
	}
}

// WarmUp is the start of a load left out of a run's rows (Input.WarmUp,
// a profile's warmUp).
type WarmUp struct {
	// Objects: the first this many objects the load generator sent.
	Objects int `json:"objects,omitempty"`
	// Duration: the objects sent within this of its first send.
	Duration loadgen.Duration `json:"duration,omitzero"`
}

func (w WarmUp) set() bool { return w.Objects > 0 || w.Duration.Duration > 0 }

// Validate refuses a negative warm-up and one that leaves out every one of
// count objects.
func (w WarmUp) Validate(count int) error {
	switch {
	case w.Objects < 0:
		return fmt.Errorf("warmUp.objects: %d is negative", w.Objects)
	case w.Duration.Duration < 0:
		return fmt.Errorf("warmUp.duration: %v is negative", w.Duration.Duration)
	case count > 0 && w.Objects >= count:
		return fmt.Errorf("warmUp.objects: %d leaves out all %d objects of the job: nothing would be measured", w.Objects, count)
	}
	return nil
}

// warmUpObjects are the objects w leaves out: by client.rs.sent, the
// first w.Objects, and those sent within w.Duration of the first send.
// An object the load generator did not stamp is never left out.
func warmUpObjects(w WarmUp, st stamps, objects map[types.UID]bool) map[types.UID]bool {
	if !w.set() {
		return nil
	}
	type sent struct {
		uid types.UID
		ts  int64
	}
	var order []sent
	for _, u := range sortedUIDs(objects) {
		if a, ok := st.first(loadgen.ClientRSSent, u); ok {
			order = append(order, sent{u, a.ts})
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].ts < order[j].ts })
	out := map[types.UID]bool{}
	for i, o := range order {
		if i < w.Objects || (w.Duration.Duration > 0 && o.ts-order[0].ts < w.Duration.Nanoseconds()) {
			out[o.uid] = true
		}
	}
	return out
}

// populations is each node kind's end to end (from the run's end-to-end
// samples) and each pod's share of step ⑦ in it, in percent.
func populations(st stamps, pods []loadgen.PodOwner, podKind []string, e2e []sample, latencyProfile string, step func(string, []sample) results.Step) []results.Population {
	byKind := map[string][]sample{}
	share := map[string][]float64{}
	for _, s := range e2e {
		if s.pod == nil || podKind[s.idx] == "" {
			continue
		}
		k := podKind[s.idx]
		byKind[k] = append(byKind[k], s)
		// ⑦: the kubelet noticing the pod → its readiness (or its start,
		// for a pod without a probe).
		a, ok1 := st.first(trace.PodObservedKubelet, s.pod.UID)
		b, ok2 := st.first(trace.PodProbeReady, s.pod.UID)
		if !ok2 {
			b, ok2 = st.first(trace.PodContainerStarted, s.pod.UID)
		}
		if ok1 && ok2 && s.ms > 0 {
			share[k] = append(share[k], float64(b.ts-a.ts)/1e6/s.ms*100)
		}
	}
	var out []results.Population
	for _, k := range []string{results.NodesReal, results.NodesHollow} {
		ss, ok := byKind[k]
		if !ok {
			continue
		}
		p := results.Population{Nodes: k, Runtime: "containerd", Pods: len(ss), EndToEnd: step(k, ss), Step7SharePct: results.Summarize(share[k])}
		if k == results.NodesHollow {
			lp := latencyProfile
			if lp == "" {
				lp = "zero"
			}
			p.Runtime = "simulated (" + lp + ")"
		}
		out = append(out, p)
	}
	return out
}

// waterfalls picks the median and the p99 pod by end to end and lays out
// every stamp of each after its first (the client's send).
func waterfalls(st stamps, pods []loadgen.PodOwner, steps []string, uidFor func(string, loadgen.PodOwner) types.UID, available func(string) bool) []results.Waterfall {
	type timed struct {
		p        loadgen.PodOwner
		start, d int64
	}
	var done []timed
	for _, p := range pods {
		a, ok1 := st.first(loadgen.ClientRSSent, p.RSUID)
		b, ok2 := st.end(trace.PodReadyObserved, p.UID, a.ts)
		if ok1 && ok2 {
			done = append(done, timed{p, a.ts, b.ts - a.ts})
		}
	}
	if len(done) == 0 {
		return nil
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].d < done[j].d })
	rank := func(q float64) int { return max(0, int(math.Ceil(q*float64(len(done))))-1) }
	var out []results.Waterfall
	for _, pick := range []struct {
		label string
		i     int
	}{{"p50 pod", rank(0.50)}, {"p99 pod", rank(0.99)}} {
		t := done[pick.i]
		w := results.Waterfall{Label: pick.label, Namespace: t.p.Namespace, Name: t.p.Name, EndToEnd: float64(t.d) / 1e6}
		for _, step := range steps {
			if !available(step) {
				continue
			}
			if at, ok := st.end(step, uidFor(step, t.p), t.start); ok {
				w.Marks = append(w.Marks, results.Mark{Step: step, AtMS: float64(at.ts-t.start) / 1e6})
			}
		}
		out = append(out, w)
	}
	return out
}

func sortedUIDs(m map[types.UID]bool) []types.UID {
	out := make([]types.UID, 0, len(m))
	for u := range m {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
