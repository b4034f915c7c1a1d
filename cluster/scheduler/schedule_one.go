package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/queue"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// Event reasons, as upstream.
const (
	ReasonScheduled        = "Scheduled"
	ReasonFailedScheduling = "FailedScheduling"
)

// scheduleOne is one scheduling cycle for a popped pod, on the scheduling
// goroutine: snapshot, algorithm, assume, reserve — then the binding is
// handed to the executor. It is deterministic given the cache, the queue,
// the clock and the random seed; nothing in it waits on the apiserver.
func (s *Scheduler) scheduleOne(ctx context.Context, p *queue.QueuedPodInfo) {
	pod := p.Pod
	fwk := s.profiles[pod.Spec.SchedulerName]
	if fwk == nil || pod.DeletionTimestamp != nil {
		s.queue.Done(pod)
		return
	}
	start := s.clock.Now()
	state := framework.NewCycleState()
	s.cache.UpdateSnapshot(s.snapshot)
	result, err := s.algo.schedulePod(ctx, fwk, state, pod)
	if err != nil {
		var nominated string
		var fitErr *framework.FitError
		if errors.As(err, &fitErr) && fwk.HasPostFilterPlugins() {
			// No node fits: preemption's turn (upstream's PostFilter). A
			// nominated node is where the pod waits for its victims.
			var st *framework.Status
			nominated, st = fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
			fitErr.Diagnosis.PostFilterMsg = st.Message()
			if st.Code() == framework.Error && ctx.Err() == nil {
				s.log.Warn("preemption failed", "pod", pod.Namespace+"/"+pod.Name, "err", st.AsError())
			}
		}
		s.failed(ctx, fwk, p, err, start, nominated)
		return
	}
	host := result.SuggestedHost
	// The assumed pod is a shallow copy: only spec.nodeName differs, and
	// nothing mutates what it shares with the informer's object.
	assumed := *pod
	assumed.Spec.NodeName = host
	if err := s.cache.AssumePod(&assumed); err != nil {
		s.failed(ctx, fwk, p, fmt.Errorf("assuming pod on node %s: %w", host, err), start, "")
		return
	}
	// Assumed, its resources are on the node: a nomination would count
	// them twice.
	s.queue.DeleteNominatedPodIfExists(pod)
	if st := fwk.RunReservePluginsReserve(ctx, state, &assumed, host); !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, &assumed, host)
		_ = s.cache.ForgetPod(&assumed)
		s.failed(ctx, fwk, p, st.AsError(), start, "")
		return
	}
	now := s.clock.Now()
	s.tracer.EmitAt(now, trace.PodScheduled, "Pod", pod.Namespace, pod.Name, pod.UID)
	s.metrics.attempt(resultScheduled, fwk.ProfileName(), now.Sub(start))
	s.exec.Go(func() { s.bind(ctx, fwk, state, &assumed, p) })
}

// bind is the binding cycle, off the scheduling goroutine. A context that
// ended (leadership lost) means no binding call is made at all.
func (s *Scheduler) bind(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, assumed *corev1.Pod, p *queue.QueuedPodInfo) {
	host := assumed.Spec.NodeName
	var st *framework.Status
	start := s.clock.Now()
	if s.bindDelay > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(s.bindDelay):
		}
	}
	if err := ctx.Err(); err != nil {
		st = framework.AsStatus(err)
	} else {
		st = fwk.RunBindPlugins(ctx, state, assumed, host)
	}
	if st.IsSuccess() {
		_ = s.cache.FinishBinding(assumed)
		// pod.bound is the binding apiserver's stamp (etcd acknowledged
		// the binding), so ⑤ ends where it is persisted.
		now := s.clock.Now()
		s.metrics.bound(true, now.Sub(start), now.Sub(p.FirstSeen))
		s.queue.Done(assumed)
		if s.recorder != nil {
			s.recorder.Eventf(assumed, corev1.EventTypeNormal, ReasonScheduled, "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, host)
		}
		return
	}
	if ctx.Err() == nil {
		s.log.Warn("binding failed", "pod", assumed.Namespace+"/"+assumed.Name, "node", host, "err", st.AsError())
	}
	fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
	if err := s.cache.ForgetPod(assumed); err != nil {
		s.log.Error("cache: forget pod", "pod", assumed.Namespace+"/"+assumed.Name, "err", err)
	}
	if ctx.Err() != nil {
		s.queue.Done(assumed)
		return
	}
	s.metrics.bound(false, 0, 0)
	s.failed(ctx, fwk, p, fmt.Errorf("binding rejected: %w", st.AsError()), start, "")
}

// failed handles a pod whose cycle or binding failed: requeue it (the
// unschedulable pool for "no node fits", backoff otherwise), then tell the
// user with a FailedScheduling event and the PodScheduled=False condition.
// nominated is the node preemption nominated the pod to ("" for none: a
// nomination the pod's status holds stays, as upstream's); it is recorded
// in the queue's nominator at once and in status.nominatedNodeName by the
// condition's write.
func (s *Scheduler) failed(ctx context.Context, fwk *framework.Framework, p *queue.QueuedPodInfo, err error, start time.Time, nominated string) {
	var fitErr *framework.FitError
	unschedulable := errors.As(err, &fitErr) || errors.Is(err, framework.ErrNoNodesAvailable)
	result, reason := resultError, "SchedulerError"
	p.UnschedulablePlugins = nil
	if unschedulable {
		result, reason = resultUnschedulable, corev1.PodReasonUnschedulable
		if fitErr != nil {
			p.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		}
	}
	s.metrics.attempt(result, fwk.ProfileName(), s.clock.Now().Sub(start))
	if ctx.Err() != nil {
		s.queue.Done(p.Pod)
		return
	}
	if !s.queue.Requeue(p, unschedulable) {
		return // deleted or bound meanwhile
	}
	switch {
	case nominated != "":
		s.queue.AddNominatedPod(p.PodInfo, nominated)
	case p.Pod.Status.NominatedNodeName != "":
		s.queue.AddNominatedPod(p.PodInfo, p.Pod.Status.NominatedNodeName)
	}
	msg := err.Error()
	if !unschedulable {
		s.log.Warn("scheduling failed", "pod", p.Pod.Namespace+"/"+p.Pod.Name, "err", err)
	}
	if s.recorder != nil {
		s.recorder.Eventf(p.Pod, corev1.EventTypeWarning, ReasonFailedScheduling, "%s", msg)
	}
	if s.client != nil && (needsCondition(p.Pod, reason, msg) || (nominated != "" && nominated != p.Pod.Status.NominatedNodeName)) {
		pod := p.Pod
		s.exec.Go(func() { s.patchCondition(ctx, pod, reason, msg, nominated) })
	}
}

func needsCondition(pod *corev1.Pod, reason, msg string) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status != corev1.ConditionFalse || c.Reason != reason || c.Message != msg
		}
	}
	return true
}

// patchCondition sets PodScheduled=False on the pod's status, as upstream,
// so `kubectl get pods` and `describe` say why it waits, and
// status.nominatedNodeName when preemption nominated a node. A pod that left
// the queue (bound meanwhile) is left alone.
func (s *Scheduler) patchCondition(ctx context.Context, pod *corev1.Pod, reason, msg, nominated string) {
	if ctx.Err() != nil {
		return
	}
	status := map[string]any{}
	if where := s.queue.Where(pod); where != "" && where != "inflight" {
		status["conditions"] = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: msg,
			LastTransitionTime: metav1.NewTime(s.clock.Now()),
		}}
	}
	if nominated != "" {
		// Written even when the pod is being placed again meanwhile (its
		// victims went fast): where it was nominated is part of its story.
		status["nominatedNodeName"] = nominated
	}
	if len(status) == 0 {
		return
	}
	patch := map[string]any{"status": status}
	data, err := json.Marshal(patch)
	if err != nil {
		return
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status"); err != nil && ctx.Err() == nil {
		s.log.Debug("pod condition", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
}
