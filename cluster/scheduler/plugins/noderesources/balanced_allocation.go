package noderesources

import (
	"context"
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// BalancedAllocationName is the plugin's name in the registry and in
// configuration.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

// BalancedAllocation prefers nodes where, with the pod placed, cpu and
// memory are used in equal shares of allocatable.
type BalancedAllocation struct{}

var (
	_ framework.PreScorePlugin = &BalancedAllocation{}
	_ framework.ScorePlugin    = &BalancedAllocation{}
)

// NewBalancedAllocation builds the plugin.
func NewBalancedAllocation(framework.Handle) (framework.Plugin, error) {
	return &BalancedAllocation{}, nil
}

// Name implements framework.Plugin.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

const balancedKey framework.StateKey = BalancedAllocationName

// PreScore implements framework.PreScorePlugin. A pod that requests no cpu
// or memory cannot unbalance a node: Skip, as upstream.
func (*BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	req := framework.PodRequests(pod)
	if req.MilliCPU == 0 && req.Memory == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedKey, &req)
	return nil
}

// Score implements framework.ScorePlugin.
func (*BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	req, ok := state.Read(balancedKey).(*framework.Resource)
	if !ok {
		r := framework.PodRequests(pod)
		req = &r
	}
	return Balanced(req, ni), nil
}

// Balanced is upstream's score: (1 − standard deviation of the requested
// fractions of cpu and memory) × 100, fractions capped at 1; resources
// the node does not have are left out.
func Balanced(req *framework.Resource, ni *framework.NodeInfo) int64 {
	var fr [2]float64
	n := 0
	for _, r := range [...][2]int64{
		{ni.Requested.MilliCPU + req.MilliCPU, ni.Allocatable.MilliCPU},
		{ni.Requested.Memory + req.Memory, ni.Allocatable.Memory},
	} {
		if r[1] == 0 {
			continue
		}
		fr[n] = min(float64(r[0])/float64(r[1]), 1)
		n++
	}
	var std float64
	if n == 2 {
		std = math.Abs(fr[0]-fr[1]) / 2
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
