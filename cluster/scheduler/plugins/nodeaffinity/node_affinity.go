package nodeaffinity

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/helper"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "NodeAffinity"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match Pod's node affinity/selector"

// NodeAffinity filters and scores by node labels.
type NodeAffinity struct{}

var (
	_ framework.PreFilterPlugin   = &NodeAffinity{}
	_ framework.FilterPlugin      = &NodeAffinity{}
	_ framework.PreScorePlugin    = &NodeAffinity{}
	_ framework.ScorePlugin       = &NodeAffinity{}
	_ framework.ScoreNormalizer   = &NodeAffinity{}
	_ framework.EnqueueExtensions = &NodeAffinity{}
)

// New builds the plugin.
func New(framework.Handle) (framework.Plugin, error) { return &NodeAffinity{}, nil }

// Name implements framework.Plugin.
func (*NodeAffinity) Name() string { return Name }

const (
	filterKey framework.StateKey = Name + "/filter"
	scoreKey  framework.StateKey = Name + "/score"
)

// PreFilter implements framework.PreFilterPlugin: it parses the
// requirements once; a pod without any skips the Filter.
func (*NodeAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	r := helper.NewRequiredNodeAffinity(pod)
	if r.Empty() {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(filterKey, &r)
	return nil
}

// Filter implements framework.FilterPlugin.
func (*NodeAffinity) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	r, ok := state.Read(filterKey).(*helper.RequiredNodeAffinity)
	if !ok {
		req := helper.NewRequiredNodeAffinity(pod)
		r = &req
	}
	if !r.Matches(ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// PreScore implements framework.PreScorePlugin: a pod without preferred
// terms skips the Score.
func (*NodeAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	terms := helper.PreferredNodeAffinity(pod)
	if len(terms) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(scoreKey, terms)
	return nil
}

// Score implements framework.ScorePlugin: the sum of the weights of the
// preferred terms the node matches.
func (*NodeAffinity) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	terms, ok := state.Read(scoreKey).([]helper.PreferredTerm)
	if !ok {
		terms = helper.PreferredNodeAffinity(pod)
	}
	var sum int64
	for i := range terms {
		if terms[i].Term.Matches(ni.Node()) {
			sum += terms[i].Weight
		}
	}
	return sum, nil
}

// NormalizeScore implements framework.ScoreNormalizer.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores []framework.NodeScore) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions.
func (*NodeAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}}
}
