package chaos

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// FaultResult is one fault as injected and measured.
type FaultResult struct {
	Name   string `json:"name"`
	Action Action `json:"action"`
	Target Target `json:"target"`
	// Actors are what the target resolved to at injection.
	Actors []string `json:"actors"`
	// Nodes are the nodes the fault took down (kubelet, node targets).
	Nodes []string `json:"nodes,omitempty"`
	// ReplicaSets are the load's ReplicaSets a workload fault acted on:
	// those kill-pods took a pod from, those scale scaled.
	ReplicaSets []string `json:"replicasets,omitempty"`
	// DeletedPods are the pods a kill-pods fault deleted (namespace/name).
	DeletedPods []string `json:"deleted_pods,omitempty"`
	// Error is why the fault could not be injected or undone.
	Error string `json:"error,omitempty"`
	// Detail is what an API-level fault did (a drain's evictions, the
	// Node or pod it deleted).
	Detail string `json:"detail,omitempty"`

	InjectedAt time.Time `json:"injected_at"`
	// UndoneAt is when the actor was started, thawed or healed again;
	// ReadyAt when it was ready after that (Start returns then).
	UndoneAt time.Time `json:"undone_at,omitzero"`
	ReadyAt  time.Time `json:"ready_at,omitzero"`
	// WindowEnd is where this fault's measurements stop: the next fault's
	// injection, or the end of the run.
	WindowEnd time.Time `json:"window_end"`

	Detection Measure `json:"detection"`
	Recovery  Measure `json:"recovery"`
	// WriteGapMS is the longest time between two acknowledged probe writes
	// around the fault.
	WriteGapMS float64 `json:"write_gap_ms"`
	// LongestWaitMS is the longest any one probe request in flight during
	// the fault waited for its answer (success, error or client timeout):
	// the wait a client felt, which the gap between acknowledgements hides
	// when other requests are answered meanwhile.
	LongestWaitMS float64 `json:"longest_wait_ms"`
	// FailedWrites are probe writes that failed on every apiserver.
	FailedWrites int `json:"failed_writes"`
	// UnavailableMS is from the first failed write to the first success
	// after the last one (0 with no failure).
	UnavailableMS float64 `json:"unavailable_ms"`
	// OtherNodesNotReady are the nodes outside Nodes that went NotReady in
	// the fault's window: what the fault took down besides its target.
	OtherNodesNotReady []string `json:"other_nodes_not_ready,omitempty"`
	// OtherPodsEvicted are the pods evicted in the fault's window from nodes
	// outside Nodes ("namespace/name on node"): a fault that costs the
	// workload what only a lost node should.
	OtherPodsEvicted []string `json:"other_pods_evicted,omitempty"`
	// WriteErrors are the probe writes that failed in the fault's window,
	// by their last answer ("507 <message>", or "no answer": a timeout or
	// a broken connection).
	WriteErrors map[string]int `json:"write_errors,omitempty"`
	// NoSpaceRefusals and UnclearErrors, of a fill fault, are the failed
	// probe writes whose last answer was etcd's NOSPACE refusal, and those
	// whose was not: a client could not tell them from an outage.
	NoSpaceRefusals int `json:"nospace_refusals"`
	UnclearErrors   int `json:"unclear_errors"`
	// Fill is what a fill fault wrote and how the cluster recovered.
	Fill *FillResult `json:"fill,omitempty"`
	// Steps are step latencies before, during and after the fault.
	Steps []StepWindow `json:"steps,omitempty"`
}

// Measure is a detection or recovery time from the injection.
type Measure struct {
	Kind string `json:"kind"`
	// MS is nil when the signal was never seen in the fault's window.
	MS   *float64 `json:"ms"`
	Note string   `json:"note,omitempty"`
	// ResolutionMS is the period of the probe the signal is sampled by
	// (the etcd leader and Lease polls, the probe's writes); 0 when the
	// signal is an event's own stamp (a watch event, a trace stamp, an
	// actor's readiness).
	ResolutionMS float64 `json:"resolution_ms"`
	// BelowResolution: MS is under ResolutionMS, so it says where the
	// probe happened to sample, not how long the cluster took; reports
	// show "< resolution (X ms)" instead of the time. Gates still read MS
	// (a figure below the resolution is below any limit above it).
	BelowResolution bool `json:"below_resolution,omitempty"`
}

// resolve sets the measure's resolution, from its kind, and whether its
// figure is below it.
func (m *Measure) resolve(h *History) {
	switch m.Kind {
	case string(DetectEtcdLeader), string(DetectLeaseHolder):
		m.ResolutionMS = float64(pollInterval) / float64(time.Millisecond)
	case string(DetectWriteRejected), string(RecoverWrite):
		m.ResolutionMS = float64(h.WritePeriod) / float64(time.Millisecond)
	default:
		m.ResolutionMS = 0
	}
	m.BelowResolution = m.MS != nil && *m.MS < m.ResolutionMS
}

// Text is the measure as reports print it: its time, "< resolution (X ms)"
// below the probe's resolution, "not observed" without one.
func (m Measure) Text() string {
	switch {
	case m.MS == nil:
		return "not observed"
	case m.BelowResolution:
		return fmt.Sprintf("< resolution (%s ms)", strconv.FormatFloat(m.ResolutionMS, 'f', -1, 64))
	}
	return time.Duration(*m.MS * float64(time.Millisecond)).Round(time.Millisecond).String()
}

// writePeriod is the time between the probe's writes at qps.
func writePeriod(qps float64) time.Duration {
	if qps <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / qps)
}

// Observed says whether the measure has a value.
func (m Measure) Observed() bool { return m.MS != nil }

func ms(d time.Duration) *float64 {
	v := float64(d) / float64(time.Millisecond)
	return &v
}

// StepWindow is a step pair's latency over pods created in one phase of a
// fault: before (10 s up to the injection), during (up to recovery), after.
type StepWindow struct {
	Pair  string  `json:"pair"`
	Phase string  `json:"phase"`
	Count int     `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// Leases kstep's leader-elected actors hold.
const (
	LeaseControllerManager = "kstep-controller-manager"
	LeaseScheduler         = "kstep-scheduler"
)

func leaseOf(t Target) string {
	if t == TargetScheduler {
		return LeaseScheduler
	}
	return LeaseControllerManager
}

// Measure fills f's detection, recovery, write and step figures from h,
// given what the fault is expected to show.
func (f *FaultResult) Measure(h *History, e Expect) {
	inj, end := f.InjectedAt, f.WindowEnd
	in := func(t time.Time) bool { return !t.Before(inj) && t.Before(end) }

	f.Detection = Measure{Kind: string(e.Detection)}
	switch e.Detection {
	case DetectEtcdLeader:
		f.Detection.MS, f.Detection.Note = holderChanged(h.EtcdLeader, inj, end)
	case DetectLeaseHolder:
		f.Detection.MS, f.Detection.Note = holderChanged(h.Leases[leaseOf(f.Target)], inj, end)
	case DetectNodeNotReady:
		nodes := set(f.Nodes)
		for _, s := range h.Nodes {
			if in(s.At) && !s.Ready && (len(nodes) == 0 || nodes[s.Node]) {
				f.Detection.MS = ms(s.At.Sub(inj))
				f.Detection.Note = s.Node + " NotReady"
				break
			}
		}
	case DetectPodEvicted:
		f.Detection.MS, f.Detection.Note = podEvicted(h.Pods, set(f.Nodes), inj, end)
	case DetectNodeGone:
		f.Detection.MS, f.Detection.Note = nodeGone(h.Nodes, set(f.Nodes), inj, end)
	case DetectPodReplaced, DetectPodsChanged:
		f.Detection.MS, f.Detection.Note = podsChanged(h.Pods, set(f.ReplicaSets), e.Detection == DetectPodsChanged, inj, end)
	case DetectWriteRejected:
		for _, w := range h.Writes {
			if in(w.Sent) && w.Acked.IsZero() {
				f.Detection.MS = ms(w.Sent.Sub(inj))
				break
			}
		}
	}

	f.Recovery = Measure{Kind: string(e.Recovery)}
	var recovered time.Time
	switch e.Recovery {
	case RecoverWrite:
		recovered = firstAcked(h.Writes, inj, end)
	case RecoverLeaderPod, RecoverLeaderBind:
		step := "pod.create.sent"
		if e.Recovery == RecoverLeaderBind {
			step = "pod.bound"
		}
		old := set(f.Actors)
		// The binding apiserver stamps pod.bound; the scheduler that
		// chose the node stamped the pod's pod.scheduled.
		by := map[string]string{}
		if e.Recovery == RecoverLeaderBind {
			for _, s := range h.Steps {
				if s.Step == "pod.scheduled" {
					by[s.UID] = s.Actor
				}
			}
		}
		for _, s := range h.Steps {
			actor := s.Actor
			if e.Recovery == RecoverLeaderBind {
				actor = by[s.UID]
			}
			if s.Step == step && in(s.At) && actor != "" && !old[actor] {
				recovered = s.At
				f.Recovery.Note = "by " + actor
				break
			}
		}
	case RecoverActorReady:
		if in(f.ReadyAt) {
			recovered = f.ReadyAt
		}
	case RecoverNodesReady:
		recovered = allNodesReady(h.Nodes, f.UndoneAt, end)
	case RecoverRescheduled:
		recovered = rescheduled(h, set(f.Nodes), inj, end)
	case RecoverNodeReturned:
		recovered, f.Recovery.Note = nodeReturned(h, set(f.Nodes), inj, end)
	case RecoverLoadReady:
		recovered, f.Recovery.Note = loadReady(h, set(f.ReplicaSets), set(f.DeletedPods), f.UndoneAt, end)
	case RecoverScaled:
		recovered, f.Recovery.Note = scaledReady(h, set(f.ReplicaSets), inj, f.UndoneAt, end)
	}
	if !recovered.IsZero() {
		f.Recovery.MS = ms(recovered.Sub(inj))
	}
	f.Detection.resolve(h)
	f.Recovery.resolve(h)

	f.WriteGapMS, f.FailedWrites, f.UnavailableMS = writeGaps(h.Writes, inj, end)
	var refused int
	f.WriteErrors, refused = writeErrors(h.Writes, inj, end)
	if f.Action == ActionFill {
		f.NoSpaceRefusals, f.UnclearErrors = refused, f.FailedWrites-refused
	}
	if f.Fill != nil {
		f.Fill.RecoveredMS = nil
		if first := firstAcked(h.Writes, f.UndoneAt, end); !first.IsZero() {
			f.Fill.RecoveredMS = ms(first.Sub(f.UndoneAt))
		}
	}
	f.LongestWaitMS = longestWait(h.Writes, inj, end)
	f.OtherNodesNotReady = otherNodesNotReady(h.Nodes, set(f.Nodes), inj, end)
	f.OtherPodsEvicted = otherPodsEvicted(h.Evictions, set(f.Nodes), inj, end)
	rec := recovered
	if f.Action == ActionLink {
		// A link fault lasts until it is lifted, whatever the first
		// acknowledgement says: "during" is the fault itself.
		rec = f.UndoneAt
	}
	if rec.IsZero() {
		rec = f.ReadyAt
	}
	if rec.IsZero() {
		rec = f.UndoneAt
	}
	f.Steps = stepWindows(h.Steps, inj, rec, end)
}

// holderChanged finds the first sample in [from, end) naming a holder other
// than the one leading at from.
func holderChanged(samples []LeaderSample, from, end time.Time) (*float64, string) {
	old := leaderAt(samples, from)
	for _, s := range samples {
		if !s.At.Before(from) && s.At.Before(end) && s.Holder != "" && s.Holder != old {
			return ms(s.At.Sub(from)), old + " → " + s.Holder
		}
	}
	return nil, "holder stayed " + old
}

// allNodesReady is the first moment in [from, end) at which every node
// seen so far is Ready: from itself if they all are then.
func allNodesReady(samples []NodeSample, from, end time.Time) time.Time {
	if from.IsZero() {
		return time.Time{}
	}
	state := map[string]bool{}
	all := func() bool {
		for _, r := range state {
			if !r {
				return false
			}
		}
		return len(state) > 0
	}
	i := 0
	for ; i < len(samples) && !samples[i].At.After(from); i++ {
		state[samples[i].Node] = samples[i].Ready
	}
	if all() {
		return from
	}
	for ; i < len(samples) && samples[i].At.Before(end); i++ {
		state[samples[i].Node] = samples[i].Ready
		if all() {
			return samples[i].At
		}
	}
	return time.Time{}
}

// rescheduled is the first moment in [from, end) at which every
// ReplicaSet that had an active pod on a lost node has its replicas Ready
// on other nodes.
func rescheduled(h *History, lost map[string]bool, from, end time.Time) time.Time {
	return wholeAgain(h, lost, lost, from, end)
}

// wholeAgain is the first moment in [from, end) at which every ReplicaSet
// that had an active pod on a node of hit when the fault began has its
// replicas Ready on nodes not in notOn.
func wholeAgain(h *History, hit, notOn map[string]bool, from, end time.Time) time.Time {
	type pod struct {
		owner, node   string
		ready, active bool
	}
	pods := map[string]pod{}
	replicas := map[string]int32{}
	affected := map[string]bool{}
	ri := 0
	whole := func() bool {
		if len(affected) == 0 {
			return false
		}
		count := map[string]int32{}
		for _, p := range pods {
			if p.active && p.ready && !notOn[p.node] {
				count[p.owner]++
			}
		}
		for rs := range affected {
			if count[rs] < replicas[rs] {
				return false
			}
		}
		return true
	}
	started := false
	for _, e := range h.Pods {
		if !e.At.Before(end) {
			break
		}
		for ri < len(h.RS) && !h.RS[ri].At.After(e.At) {
			replicas[h.RS[ri].Key] = h.RS[ri].Replicas
			ri++
		}
		if !started && !e.At.Before(from) {
			// The ReplicaSets hit are those with a pod on a lost node when
			// the fault began.
			started = true
			for _, p := range pods {
				if p.active && hit[p.node] && p.owner != "" {
					affected[p.owner] = true
				}
			}
		}
		if e.Deleted {
			delete(pods, e.UID)
		} else {
			pods[e.UID] = pod{owner: e.Owner, node: e.Node, ready: e.Ready, active: e.Active}
		}
		if started && whole() {
			return e.At
		}
	}
	return time.Time{}
}

// writeErrors groups the probe writes sent in [from, end) that failed by
// their last answer, and counts those refused for etcd's quota.
func writeErrors(writes []ProbeWrite, from, end time.Time) (map[string]int, int) {
	var by map[string]int
	refused := 0
	for _, w := range writes {
		if !w.Acked.IsZero() || w.Sent.Before(from) || !w.Sent.Before(end) {
			continue
		}
		if by == nil {
			by = map[string]int{}
		}
		by[w.answer()]++
		if noSpaceAnswer(w.Code, w.Err) {
			refused++
		}
	}
	return by, refused
}

// answer is a failed write's last answer, as the report groups them.
func (w ProbeWrite) answer() string {
	if w.Code == 0 {
		return "no answer"
	}
	return fmt.Sprintf("%d %s", w.Code, w.Err)
}

// firstAcked is the acknowledgement of the first write sent in [from, end)
// that was acknowledged (zero if none): writes are in the order sent.
func firstAcked(writes []ProbeWrite, from, end time.Time) time.Time {
	if from.IsZero() {
		return time.Time{}
	}
	for _, w := range writes {
		if !w.Acked.IsZero() && !w.Sent.Before(from) && w.Sent.Before(end) {
			return w.Acked
		}
	}
	return time.Time{}
}

// writeGaps measures the probe's writes over [from, end): the longest time
// between consecutive acknowledgements (counting from the last one before
// from), the writes that failed, and the unavailability window.
func writeGaps(writes []ProbeWrite, from, end time.Time) (gapMS float64, failed int, unavailMS float64) {
	var acks []time.Time
	var prev time.Time
	var firstFail, lastFail time.Time
	for _, w := range writes {
		if !w.Acked.IsZero() && w.Acked.Before(from) && w.Acked.After(prev) {
			prev = w.Acked
		}
		if w.Sent.Before(from) || !w.Sent.Before(end) {
			continue
		}
		if w.Acked.IsZero() {
			failed++
			if firstFail.IsZero() {
				firstFail = w.Sent
			}
			lastFail = w.Sent
			continue
		}
		acks = append(acks, w.Acked)
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i].Before(acks[j]) })
	if !prev.IsZero() {
		acks = append([]time.Time{prev}, acks...)
	}
	var gap time.Duration
	for i := 1; i < len(acks); i++ {
		gap = max(gap, acks[i].Sub(acks[i-1]))
	}
	if !firstFail.IsZero() {
		for _, a := range acks {
			if a.After(lastFail) {
				unavailMS = float64(a.Sub(firstFail)) / float64(time.Millisecond)
				break
			}
		}
		if unavailMS == 0 {
			unavailMS = float64(end.Sub(firstFail)) / float64(time.Millisecond)
		}
	}
	return float64(gap) / float64(time.Millisecond), failed, unavailMS
}

// otherNodesNotReady are the nodes outside target that went NotReady in
// [from, end), sorted.
func otherNodesNotReady(samples []NodeSample, target map[string]bool, from, end time.Time) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range samples {
		if !s.At.Before(from) && s.At.Before(end) && !s.Ready && !target[s.Node] && !seen[s.Node] {
			seen[s.Node] = true
			out = append(out, s.Node)
		}
	}
	sort.Strings(out)
	return out
}

// otherPodsEvicted are the evictions in [from, end) off nodes outside
// target, sorted. Event times have whole seconds: from is taken down to
// its second.
func otherPodsEvicted(evs []Eviction, target map[string]bool, from, end time.Time) []string {
	from = from.Truncate(time.Second)
	var out []string
	for _, e := range evs {
		if !e.At.Before(from) && e.At.Before(end) && !target[e.Node] {
			out = append(out, e.Pod+" on "+e.Node)
		}
	}
	sort.Strings(out)
	return out
}

// longestWait is the longest request wait of the probe writes in flight
// at some moment of [from, end): sent before end, their last request
// ended at or after from.
func longestWait(writes []ProbeWrite, from, end time.Time) float64 {
	var longest float64
	for _, w := range writes {
		done := w.Done
		if done.IsZero() {
			done = w.Acked
		}
		if !w.Sent.Before(end) || done.Before(from) {
			continue
		}
		longest = max(longest, w.LongestWaitMS)
	}
	return longest
}

// stepPairs are the step latencies reported around a fault, per pod.
var stepPairs = [][2]string{
	{"pod.persisted", "pod.bound"},
	{"pod.bound", "pod.ready.observed"},
}

// baseline is how far before a fault the "before" window reaches.
const baseline = 10 * time.Second

// stepWindows computes each step pair's latency for pods whose first step
// fell before the fault, during it (until recovery) or after.
func stepWindows(steps []StepEvent, inj, rec, end time.Time) []StepWindow {
	if rec.IsZero() || rec.Before(inj) {
		rec = inj
	}
	first := map[string]map[string]time.Time{}
	for _, s := range steps {
		m := first[s.UID]
		if m == nil {
			m = map[string]time.Time{}
			first[s.UID] = m
		}
		if _, ok := m[s.Step]; !ok {
			m[s.Step] = s.At
		}
	}
	var out []StepWindow
	for _, pair := range stepPairs {
		lat := map[string][]float64{}
		for _, m := range first {
			a, ok1 := m[pair[0]]
			b, ok2 := m[pair[1]]
			if !ok1 || !ok2 || b.Before(a) {
				continue
			}
			var phase string
			switch {
			case a.Before(inj.Add(-baseline)) || !a.Before(end):
				continue
			case a.Before(inj):
				phase = "before"
			case a.Before(rec):
				phase = "during"
			default:
				phase = "after"
			}
			lat[phase] = append(lat[phase], float64(b.Sub(a))/float64(time.Millisecond))
		}
		for _, phase := range []string{"before", "during", "after"} {
			v := lat[phase]
			if len(v) == 0 {
				continue
			}
			sort.Float64s(v)
			out = append(out, StepWindow{Pair: pair[0] + " → " + pair[1], Phase: phase, Count: len(v),
				P50MS: quantile(v, 0.5), P99MS: quantile(v, 0.99)})
		}
	}
	return out
}

// quantile of sorted v, nearest rank.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

func set(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}
