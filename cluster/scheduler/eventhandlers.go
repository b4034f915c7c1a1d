package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// addEventHandlers wires the informers to the queue and the cache. Handlers
// only record: no handler schedules, binds or calls the apiserver.
func (s *Scheduler) addEventHandlers(nodes, pending, assigned toolscache.SharedIndexInformer) error {
	if _, err := pending.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onPendingAdd(obj) },
		UpdateFunc: func(old, obj any) { s.onPendingUpdate(old, obj) },
		DeleteFunc: func(obj any) { s.onPendingDelete(obj) },
	}); err != nil {
		return err
	}
	if _, err := assigned.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onAssignedAdd(obj) },
		UpdateFunc: func(old, obj any) { s.onAssignedUpdate(old, obj) },
		DeleteFunc: func(obj any) { s.onAssignedDelete(obj) },
	}); err != nil {
		return err
	}
	_, err := nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onNodeAdd(obj) },
		UpdateFunc: func(old, obj any) { s.onNodeUpdate(old, obj) },
		DeleteFunc: func(obj any) { s.onNodeDelete(obj) },
	})
	return err
}

// responsible reports whether the pod is this scheduler's to place now: not
// bound, named for one of its profiles, and without scheduling gates (a
// gated pod waits outside the queue until its gates are removed, as
// upstream's SchedulingGates).
func (s *Scheduler) responsible(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && s.profiles[pod.Spec.SchedulerName] != nil && len(pod.Spec.SchedulingGates) == 0
}

func asPod(obj any) *corev1.Pod {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, _ := obj.(*corev1.Pod)
	return p
}

func asNode(obj any) *corev1.Node {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	n, _ := obj.(*corev1.Node)
	return n
}

// onPendingAdd is step ④: the scheduler sees a pod to place. The stamp is
// taken for every pending pod the informer delivers, gated or not: it is
// when the scheduler saw it.
func (s *Scheduler) onPendingAdd(obj any) {
	pod := asPod(obj)
	if pod == nil || s.profiles[pod.Spec.SchedulerName] == nil {
		return
	}
	s.tracer.Emit(trace.PodObservedSched, "Pod", pod.Namespace, pod.Name, pod.UID)
	if s.responsible(pod) {
		s.queue.Add(pod)
	}
}

func (s *Scheduler) onPendingUpdate(old, obj any) {
	pod, prev := asPod(obj), asPod(old)
	if pod == nil {
		return
	}
	if !s.responsible(pod) {
		s.queue.Delete(pod)
		return
	}
	if prev != nil && !s.responsible(prev) {
		s.queue.Add(pod) // its last gate was removed
		return
	}
	s.queue.Update(prev, pod)
}

// onPendingDelete: deleted, or bound (it left the pending selection).
func (s *Scheduler) onPendingDelete(obj any) {
	if pod := asPod(obj); pod != nil {
		s.queue.Delete(pod)
	}
}

// onAssignedAdd confirms an assumed pod, or accounts a pod bound by anyone.
func (s *Scheduler) onAssignedAdd(obj any) {
	pod := asPod(obj)
	if pod == nil {
		return
	}
	if err := s.cache.AddPod(pod); err != nil {
		s.log.Error("cache: add pod", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	s.queue.Delete(pod) // bound: it is no one's to schedule any more
	s.queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodAdd)
}

func (s *Scheduler) onAssignedUpdate(old, obj any) {
	pod, prev := asPod(obj), asPod(old)
	if pod == nil || prev == nil {
		return
	}
	if err := s.cache.UpdatePod(prev, pod); err != nil {
		s.log.Error("cache: update pod", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	var action framework.ActionType
	if !equality.Semantic.DeepEqual(prev.Labels, pod.Labels) {
		action |= framework.UpdatePodLabel
	}
	if r0, r1 := framework.PodRequests(prev), framework.PodRequests(pod); !equality.Semantic.DeepEqual(r0, r1) {
		action |= framework.UpdatePodRequest
	}
	if action != 0 {
		s.queue.MoveAllToActiveOrBackoffQueue(framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: action, Label: "AssignedPodUpdate"})
	}
}

// onAssignedDelete frees the pod's resources: pods that did not fit may now.
func (s *Scheduler) onAssignedDelete(obj any) {
	pod := asPod(obj)
	if pod == nil {
		return
	}
	if err := s.cache.RemovePod(pod); err != nil {
		s.log.Error("cache: remove pod", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	s.queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDel)
}

func (s *Scheduler) onNodeAdd(obj any) {
	node := asNode(obj)
	if node == nil {
		return
	}
	s.cache.AddNode(node)
	s.queue.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd)
}

func (s *Scheduler) onNodeUpdate(old, obj any) {
	node, prev := asNode(obj), asNode(old)
	if node == nil || prev == nil {
		return
	}
	s.cache.UpdateNode(prev, node)
	if action := nodeChange(prev, node); action != 0 {
		s.queue.MoveAllToActiveOrBackoffQueue(framework.ClusterEvent{Resource: framework.Node, ActionType: action, Label: "NodeUpdate"})
	}
}

func (s *Scheduler) onNodeDelete(obj any) {
	if node := asNode(obj); node != nil {
		s.cache.RemoveNode(node)
	}
}

// nodeChange classifies a node update by what scheduling cares about; a
// heartbeat (conditions, timestamps) is no change at all.
func nodeChange(old, node *corev1.Node) framework.ActionType {
	var a framework.ActionType
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable) {
		a |= framework.UpdateNodeAllocatable
	}
	if !equality.Semantic.DeepEqual(old.Labels, node.Labels) {
		a |= framework.UpdateNodeLabel
	}
	if !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) || old.Spec.Unschedulable != node.Spec.Unschedulable {
		a |= framework.UpdateNodeTaint
	}
	return a
}
