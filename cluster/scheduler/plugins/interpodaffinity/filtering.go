package interpodaffinity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "InterPodAffinity"

// Upstream's reasons.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

// InterPodAffinity filters and scores by pod (anti-)affinity.
type InterPodAffinity struct {
	h framework.Handle
}

var (
	_ framework.PreFilterPlugin   = &InterPodAffinity{}
	_ framework.FilterPlugin      = &InterPodAffinity{}
	_ framework.PreScorePlugin    = &InterPodAffinity{}
	_ framework.ScorePlugin       = &InterPodAffinity{}
	_ framework.ScoreNormalizer   = &InterPodAffinity{}
	_ framework.EnqueueExtensions = &InterPodAffinity{}
)

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &InterPodAffinity{h: h}, nil }

// Name implements framework.Plugin.
func (*InterPodAffinity) Name() string { return Name }

type topologyPair struct{ key, value string }

// preFilterState counts, per topology domain, the pods that matter.
type preFilterState struct {
	// existingAnti: domains where a placed pod's required anti-affinity
	// selects the incoming pod.
	existingAnti map[topologyPair]int64
	// affinity and anti: domains holding pods selected by the incoming
	// pod's affinity / anti-affinity terms.
	affinity, anti           map[topologyPair]int64
	affinityTerms, antiTerms []framework.AffinityTerm
	pod                      *corev1.Pod
}

const stateKey framework.StateKey = Name

// PreFilter implements framework.PreFilterPlugin. It walks the nodes with
// anti-affinity pods always, and every pod only when the incoming pod has
// terms of its own; a pod with no terms in a cluster without
// anti-affinity skips the Filter.
func (pl *InterPodAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	s := &preFilterState{pod: pod}
	if a := pod.Spec.Affinity; a != nil {
		var err error
		if a.PodAffinity != nil {
			if s.affinityTerms, err = framework.ParseAffinityTerms(pod, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
				return framework.AsStatus(fmt.Errorf("parsing pod affinity: %w", err))
			}
		}
		if a.PodAntiAffinity != nil {
			if s.antiTerms, err = framework.ParseAffinityTerms(pod, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
				return framework.AsStatus(fmt.Errorf("parsing pod anti-affinity: %w", err))
			}
		}
	}
	lister := pl.h.SnapshotLister()
	withAnti := lister.HavePodsWithRequiredAntiAffinityList()
	if len(s.affinityTerms) == 0 && len(s.antiTerms) == 0 && len(withAnti) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s.existingAnti = map[topologyPair]int64{}
	for _, ni := range withAnti {
		node := ni.Node()
		for _, ep := range ni.PodsWithRequiredAntiAffinity {
			for i := range ep.RequiredAntiAffinityTerms {
				t := &ep.RequiredAntiAffinityTerms[i]
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod) {
					s.existingAnti[topologyPair{t.TopologyKey, v}]++
				}
			}
		}
	}
	if len(s.affinityTerms) > 0 || len(s.antiTerms) > 0 {
		s.affinity, s.anti = map[topologyPair]int64{}, map[topologyPair]int64{}
		for _, ni := range lister.List() {
			node := ni.Node()
			for _, ep := range ni.Pods {
				count(s.affinity, s.affinityTerms, node, ep.Pod)
				count(s.anti, s.antiTerms, node, ep.Pod)
			}
		}
	}
	state.Write(stateKey, s)
	return nil
}

func count(m map[topologyPair]int64, terms []framework.AffinityTerm, node *corev1.Node, pod *corev1.Pod) {
	for i := range terms {
		t := &terms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod) {
			m[topologyPair{t.TopologyKey, v}]++
		}
	}
}

// Filter implements framework.FilterPlugin.
func (*InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, ok := state.Read(stateKey).(*preFilterState)
	if !ok {
		return framework.AsStatus(fmt.Errorf("%s: PreFilter state missing", Name))
	}
	node := ni.Node()
	if !s.satisfiesAffinity(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !s.satisfiesAntiAffinity(node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !s.satisfiesExistingAntiAffinity(node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}

// satisfiesAffinity: every affinity term's topology domain of this node
// holds a matching pod. The first pod of a group that selects itself may
// go anywhere with the topology labels, or nothing could ever start.
func (s *preFilterState) satisfiesAffinity(node *corev1.Node) bool {
	if len(s.affinityTerms) == 0 {
		return true
	}
	found := true
	for i := range s.affinityTerms {
		t := &s.affinityTerms[i]
		v, ok := node.Labels[t.TopologyKey]
		if !ok {
			return false
		}
		if s.affinity[topologyPair{t.TopologyKey, v}] <= 0 {
			found = false
		}
	}
	if found {
		return true
	}
	if len(s.affinity) > 0 {
		return false
	}
	for i := range s.affinityTerms {
		if !s.affinityTerms[i].Matches(s.pod) {
			return false
		}
	}
	return true
}

// satisfiesAntiAffinity: no anti-affinity term's domain of this node holds
// a matching pod.
func (s *preFilterState) satisfiesAntiAffinity(node *corev1.Node) bool {
	if len(s.anti) == 0 {
		return true
	}
	for i := range s.antiTerms {
		t := &s.antiTerms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && s.anti[topologyPair{t.TopologyKey, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfiesExistingAntiAffinity: no placed pod whose anti-affinity selects
// the incoming pod shares a domain with this node.
func (s *preFilterState) satisfiesExistingAntiAffinity(node *corev1.Node) bool {
	if len(s.existingAnti) == 0 {
		return true
	}
	for k, v := range node.Labels {
		if s.existingAnti[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}

// EventsToRegister implements framework.EnqueueExtensions: placed pods
// coming, going or relabelled change the counts; node labels change the
// domains.
func (*InterPodAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.All},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
	}
}
