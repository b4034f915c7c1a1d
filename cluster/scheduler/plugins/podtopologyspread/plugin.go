package podtopologyspread

import (
	"context"
	"fmt"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/helper"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "PodTopologySpread"

// Upstream's reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// PodTopologySpread filters and scores by topology spread constraints.
type PodTopologySpread struct {
	h framework.Handle
}

var (
	_ framework.PreFilterPlugin   = &PodTopologySpread{}
	_ framework.FilterPlugin      = &PodTopologySpread{}
	_ framework.PreScorePlugin    = &PodTopologySpread{}
	_ framework.ScorePlugin       = &PodTopologySpread{}
	_ framework.ScoreNormalizer   = &PodTopologySpread{}
	_ framework.EnqueueExtensions = &PodTopologySpread{}
)

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &PodTopologySpread{h: h}, nil }

// Name implements framework.Plugin.
func (*PodTopologySpread) Name() string { return Name }

const (
	filterKey framework.StateKey = Name + "/filter"
	scoreKey  framework.StateKey = Name + "/score"
)

// filterState is the DoNotSchedule constraints and, per constraint, the
// matching pods per domain and the smallest count over the domains.
type filterState struct {
	constraints []constraint
	counts      []map[string]int
	minCount    []int
}

// PreFilter implements framework.PreFilterPlugin: it counts, over every
// node the pod's node affinity and the inclusion policies admit and that
// has all the constraints' keys, the matching pods per domain. A pod
// without DoNotSchedule constraints skips the Filter.
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	cs, err := pl.constraints(pod, corev1.DoNotSchedule)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(cs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &filterState{constraints: cs, counts: make([]map[string]int, len(cs)), minCount: make([]int, len(cs))}
	for i := range cs {
		s.counts[i] = map[string]int{}
	}
	req := helper.NewRequiredNodeAffinity(pod)
	var mu sync.Mutex
	nodes := pl.h.SnapshotLister().List()
	pl.h.Parallelizer().Until(ctx, len(nodes), func(n int) {
		ni := nodes[n]
		node := ni.Node()
		if node == nil || !hasAllKeys(node.Labels, cs) {
			return
		}
		for i := range cs {
			c := &cs[i]
			if !c.includes(pod, node, &req) {
				continue
			}
			k := countMatching(ni.Pods, c.selector, pod.Namespace)
			mu.Lock()
			s.counts[i][node.Labels[c.topologyKey]] += k
			mu.Unlock()
		}
	})
	for i := range cs {
		m := math.MaxInt32
		for _, k := range s.counts[i] {
			m = min(m, k)
		}
		// Fewer eligible domains than minDomains: the global minimum is 0.
		if len(s.counts[i]) < int(cs[i].minDomains) || len(s.counts[i]) == 0 {
			m = 0
		}
		s.minCount[i] = m
	}
	state.Write(filterKey, s)
	return nil
}

// Filter implements framework.FilterPlugin.
func (*PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, ok := state.Read(filterKey).(*filterState)
	if !ok {
		return framework.AsStatus(fmt.Errorf("%s: PreFilter state missing", Name))
	}
	node := ni.Node()
	podLabels := labels.Set(pod.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok := node.Labels[c.topologyKey]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		self := 0
		if c.selector.Matches(podLabels) {
			self = 1
		}
		if s.counts[i][v]+self-s.minCount[i] > int(c.maxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

// scoreState is the ScheduleAnyway constraints, the matching pods per
// domain (hostname domains are counted per node in Score), and each
// constraint's weight: log(domains + 2).
type scoreState struct {
	constraints []constraint
	ignored     map[string]bool
	counts      []map[string]*int64
	weights     []float64
}

// PreScore implements framework.PreScorePlugin, as upstream: the domains
// are those of the feasible nodes; a feasible node lacking a key of the
// pod's own constraints is ignored (scores 0). The system defaults do not
// require the keys.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo) *framework.Status {
	cs, err := pl.constraints(pod, corev1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(err)
	}
	all := pl.h.SnapshotLister().List()
	if len(cs) == 0 || len(all) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0
	s := &scoreState{constraints: cs, ignored: map[string]bool{}, counts: make([]map[string]*int64, len(cs)), weights: make([]float64, len(cs))}
	sizes := make([]int, len(cs))
	for i := range cs {
		s.counts[i] = map[string]*int64{}
	}
	for _, ni := range feasible {
		node := ni.Node()
		if requireAll && !hasAllKeys(node.Labels, cs) {
			s.ignored[node.Name] = true
			continue
		}
		for i := range cs {
			if cs[i].topologyKey == corev1.LabelHostname {
				continue
			}
			v := node.Labels[cs[i].topologyKey]
			if s.counts[i][v] == nil {
				s.counts[i][v] = new(int64)
				sizes[i]++
			}
		}
	}
	for i := range cs {
		n := sizes[i]
		if cs[i].topologyKey == corev1.LabelHostname {
			n = len(feasible) - len(s.ignored)
		}
		s.weights[i] = math.Log(float64(n + 2))
	}
	req := helper.NewRequiredNodeAffinity(pod)
	var mu sync.Mutex
	pl.h.Parallelizer().Until(ctx, len(all), func(n int) {
		ni := all[n]
		node := ni.Node()
		if node == nil || (requireAll && !hasAllKeys(node.Labels, cs)) {
			return
		}
		for i := range cs {
			c := &cs[i]
			if !c.includes(pod, node, &req) {
				continue
			}
			cnt := s.counts[i][node.Labels[c.topologyKey]]
			if cnt == nil {
				continue
			}
			k := countMatching(ni.Pods, c.selector, pod.Namespace)
			mu.Lock()
			*cnt += int64(k)
			mu.Unlock()
		}
	})
	state.Write(scoreKey, s)
	return nil
}

// Score implements framework.ScorePlugin: per constraint, the domain's
// matching pods times the constraint's weight, plus maxSkew-1 (more is
// worse; NormalizeScore reverses).
func (*PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(scoreKey).(*scoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("%s: PreScore state missing", Name))
	}
	node := ni.Node()
	if s.ignored[node.Name] {
		return 0, nil
	}
	var score float64
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok := node.Labels[c.topologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.topologyKey == corev1.LabelHostname {
			cnt = int64(countMatching(ni.Pods, c.selector, pod.Namespace))
		} else if p := s.counts[i][v]; p != nil {
			cnt = *p
		}
		score += float64(cnt)*s.weights[i] + float64(c.maxSkew-1)
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore implements framework.ScoreNormalizer, as upstream: the
// fewest matching pods score 100, ignored nodes 0.
func (*PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores []framework.NodeScore) *framework.Status {
	s, ok := state.Read(scoreKey).(*scoreState)
	if !ok {
		return framework.AsStatus(fmt.Errorf("%s: PreScore state missing", Name))
	}
	lo, hi := int64(math.MaxInt64), int64(0)
	for i := range scores {
		if s.ignored[scores[i].Name] {
			continue
		}
		lo, hi = min(lo, scores[i].Score), max(hi, scores[i].Score)
	}
	for i := range scores {
		switch {
		case s.ignored[scores[i].Name]:
			scores[i].Score = 0
		case hi == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (hi + lo - scores[i].Score) / hi
		}
	}
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions: placed pods
// change the counts, node labels and taints the domains.
func (*PodTopologySpread) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Add | framework.Delete | framework.UpdatePodLabel},
		{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
}
