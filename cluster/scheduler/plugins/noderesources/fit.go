package noderesources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// FitName is the plugin's name in the registry and in configuration.
const FitName = "NodeResourcesFit"

// Upstream's reasons.
const (
	ErrReasonTooManyPods = "Too many pods"
	reasonInsufficient   = "Insufficient "
)

// InsufficientReason is the reason for a resource that does not fit:
// "Insufficient cpu".
func InsufficientReason(r corev1.ResourceName) string { return reasonInsufficient + string(r) }

// Fit filters nodes without room for the pod and scores the rest by how
// much they leave unallocated (LeastAllocated).
type Fit struct{}

var (
	_ framework.PreFilterPlugin   = &Fit{}
	_ framework.FilterPlugin      = &Fit{}
	_ framework.PreScorePlugin    = &Fit{}
	_ framework.ScorePlugin       = &Fit{}
	_ framework.EnqueueExtensions = &Fit{}
)

// NewFit builds the plugin.
func NewFit(framework.Handle) (framework.Plugin, error) { return &Fit{}, nil }

// Name implements framework.Plugin.
func (*Fit) Name() string { return FitName }

const stateKey framework.StateKey = FitName

// podRequests is the pod's requests, computed once per cycle.
type podRequests struct {
	req     framework.Resource
	nonZero framework.Resource
}

func requestsOf(state *framework.CycleState, pod *corev1.Pod) *podRequests {
	if s, ok := state.Read(stateKey).(*podRequests); ok {
		return s
	}
	return &podRequests{req: framework.PodRequests(pod), nonZero: framework.PodRequestsNonZero(pod)}
}

// PreFilter implements framework.PreFilterPlugin.
func (*Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod) *framework.Status {
	state.Write(stateKey, requestsOf(state, pod))
	return nil
}

// Filter implements framework.FilterPlugin.
func (*Fit) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, ok := state.Read(stateKey).(*podRequests)
	if !ok {
		return framework.AsStatus(fmt.Errorf("%s: PreFilter state missing", FitName))
	}
	if reasons := Fits(&s.req, ni); len(reasons) > 0 {
		return framework.NewStatus(framework.Unschedulable, reasons...)
	}
	return nil
}

// Fits returns why a pod requesting req does not fit ni; nil when it fits.
func Fits(req *framework.Resource, ni *framework.NodeInfo) []string {
	var reasons []string
	if int64(len(ni.Pods))+1 > ni.Allocatable.AllowedPodNumber {
		reasons = append(reasons, ErrReasonTooManyPods)
	}
	if req.IsZero() {
		return reasons
	}
	free := func(alloc, used int64) int64 { return alloc - used }
	if req.MilliCPU > 0 && req.MilliCPU > free(ni.Allocatable.MilliCPU, ni.Requested.MilliCPU) {
		reasons = append(reasons, InsufficientReason(corev1.ResourceCPU))
	}
	if req.Memory > 0 && req.Memory > free(ni.Allocatable.Memory, ni.Requested.Memory) {
		reasons = append(reasons, InsufficientReason(corev1.ResourceMemory))
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > free(ni.Allocatable.EphemeralStorage, ni.Requested.EphemeralStorage) {
		reasons = append(reasons, InsufficientReason(corev1.ResourceEphemeralStorage))
	}
	for name, v := range req.ScalarResources {
		if v > 0 && v > free(ni.Allocatable.ScalarResources[name], ni.Requested.ScalarResources[name]) {
			reasons = append(reasons, InsufficientReason(name))
		}
	}
	return reasons
}

// PreScore implements framework.PreScorePlugin: it makes sure the
// requests are in the state when Filter was disabled.
func (*Fit) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(stateKey, requestsOf(state, pod))
	return nil
}

// Score implements framework.ScorePlugin: LeastAllocated over cpu and
// memory (weight 1 each), counting scoring defaults for missing requests.
func (*Fit) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s := requestsOf(state, pod)
	return LeastAllocated(&s.nonZero, ni), nil
}

// LeastAllocated is upstream's LeastAllocated score of a pod requesting
// req (non-zero) on ni: the average over cpu and memory of the share of
// allocatable left free after placing the pod, in [0, 100].
func LeastAllocated(req *framework.Resource, ni *framework.NodeInfo) int64 {
	var sum, n int64
	for _, r := range [...][2]int64{
		{ni.NonZeroRequested.MilliCPU + req.MilliCPU, ni.Allocatable.MilliCPU},
		{ni.NonZeroRequested.Memory + req.Memory, ni.Allocatable.Memory},
	} {
		requested, capacity := r[0], r[1]
		if capacity == 0 {
			continue
		}
		n++
		if requested > capacity {
			continue
		}
		sum += (capacity - requested) * framework.MaxNodeScore / capacity
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// EventsToRegister implements framework.EnqueueExtensions: room appears when
// a pod leaves or shrinks, or a node is added or grows.
func (*Fit) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Delete | framework.UpdatePodRequest},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
	}
}
