package interpodaffinity

import (
	"context"
	"fmt"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// HardPodAffinityWeight is what an existing pod's required affinity term
// that selects the incoming pod adds to its domain's score: upstream's
// default hardPodAffinityWeight.
const HardPodAffinityWeight = 1

const scoreKey framework.StateKey = Name + "/score"

// topologyScore is the weight per topology key and value.
type topologyScore map[string]map[string]int64

func (m topologyScore) add(key, value string, w int64) {
	if m[key] == nil {
		m[key] = map[string]int64{}
	}
	m[key][value] += w
}

// term adds w*mult to the domain of node under t's key when t selects pod.
func (m topologyScore) term(t *framework.AffinityTerm, w int64, pod *corev1.Pod, node *corev1.Node, mult int64) {
	if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod) {
		m.add(t.TopologyKey, v, w*mult)
	}
}

func (m topologyScore) weighted(terms []framework.WeightedAffinityTerm, pod *corev1.Pod, node *corev1.Node, mult int64) {
	for i := range terms {
		m.term(&terms[i].AffinityTerm, int64(terms[i].Weight), pod, node, mult)
	}
}

// PreScore implements framework.PreScorePlugin, as upstream: it sums, per
// topology domain, the incoming pod's preferred affinity (+weight) and
// anti-affinity (-weight) terms over the pods that match them, and the
// existing pods' terms that select the incoming pod: their preferred
// affinity (+weight) and anti-affinity (-weight), and their required
// affinity (+HardPodAffinityWeight). Without terms of its own the pod
// looks only at nodes whose pods have terms; with nothing found it skips.
func (pl *InterPodAffinity) PreScore(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var pref, prefAnti []framework.WeightedAffinityTerm
	if a := pod.Spec.Affinity; a != nil {
		var err error
		if a.PodAffinity != nil {
			if pref, err = framework.ParseWeightedAffinityTerms(pod, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
				return framework.AsStatus(fmt.Errorf("parsing preferred pod affinity: %w", err))
			}
		}
		if a.PodAntiAffinity != nil {
			if prefAnti, err = framework.ParseWeightedAffinityTerms(pod, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
				return framework.AsStatus(fmt.Errorf("parsing preferred pod anti-affinity: %w", err))
			}
		}
	}
	own := len(pref) > 0 || len(prefAnti) > 0
	lister := pl.h.SnapshotLister()
	nodes := lister.HavePodsWithAffinityList()
	if own {
		nodes = lister.List()
	}
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	total := topologyScore{}
	var mu sync.Mutex
	pl.h.Parallelizer().Until(ctx, len(nodes), func(i int) {
		ni := nodes[i]
		node := ni.Node()
		if node == nil || len(node.Labels) == 0 {
			return
		}
		pods := ni.PodsWithAffinity
		if own {
			pods = ni.Pods
		}
		m := topologyScore{}
		for _, ep := range pods {
			m.weighted(pref, ep.Pod, node, 1)
			m.weighted(prefAnti, ep.Pod, node, -1)
			for j := range ep.RequiredAffinityTerms {
				m.term(&ep.RequiredAffinityTerms[j], HardPodAffinityWeight, pod, node, 1)
			}
			m.weighted(ep.PreferredAffinityTerms, pod, node, 1)
			m.weighted(ep.PreferredAntiAffinityTerms, pod, node, -1)
		}
		if len(m) == 0 {
			return
		}
		mu.Lock()
		for k, vs := range m {
			for v, w := range vs {
				total.add(k, v, w)
			}
		}
		mu.Unlock()
	})
	if len(total) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(scoreKey, total)
	return nil
}

// Score implements framework.ScorePlugin: the sum over the node's domains.
func (*InterPodAffinity) Score(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(scoreKey).(topologyScore)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("%s: PreScore state missing", Name))
	}
	var score int64
	for key, values := range s {
		if v, ok := ni.Node().Labels[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// NormalizeScore implements framework.ScoreNormalizer: min → 0, max →
// 100, linear between (scores may be negative), as upstream.
func (*InterPodAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores []framework.NodeScore) *framework.Status {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range scores {
		lo, hi = min(lo, scores[i].Score), max(hi, scores[i].Score)
	}
	for i := range scores {
		var s float64
		if hi > lo {
			s = float64(framework.MaxNodeScore) * float64(scores[i].Score-lo) / float64(hi-lo)
		}
		scores[i].Score = int64(s)
	}
	return nil
}
