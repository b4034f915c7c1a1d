package nodename

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "NodeName"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName filters nodes by the pod's spec.nodeName.
type NodeName struct{}

var (
	_ framework.FilterPlugin      = &NodeName{}
	_ framework.EnqueueExtensions = &NodeName{}
)

// New builds the plugin.
func New(framework.Handle) (framework.Plugin, error) { return &NodeName{}, nil }

// Name implements framework.Plugin.
func (*NodeName) Name() string { return Name }

// Fits reports whether pod may run on node: it names no node, or this one.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
}

// Filter implements framework.FilterPlugin.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !Fits(pod, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions: only a new node
// can be the named one.
func (*NodeName) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add}}
}
