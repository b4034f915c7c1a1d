package st

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Handle is a framework.Handle over a fixed lister, for plugin tests.
type Handle struct {
	Lister  framework.NodeInfoLister
	Client  kubernetes.Interface
	Listers *framework.WorkloadListers
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

// NodeInfo returns a NodeInfo of node with pods on it.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}
