package bench

import (
	"fmt"
	"math"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// rsLevel steps are stamped on the ReplicaSet (its UID); the others on a pod.
var rsLevel = map[string]bool{
	loadgen.ClientRSSent: true, loadgen.ClientRSAcked: true,
	trace.RSReceived: true, trace.RSPersisted: true, trace.RSObserved: true,
}

// allSteps is every step a run may carry, in chain order.
var allSteps = []string{
	loadgen.ClientRSSent, trace.RSReceived, trace.RSPersisted, loadgen.ClientRSAcked, trace.RSObserved,
	trace.PodCreateSent, trace.PodPersisted, trace.PodObservedSched, trace.PodScheduled, trace.PodBound,
	trace.PodObservedKubelet, trace.PodSandboxReady, trace.PodImagePulled, trace.PodContainerStarted, trace.PodProbeReady,
	trace.PodStatusPersisted, trace.EndpointsUpdated, trace.PodReadyObserved,
}

// transition is one row of the step table. From lists candidates: the first
// one this run's actors stamp is used (pod.persisted when the apiserver
// stamps it, else the controller's send time).
type transition struct {
	step, name string
	from       []string
	to         string
	doc        func(replicas int) *[2]float64
}

func rng(lo, hi float64) func(int) *[2]float64 {
	return func(int) *[2]float64 { return &[2]float64{lo, hi} }
}

// The documented ranges, from the seed's time-scale table. "A few ms" is read
// as 1–10 ms, "tens of ms" as up to 100 ms.
var transitions = []transition{
	{"①", "client → apiserver: sent → 201", []string{loadgen.ClientRSSent}, loadgen.ClientRSAcked, rng(10, 50)},
	{"①", "inside: admission + etcd write", []string{trace.RSReceived}, trace.RSPersisted, rng(5, 30)},
	{"②", "watch propagation → controller", []string{trace.RSPersisted, loadgen.ClientRSAcked}, trace.RSObserved, rng(1, 10)},
	{"③", "controller: rs observed → pod create sent", []string{trace.RSObserved}, trace.PodCreateSent, func(n int) *[2]float64 { return &[2]float64{1, 10 * float64(n)} }},
	{"③", "pod write: sent → persisted", []string{trace.PodCreateSent}, trace.PodPersisted, rng(5, 30)},
	{"④", "scheduler notices", []string{trace.PodPersisted, trace.PodCreateSent}, trace.PodObservedSched, rng(1, 10)},
	{"⑤", "node selection", []string{trace.PodObservedSched}, trace.PodScheduled, rng(1, 100)},
	{"⑤", "binding persisted", []string{trace.PodScheduled}, trace.PodBound, nil},
	{"⑥", "kubelet notices", []string{trace.PodBound}, trace.PodObservedKubelet, rng(1, 10)},
	{"⑦-b", "sandbox + CNI + volumes", []string{trace.PodObservedKubelet}, trace.PodSandboxReady, rng(500, 5000)},
	{"⑦-a", "image pull", []string{trace.PodSandboxReady}, trace.PodImagePulled, rng(1000, 60000)},
	{"⑦-c", "container start", []string{trace.PodImagePulled}, trace.PodContainerStarted, nil},
	{"⑦-c", "readiness", []string{trace.PodContainerStarted}, trace.PodProbeReady, nil},
	{"⑦-c", "container start + readiness", []string{trace.PodImagePulled}, trace.PodProbeReady, rng(1000, 300000)},
	{"⑧", "status update persisted", []string{trace.PodProbeReady, trace.PodContainerStarted}, trace.PodStatusPersisted, rng(1, 10)},
	{"⑧", "endpoints list the pod", []string{trace.PodStatusPersisted}, trace.EndpointsUpdated, nil},
	{"⑧", "client watch sees Ready", []string{trace.PodStatusPersisted, trace.PodProbeReady}, trace.PodReadyObserved, rng(1, 10)},
	// The seed's claim: the control plane's own part within 50 ms.
	{"①–⑤", "control plane: client sent → bound", []string{loadgen.ClientRSSent}, trace.PodBound, rng(0, 50)},
}

var endToEnd = transition{"e2e", "client sent → pod Ready observed", []string{loadgen.ClientRSSent}, trace.PodReadyObserved, nil}

// Input is what Analyze joins.
type Input struct {
	Events []trace.Event
	// Objects are the UIDs the load generator created (its write log).
	Objects []types.UID
	// Pods ties each pod the load generator watched to its ReplicaSet.
	Pods     []loadgen.PodOwner
	Replicas int
}

// stamps holds every stamp of (step, uid), sorted.
type stamps map[string]map[types.UID][]int64

// at is the time of step for uid: the first stamp at or after notBefore
// (steps such as pod.status.persisted repeat), else the first one.
func (s stamps) at(step string, uid types.UID, notBefore int64) (int64, bool) {
	ts := s[step][uid]
	if len(ts) == 0 {
		return 0, false
	}
	for _, t := range ts {
		if t >= notBefore {
			return t, true
		}
	}
	return ts[0], true
}

// Analyze joins the events by UID and fills the run's steps, end to end,
// throughput, unavailable steps and incomplete pods. It sets Valid to false
// (with a reason) when a pod misses a step this run stamps.
func Analyze(in Input, r *results.Run) {
	st := stamps{}
	for _, e := range in.Events {
		m := st[e.Step]
		if m == nil {
			m = map[types.UID][]int64{}
			st[e.Step] = m
		}
		m[e.UID] = append(m[e.UID], e.TS)
	}
	for _, m := range st {
		for _, ts := range m {
			sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		}
	}
	available := func(step string) bool { return len(st[step]) > 0 }
	r.Unavailable = nil
	for _, s := range allSteps {
		if !available(s) {
			r.Unavailable = append(r.Unavailable, s)
		}
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

	// uidFor is the UID a step is stamped on for pod p.
	uidFor := func(step string, p loadgen.PodOwner) types.UID {
		if rsLevel[step] {
			return p.RSUID
		}
		return p.UID
	}
	measure := func(t transition) (results.Step, bool) {
		from := ""
		for _, f := range t.from {
			if available(f) {
				from = f
				break
			}
		}
		if from == "" || !available(t.to) {
			return results.Step{}, false
		}
		var samples []float64
		if rsLevel[from] && rsLevel[t.to] {
			for _, u := range sortedUIDs(objects) {
				a, ok1 := st.at(from, u, math.MinInt64)
				b, ok2 := st.at(t.to, u, a)
				if ok1 && ok2 {
					samples = append(samples, float64(b-a)/1e6)
				}
			}
		} else {
			for _, p := range pods {
				a, ok1 := st.at(from, uidFor(from, p), math.MinInt64)
				b, ok2 := st.at(t.to, uidFor(t.to, p), a)
				if ok1 && ok2 {
					samples = append(samples, float64(b-a)/1e6)
				}
			}
		}
		s := results.Step{Step: t.step, Name: t.name, From: from, To: t.to, Summary: results.Summarize(samples), SamplesMS: samples}
		if t.doc != nil {
			s.DocumentedMS = t.doc(in.Replicas)
		}
		s.Verdict = results.Verdict(s.P50, s.Count, s.DocumentedMS)
		return s, true
	}
	r.Steps = nil
	for _, t := range transitions {
		if s, ok := measure(t); ok {
			r.Steps = append(r.Steps, s)
		}
	}
	if s, ok := measure(endToEnd); ok {
		r.EndToEnd = s
	} else {
		r.EndToEnd = results.Step{Step: endToEnd.step, Name: endToEnd.name, From: endToEnd.from[0], To: endToEnd.to, Verdict: results.NA}
	}

	r.Waterfalls = waterfalls(st, pods, uidFor, available)

	// Completeness: every pod carries every step some actor of the run
	// stamps (RS steps through its ReplicaSet).
	r.Incomplete = nil
	for _, p := range pods {
		var missing []string
		for _, s := range allSteps {
			if !available(s) {
				continue
			}
			if _, ok := st.at(s, uidFor(s, p), 0); !ok {
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
	}

	// Throughput: pods Ready over the time since the first client send.
	start := int64(math.MaxInt64)
	for _, u := range sortedUIDs(objects) {
		if a, ok := st.at(loadgen.ClientRSSent, u, math.MinInt64); ok && a < start {
			start = a
		}
	}
	var ready []int64
	for _, p := range pods {
		if b, ok := st.at(trace.PodReadyObserved, p.UID, math.MinInt64); ok {
			ready = append(ready, b)
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

// waterfalls picks the median and the p99 pod by end to end and lays out
// every stamp of each after its first (the client's send).
func waterfalls(st stamps, pods []loadgen.PodOwner, uidFor func(string, loadgen.PodOwner) types.UID, available func(string) bool) []results.Waterfall {
	type timed struct {
		p        loadgen.PodOwner
		start, d int64
	}
	var done []timed
	for _, p := range pods {
		a, ok1 := st.at(loadgen.ClientRSSent, p.RSUID, math.MinInt64)
		b, ok2 := st.at(trace.PodReadyObserved, p.UID, a)
		if ok1 && ok2 {
			done = append(done, timed{p, a, b - a})
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
		for _, step := range allSteps {
			if !available(step) {
				continue
			}
			if at, ok := st.at(step, uidFor(step, t.p), t.start); ok {
				w.Marks = append(w.Marks, results.Mark{Step: step, AtMS: float64(at-t.start) / 1e6})
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
