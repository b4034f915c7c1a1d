package nodeunschedulable

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/helper"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "NodeUnschedulable"

// ErrReason is upstream's reason.
const ErrReason = "node(s) were unschedulable"

// NodeUnschedulable filters cordoned nodes.
type NodeUnschedulable struct{}

var (
	_ framework.FilterPlugin      = &NodeUnschedulable{}
	_ framework.EnqueueExtensions = &NodeUnschedulable{}
)

// New builds the plugin.
func New(framework.Handle) (framework.Plugin, error) { return &NodeUnschedulable{}, nil }

// Name implements framework.Plugin.
func (*NodeUnschedulable) Name() string { return Name }

var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// Fits reports whether pod may run on node as far as cordoning goes.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	return !node.Spec.Unschedulable || helper.Tolerates(pod.Spec.Tolerations, &unschedulableTaint)
}

// Filter implements framework.FilterPlugin.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !Fits(pod, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions.
func (*NodeUnschedulable) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}}
}
