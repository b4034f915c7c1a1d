package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// PodPriority is the pod's spec.priority, 0 when unset (upstream's
// corev1helpers.PodPriority).
func PodPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// PodNominator keeps the pods nominated to a node by preemption: pods that
// wait for their victims to leave. Their resources are counted on that node
// when a pod of equal or lower priority is filtered, so the room preemption
// made is not taken by someone else (upstream's PodNominator; the
// scheduling queue implements it). Safe for concurrent use.
type PodNominator interface {
	// AddNominatedPod records pi as nominated to nodeName, replacing an
	// earlier nomination of the same pod.
	AddNominatedPod(pi *PodInfo, nodeName string)
	// DeleteNominatedPodIfExists forgets the pod's nomination.
	DeleteNominatedPodIfExists(pod *corev1.Pod)
	// NominatedPodsForNode returns the pods nominated to nodeName; the
	// slice is the caller's.
	NominatedPodsForNode(nodeName string) []*PodInfo
	// NominatedNodeName is where the pod is nominated in memory, "" when
	// nowhere: ahead of its status.nominatedNodeName, which is written
	// asynchronously.
	NominatedNodeName(pod *corev1.Pod) string
}

// MetricsRecorder takes what plugins measure for the scheduler's metrics
// (upstream's preemption series).
type MetricsRecorder interface {
	// PreemptionAttempt counts one run of preemption (a PostFilter).
	PreemptionAttempt()
	// PreemptionVictims records the victims of one chosen candidate.
	PreemptionVictims(n int)
}

type noMetrics struct{}

func (noMetrics) PreemptionAttempt()    {}
func (noMetrics) PreemptionVictims(int) {}

// RunFilterPluginsWithNominatedPods is RunFilterPlugins that respects the
// nominator, as upstream's: when pods of the pod's priority or higher are
// nominated to the node, the filters run twice — once with those pods
// added to a copy of the node (they will take their room: resources,
// anti-affinity) and once without them (they may not come: affinity to
// them must not count). The pod passes only if both pass. Without such
// nominated pods it is one RunFilterPlugins. Safe for concurrent use over
// different nodes.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status {
	if n := f.opts.Nominator; n != nil && ni.Node() != nil {
		if nominated := n.NominatedPodsForNode(ni.Node().Name); len(nominated) > 0 {
			var with *NodeInfo
			prio := PodPriority(pod)
			for _, npi := range nominated {
				if npi.Pod.UID == pod.UID || PodPriority(npi.Pod) < prio {
					continue
				}
				if with == nil {
					with = ni.Clone()
				}
				with.AddPodInfo(npi)
			}
			if with != nil {
				if s := f.RunFilterPlugins(ctx, state, pod, with); !s.IsSuccess() {
					return s
				}
			}
		}
	}
	return f.RunFilterPlugins(ctx, state, pod, ni)
}

// PodNominator implements Handle; nil when the scheduler keeps none.
func (f *Framework) PodNominator() PodNominator { return f.opts.Nominator }

// MetricsRecorder implements Handle; never nil.
func (f *Framework) MetricsRecorder() MetricsRecorder {
	if f.opts.Metrics == nil {
		return noMetrics{}
	}
	return f.opts.Metrics
}
