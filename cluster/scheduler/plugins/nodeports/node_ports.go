package nodeports

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

// NodePorts filters by free host ports.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = &NodePorts{}
	_ framework.FilterPlugin      = &NodePorts{}
	_ framework.EnqueueExtensions = &NodePorts{}
)

// New builds the plugin.
func New(framework.Handle) (framework.Plugin, error) { return &NodePorts{}, nil }

// Name implements framework.Plugin.
func (*NodePorts) Name() string { return Name }

const stateKey framework.StateKey = Name

type wantPorts []corev1.ContainerPort

// PreFilter implements framework.PreFilterPlugin: a pod without host
// ports skips the Filter.
func (*NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	ports := framework.HostPorts(pod)
	if len(ports) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, wantPorts(ports))
	return nil
}

// Filter implements framework.FilterPlugin.
func (*NodePorts) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	want, ok := state.Read(stateKey).(wantPorts)
	if !ok {
		return framework.AsStatus(fmt.Errorf("%s: PreFilter state missing", Name))
	}
	if !framework.PortsFit(want, ni.UsedPorts) {
		return framework.NewStatus(framework.Unschedulable, ErrReason)
	}
	return nil
}

// Fits reports whether pod's host ports are free in used (the kubelet's
// admission check).
func Fits(pod *corev1.Pod, used framework.HostPortInfo) bool {
	return framework.PortsFit(framework.HostPorts(pod), used)
}

// EventsToRegister implements framework.EnqueueExtensions: a pod that
// frees its ports going away, or a new node.
func (*NodePorts) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add},
	}
}
