package kubelet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitingState is why a container is not running, as the sync found it:
// ContainerCreating, ErrImagePull, ImagePullBackOff, CrashLoopBackOff,
// CreateContainerError, RunContainerError...
type waitingState struct {
	reason, message string
}

// statusInput is everything a pod's status is computed from. computeStatus
// is a pure function of it, so the status rules are tested without a
// runtime, an apiserver or a clock.
type statusInput struct {
	pod     *corev1.Pod
	rt      *podRuntime
	waiting map[string]waitingState
	// podError is a pod-level failure (the sandbox could not be created).
	podError string
	// ready and started are the probes' verdicts for a running container
	// (true when it has no such probe).
	ready, started func(name, containerID string) bool
	nodeIP         string
	runtimeName    string // the containerID scheme
	now            time.Time
	startTime      time.Time // when this kubelet first synced the pod
}

// metaTime is t at the second, as the API stores it: a status computed at
// nanoseconds would never equal the one read back.
func metaTime(t time.Time) metav1.Time {
	return metav1.NewTime(t.Truncate(time.Second))
}

func nsTime(ns int64) metav1.Time { return metaTime(time.Unix(0, ns)) }

// shouldRestart reports whether a container that exited with code is to be
// restarted under the pod's policy.
func shouldRestart(policy corev1.RestartPolicy, code int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

// computeStatus is the pod's status as the kubelet reports it: phase,
// conditions, container statuses, IPs and start time. Conditions the
// kubelet does not own are kept; transition times move only on a change.
func computeStatus(in statusInput) corev1.PodStatus {
	pod := in.pod
	old := &pod.Status
	st := corev1.PodStatus{QOSClass: old.QOSClass, NominatedNodeName: old.NominatedNodeName}

	st.ContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(in, &pod.Spec.Containers[i]))
	}
	st.Phase = podPhase(pod, st.ContainerStatuses)

	// IPs: the newest ready sandbox's; kept when none is ready (a stopped
	// pod keeps the address it had).
	if sb := in.rt.readySandbox(); sb != nil && sb.ip != "" {
		st.PodIP, st.PodIPs = sb.ip, []corev1.PodIP{{IP: sb.ip}}
	} else {
		st.PodIP, st.PodIPs = old.PodIP, old.PodIPs
	}
	if in.nodeIP != "" {
		st.HostIP, st.HostIPs = in.nodeIP, []corev1.HostIP{{IP: in.nodeIP}}
	}
	switch {
	case old.StartTime != nil:
		st.StartTime = old.StartTime
	default:
		t := metaTime(in.startTime)
		st.StartTime = &t
	}

	// Conditions.
	var notReady []string
	for _, cs := range st.ContainerStatuses {
		if !cs.Ready {
			notReady = append(notReady, cs.Name)
		}
	}
	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	containersReady := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	if len(notReady) > 0 || terminal {
		containersReady.Status = corev1.ConditionFalse
		containersReady.Reason = "ContainersNotReady"
		containersReady.Message = fmt.Sprintf("containers with unready status: [%s]", strings.Join(notReady, " "))
		if terminal {
			containersReady.Reason, containersReady.Message = "PodCompleted", ""
		}
	}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: containersReady.Status, Reason: containersReady.Reason, Message: containersReady.Message}
	if ready.Status == corev1.ConditionTrue {
		var gates []string
		for _, g := range pod.Spec.ReadinessGates {
			if c := findCondition(old.Conditions, g.ConditionType); c == nil || c.Status != corev1.ConditionTrue {
				gates = append(gates, string(g.ConditionType))
			}
		}
		if len(gates) > 0 {
			ready.Status, ready.Reason = corev1.ConditionFalse, "ReadinessGatesNotReady"
			ready.Message = fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True", strings.Join(gates, ", "))
		}
	}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	if c := findCondition(old.Conditions, corev1.PodScheduled); c != nil {
		scheduled = *c // the scheduler's; kept as it is
	}
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if terminal {
		initialized.Reason = "PodCompleted"
	}
	// PodReadyToStartContainers (upstream since v1.29): the sandbox is up
	// with its network, so the containers can start.
	sandboxReady := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}
	if sb := in.rt.readySandbox(); sb != nil && !terminal {
		sandboxReady.Status = corev1.ConditionTrue
	}
	owned := []corev1.PodCondition{sandboxReady, initialized, ready, containersReady, scheduled}
	for _, c := range owned {
		st.Conditions = append(st.Conditions, withTransition(c, old.Conditions, in.now))
	}
	for _, c := range old.Conditions {
		if !slices.ContainsFunc(owned, func(o corev1.PodCondition) bool { return o.Type == c.Type }) {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// withTransition gives c the previous condition's transition time when its
// status did not change, now otherwise.
func withTransition(c corev1.PodCondition, old []corev1.PodCondition, now time.Time) corev1.PodCondition {
	if p := findCondition(old, c.Type); p != nil && p.Status == c.Status {
		c.LastTransitionTime, c.LastProbeTime = p.LastTransitionTime, p.LastProbeTime
		return c
	}
	c.LastTransitionTime = metaTime(now)
	return c
}

func findCondition(cs []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func (in *statusInput) containerID(id string) string {
	return in.runtimeName + "://" + id
}

func (in *statusInput) terminated(c *containerState) *corev1.ContainerStateTerminated {
	reason := c.reason
	if reason == "" {
		reason = "Completed"
		if c.exitCode != 0 {
			reason = "Error"
		}
	}
	t := &corev1.ContainerStateTerminated{ExitCode: c.exitCode, Reason: reason, Message: c.message,
		ContainerID: in.containerID(c.id)}
	if c.startedAt > 0 {
		t.StartedAt = nsTime(c.startedAt)
	}
	if c.finishedAt > 0 {
		t.FinishedAt = nsTime(c.finishedAt)
	}
	return t
}

// containerStatus reports one container from its newest instance in the
// runtime and the sync's waiting reason.
func containerStatus(in statusInput, spec *corev1.Container) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image, Started: new(bool)}
	latest := in.rt.latest(spec.Name)
	w, hasWaiting := in.waiting[spec.Name]
	if !hasWaiting && in.podError != "" {
		w, hasWaiting = waitingState{reason: "ContainerCreating", message: in.podError}, true
	}
	if latest == nil {
		if !hasWaiting {
			w = waitingState{reason: "ContainerCreating"}
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
		return cs
	}
	cs.RestartCount = int32(latest.attempt)
	cs.ContainerID = in.containerID(latest.id)
	cs.ImageID = latest.imageRef
	prev := in.rt.previous(latest)
	if prev != nil && prev.exited() {
		cs.LastTerminationState.Terminated = in.terminated(prev)
	}
	switch {
	case latest.running():
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: nsTime(latest.startedAt)}
		started := in.started(spec.Name, latest.id)
		*cs.Started = started
		cs.Ready = started && in.ready(spec.Name, latest.id)
	case latest.exited():
		term := in.terminated(latest)
		if shouldRestart(in.pod.Spec.RestartPolicy, latest.exitCode) && in.pod.DeletionTimestamp == nil {
			// It will run again: waiting (CrashLoopBackOff while backing
			// off), with the exit as its last state.
			if !hasWaiting {
				w = waitingState{reason: "ContainerCreating"}
			}
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
			cs.LastTerminationState = corev1.ContainerState{Terminated: term}
		} else {
			cs.State.Terminated = term
		}
	default: // created, not yet started
		if !hasWaiting {
			w = waitingState{reason: "ContainerCreating"}
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
	}
	return cs
}

// podPhase is upstream's getPhase for a pod without init containers, with
// terminal phases kept once reached.
func podPhase(pod *corev1.Pod, statuses []corev1.ContainerStatus) corev1.PodPhase {
	if p := pod.Status.Phase; p == corev1.PodSucceeded || p == corev1.PodFailed {
		return p
	}
	var waiting, running, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
			return corev1.PodRunning // crash-looping
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return corev1.PodFailed
		}
		return corev1.PodRunning // OnFailure: will restart
	}
	return corev1.PodPending
}

// isReady reports whether a status says Ready=True.
func isReady(st *corev1.PodStatus) bool {
	c := findCondition(st.Conditions, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}
