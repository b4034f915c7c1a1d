package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// Plugin is what every plugin is: a name, unique in a registry.
type Plugin interface {
	Name() string
}

// PreFilterPlugin runs once per cycle before any Filter: it computes what
// the filters of all nodes share and stores it in the CycleState. Skip
// means this plugin's Filter is not needed for the pod; Unschedulable
// rejects the pod on every node at once.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *corev1.Pod) *Status
}

// FilterPlugin decides whether the pod fits one node. It runs concurrently
// for many nodes. "Does not fit" is Unschedulable or
// UnschedulableAndUnresolvable with a user-facing reason, never an error.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// NodeToStatus is each rejecting node's status after filtering.
type NodeToStatus map[string]*Status

// PostFilterPlugin runs when no node fits (preemption's place). Success
// with a nominated node name means the pod may fit there later.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, statuses NodeToStatus) (nominatedNode string, status *Status)
}

// PreScorePlugin runs once per cycle before Score, with the feasible
// nodes. Skip means its Score has nothing to say for this pod. The nodes
// slice is reused by the next cycle: keep what is needed, not the slice.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks a feasible node. It runs concurrently for many nodes.
// Scores end in [MinNodeScore, MaxNodeScore]: a plugin whose raw scores are
// not in that range also implements ScoreNormalizer.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
}

// ScoreNormalizer is the NormalizeScore extension of a ScorePlugin: it
// runs once per cycle with every node's raw score and rewrites them into
// [MinNodeScore, MaxNodeScore].
type ScoreNormalizer interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *corev1.Pod, scores []NodeScore) *Status
}

// ReservePlugin is told the chosen node before binding starts (Reserve)
// and told to undo it if the pod is not bound after all (Unreserve).
// Unreserve must be idempotent and must not fail.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// BindPlugin makes the decision durable. It runs off the scheduling
// goroutine. Skip passes the pod to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// EnqueueExtensions is implemented by plugins that can reject pods: it
// lists the cluster events after which a pod this plugin rejected may fit,
// so the queue moves only those pods back to scheduling.
type EnqueueExtensions interface {
	EventsToRegister() []ClusterEvent
}

// NodeInfoLister reads the snapshot a cycle runs on.
type NodeInfoLister interface {
	// List is every node, in the snapshot's stable order.
	List() []*NodeInfo
	// HavePodsWithAffinityList are the nodes with pods that have pod
	// affinity or anti-affinity, required or preferred.
	HavePodsWithAffinityList() []*NodeInfo
	// HavePodsWithRequiredAntiAffinityList are the nodes with pods that
	// have required pod anti-affinity.
	HavePodsWithRequiredAntiAffinityList() []*NodeInfo
	// Get returns a node by name, or nil.
	Get(name string) *NodeInfo
}

// Handle is what a plugin gets from the framework at construction.
type Handle interface {
	// SnapshotLister is the current cycle's snapshot; valid during a cycle.
	SnapshotLister() NodeInfoLister
	// ClientSet reaches the apiserver (binders only).
	ClientSet() kubernetes.Interface
	// Parallelizer runs work over nodes in parallel.
	Parallelizer() Parallelizer
	// Workloads reads services and pod owners; nil without an apiserver.
	Workloads() *WorkloadListers
	// SharedInformerFactory is the term's informer factory: a plugin may
	// ask it for listers at construction (preemption's
	// PodDisruptionBudgets); the scheduler starts it and waits for its
	// caches before the first cycle. Nil when the scheduler has no client.
	SharedInformerFactory() informers.SharedInformerFactory
	// EventRecorder writes Events (preemption's Preempted); nil before the
	// scheduler runs or when it records none.
	EventRecorder() record.EventRecorder
	// PodNominator keeps the pods preemption nominated; nil when none is
	// kept.
	PodNominator() PodNominator
	// MetricsRecorder takes the plugins' metrics; never nil.
	MetricsRecorder() MetricsRecorder
	// RunFilterPluginsWithNominatedPods runs the profile's filters for
	// one node, counting the pods nominated to it (preemption's
	// simulation).
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status
}

// PluginFactory builds a plugin for one profile.
type PluginFactory func(h Handle) (Plugin, error)

// Registry maps a plugin name to its factory.
type Registry map[string]PluginFactory
