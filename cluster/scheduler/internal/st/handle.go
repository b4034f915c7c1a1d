package st

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Handle is a framework.Handle over a fixed lister, for plugin tests.
// Filters is what RunFilterPluginsWithNominatedPods runs (nil: every node
// fits).
type Handle struct {
	Lister   framework.NodeInfoLister
	Client   kubernetes.Interface
	Listers  *framework.WorkloadListers
	Recorder record.EventRecorder
	Filters  []framework.FilterPlugin
	Metrics  framework.MetricsRecorder
}

var _ framework.Handle = &Handle{}

// SnapshotLister implements framework.Handle.
func (h *Handle) SnapshotLister() framework.NodeInfoLister { return h.Lister }

// ClientSet implements framework.Handle.
func (h *Handle) ClientSet() kubernetes.Interface { return h.Client }

// Workloads implements framework.Handle.
func (h *Handle) Workloads() *framework.WorkloadListers { return h.Listers }

// Parallelizer implements framework.Handle.
func (h *Handle) Parallelizer() framework.Parallelizer { return framework.NewParallelizer(4) }

// SharedInformerFactory implements framework.Handle: none.
func (h *Handle) SharedInformerFactory() informers.SharedInformerFactory { return nil }

// EventRecorder implements framework.Handle.
func (h *Handle) EventRecorder() record.EventRecorder { return h.Recorder }

// PodNominator implements framework.Handle: none.
func (h *Handle) PodNominator() framework.PodNominator { return nil }

// MetricsRecorder implements framework.Handle: Metrics, or one that
// records nothing.
func (h *Handle) MetricsRecorder() framework.MetricsRecorder {
	if h.Metrics == nil {
		return nopMetrics{}
	}
	return h.Metrics
}

type nopMetrics struct{}

func (nopMetrics) PreemptionAttempt()    {}
func (nopMetrics) PreemptionVictims(int) {}

// RunFilterPluginsWithNominatedPods implements framework.Handle: Filters
// in order, without nominated pods.
func (h *Handle) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	for _, f := range h.Filters {
		if s := f.Filter(ctx, state, pod, ni); !s.IsSuccess() {
			return s.WithPlugin(f.Name())
		}
	}
	return nil
}

// NodeInfo returns a NodeInfo of node with pods on it.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}
