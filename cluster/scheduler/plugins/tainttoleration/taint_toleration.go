package tainttoleration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/helper"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "TaintToleration"

// ErrReason is upstream's reason for an untolerated taint.
func ErrReason(t *corev1.Taint) string {
	return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
}

// TaintToleration filters and scores by taints.
type TaintToleration struct{}

var (
	_ framework.FilterPlugin      = &TaintToleration{}
	_ framework.PreScorePlugin    = &TaintToleration{}
	_ framework.ScorePlugin       = &TaintToleration{}
	_ framework.ScoreNormalizer   = &TaintToleration{}
	_ framework.EnqueueExtensions = &TaintToleration{}
)

// New builds the plugin.
func New(framework.Handle) (framework.Plugin, error) { return &TaintToleration{}, nil }

// Name implements framework.Plugin.
func (*TaintToleration) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (*TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if t, ok := helper.FindUntoleratedTaint(ni.Node().Spec.Taints, pod.Spec.Tolerations, helper.DoNotSchedule); ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason(t))
	}
	return nil
}

const stateKey framework.StateKey = Name

// preferTolerations are the pod's tolerations that can tolerate a
// PreferNoSchedule taint.
type preferTolerations []corev1.Toleration

// PreScore implements framework.PreScorePlugin.
func (*TaintToleration) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var tols preferTolerations
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	state.Write(stateKey, tols)
	return nil
}

// Score implements framework.ScorePlugin: the raw score is the number of
// PreferNoSchedule taints the pod does not tolerate (less is better).
func (*TaintToleration) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	tols, _ := state.Read(stateKey).(preferTolerations)
	var n int64
	for i := range ni.Node().Spec.Taints {
		t := &ni.Node().Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !helper.Tolerates(tols, t) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore implements framework.ScoreNormalizer: fewest untolerated
// taints → 100.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores []framework.NodeScore) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions.
func (*TaintToleration) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}}
}
