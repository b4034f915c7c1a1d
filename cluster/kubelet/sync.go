package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/kubelet/prober"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// syncPod brings what the runtime runs for one pod in line with the pod
// (step ⑦). It returns when to sync again (0: only when woken) and whether
// the worker is finished: the pod is gone and nothing of it is left in the
// runtime.
func (k *Kubelet) syncPod(ctx context.Context, w *podWorker, pod *corev1.Pod) (retry time.Duration, finished bool) {
	if pod != nil {
		w.lastPod = pod
	}
	switch {
	case pod == nil:
		return k.syncGone(ctx, w)
	case pod.DeletionTimestamp != nil:
		return k.syncDeleting(ctx, w, pod)
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return k.syncTerminal(ctx, w, pod)
	}
	return k.syncRunning(ctx, w, pod)
}

// failed counts a failed sync and returns when to retry: SyncRetryInitial
// doubling to SyncRetryMax.
func (k *Kubelet) failed(w *podWorker, what string, err error) time.Duration {
	w.retries++
	d := k.cfg.SyncRetryInitial << min(w.retries-1, 20)
	if d > k.cfg.SyncRetryMax || d <= 0 {
		d = k.cfg.SyncRetryMax
	}
	if !errors.Is(err, context.Canceled) {
		k.log.Warn(what, "pod", w.key, "err", err, "retry", d)
	}
	return d
}

// gracePeriod is how long a pod's containers get to stop when it is deleted.
func gracePeriod(pod *corev1.Pod) int64 {
	switch {
	case pod == nil:
		return 2
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// killPod stops every running container (in parallel, each with grace
// seconds), then stops and, if remove, removes every sandbox.
func (k *Kubelet) killPod(ctx context.Context, rt *podRuntime, grace int64, remove bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(rt.containers))
	for i, c := range rt.containers {
		if !c.running() && c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
			continue
		}
		wg.Go(func() {
			if err := k.runtime.StopContainer(ctx, c.id, grace); err != nil && status.Code(errors.Unwrap(err)) != codes.NotFound {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range rt.sandboxes {
		if s.ready {
			if err := k.runtime.StopPodSandbox(ctx, s.id); err != nil {
				return err
			}
		}
		if remove {
			if err := k.runtime.RemovePodSandbox(ctx, s.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncGone cleans up after a pod the apiserver no longer has: deleted by
// force, or an orphan found in the runtime.
func (k *Kubelet) syncGone(ctx context.Context, w *podWorker) (time.Duration, bool) {
	k.probes.RemovePod(w.uid)
	rt, err := k.readPod(ctx, w.uid, &w.cache)
	if err != nil {
		return k.failed(w, "reading runtime", err), false
	}
	if rt.empty() {
		k.crashLoop.ForgetPrefix(string(w.uid))
		k.pullBackoff.ForgetPrefix(string(w.uid))
		return 0, true
	}
	if err := k.killPod(ctx, rt, gracePeriod(w.lastPod), true); err != nil {
		return k.failed(w, "removing pod", err), false
	}
	k.log.Info("removed pod's sandboxes", "pod", w.key, "uid", w.uid, "sandboxes", len(rt.sandboxes))
	return time.Millisecond, false // read again: finished once empty
}

// syncDeleting finishes a graceful deletion: containers stopped with the
// grace period, sandboxes stopped and removed, then the pod object deleted
// with grace 0 and a UID precondition (so a new pod of the same name is
// never deleted by mistake).
func (k *Kubelet) syncDeleting(ctx context.Context, w *podWorker, pod *corev1.Pod) (time.Duration, bool) {
	k.probes.RemovePod(w.uid)
	rt, err := k.readPod(ctx, w.uid, &w.cache)
	if err != nil {
		return k.failed(w, "reading runtime", err), false
	}
	if !rt.empty() {
		for _, c := range rt.containers {
			if c.running() {
				k.containerEvent(pod, c.name, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.name))
			}
		}
		if err := k.killPod(ctx, rt, gracePeriod(pod), true); err != nil {
			return k.failed(w, "stopping pod", err), false
		}
	}
	err = k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return k.failed(w, "deleting pod", err), false
	}
	w.retries = 0
	return 0, false // the informer's delete event finishes the worker
}

// syncTerminal keeps a Succeeded or Failed pod down: nothing restarts and
// its sandbox is stopped, releasing its IP. Its record stays until the pod
// is deleted.
func (k *Kubelet) syncTerminal(ctx context.Context, w *podWorker, pod *corev1.Pod) (time.Duration, bool) {
	k.release(w)
	k.probes.RemovePod(w.uid)
	rt, err := k.readPod(ctx, w.uid, &w.cache)
	if err != nil {
		return k.failed(w, "reading runtime", err), false
	}
	if err := k.killPod(ctx, rt, gracePeriod(pod), false); err != nil {
		return k.failed(w, "stopping pod", err), false
	}
	w.retries = 0
	return 0, false
}

// probeVerdicts returns the readiness and started functions of a pod's
// status: a container without the probe is ready (started) once running.
func (k *Kubelet) probeVerdicts(pod *corev1.Pod) (ready, started func(name, id string) bool) {
	ready = func(name, id string) bool {
		r, ok := k.probes.Get(pod.UID, name, prober.Readiness, id)
		return !ok || r == prober.Success
	}
	started = func(name, id string) bool {
		r, ok := k.probes.Get(pod.UID, name, prober.Startup, id)
		return !ok || r == prober.Success
	}
	return ready, started
}

func (k *Kubelet) podStatus(w *podWorker, pod *corev1.Pod, rt *podRuntime) corev1.PodStatus {
	ready, started := k.probeVerdicts(pod)
	// The informer may not have seen the last status set yet: take the
	// kubelet's own conditions and start time from that one, so their
	// transition times do not move between two syncs.
	if last := k.status.last(pod.UID); last != nil {
		pod = pod.DeepCopy()
		pod.Status.Conditions = mergeOwnConditions(pod.Status.Conditions, last.Conditions)
		if pod.Status.StartTime == nil {
			pod.Status.StartTime = last.StartTime
		}
	}
	return computeStatus(statusInput{pod: pod, rt: rt, waiting: w.waiting, podError: w.podError,
		ready: ready, started: started, nodeIP: k.cfg.NodeIP, runtimeName: k.runtimeScheme(),
		now: k.clock.Now(), startTime: w.startedAt})
}

// mustKill reports whether a running container failed its liveness or
// startup probe, and why.
func (k *Kubelet) mustKill(pod *corev1.Pod, c *corev1.Container, id string) (bool, string) {
	if r, ok := k.probes.Get(pod.UID, c.Name, prober.Liveness, id); ok && r == prober.Failure {
		return true, fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name)
	}
	if r, ok := k.probes.Get(pod.UID, c.Name, prober.Startup, id); ok && r == prober.Failure {
		return true, fmt.Sprintf("Container %s failed startup probe, will be restarted", c.Name)
	}
	return false, ""
}

func probeGrace(pod *corev1.Pod, c *corev1.Container) int64 {
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
		if p != nil && p.TerminationGracePeriodSeconds != nil {
			return *p.TerminationGracePeriodSeconds
		}
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// syncRunning runs a pod: one ready sandbox (created if none, extra ones
// removed), then each container pulled, created and started, restarted
// per restartPolicy with backoff, killed on a failed liveness or startup
// probe; then the status is computed and handed to the status writer.
func (k *Kubelet) syncRunning(ctx context.Context, w *podWorker, pod *corev1.Pod) (time.Duration, bool) {
	if reason, msg, ok := k.admit(w, pod); !ok || w.rejected {
		if !ok {
			k.reject(w, pod, reason, msg)
		}
		return 0, false
	}
	k.probes.AddPod(pod)
	rt, err := k.readPod(ctx, pod.UID, &w.cache)
	if err != nil {
		return k.failed(w, "reading runtime", err), false
	}
	if w.startedAt.IsZero() {
		w.startedAt = k.clock.Now()
	}
	var retry time.Duration
	note := func(d time.Duration) {
		if d > 0 && (retry == 0 || d < retry) {
			retry = d
		}
	}
	changed := false
	// startedNow: the containers this sync started, whose first probes
	// it runs itself (prober.Manager.ProbeNow).
	startedNow := map[string]bool{}

	// The sandbox. Never two ready ones: extras (a crash between two
	// writes, a bug) go.
	sb := rt.readySandbox()
	for _, s := range rt.sandboxes {
		if s.ready && s != sb {
			k.log.Warn("removing an extra ready sandbox", "pod", w.key, "sandbox", s.id, "keep", sb.id)
			if err := k.killPod(ctx, &podRuntime{sandboxes: []*sandboxState{s}, containers: rt.runningIn(s.id)}, 0, true); err != nil {
				return k.failed(w, "removing extra sandbox", err), false
			}
			changed = true
		}
	}
	var sbCfg *runtimeapi.PodSandboxConfig
	if sb == nil {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && len(rt.containers) > 0 {
			// It ran and its sandbox is gone: it does not run again.
			k.status.set(pod, k.podStatus(w, pod, rt))
			return 0, false
		}
		// Tell the apiserver that the pod is being created, unless this
		// sync has its outcome first (statusWriter.setProvisional).
		k.status.setProvisional(pod, k.podStatus(w, pod, rt))
		var attempt uint32
		if len(rt.sandboxes) > 0 {
			attempt = rt.sandboxes[0].attempt + 1
		}
		sbCfg = k.sandboxConfig(pod, attempt)
		if !k.cfg.Hollow {
			if err := os.MkdirAll(sbCfg.LogDirectory, 0o755); err != nil {
				k.log.Warn("pod log directory", "pod", w.key, "err", err)
			}
		}
		id, err := k.runtime.RunPodSandbox(ctx, sbCfg, k.cfg.RuntimeHandler)
		if err == nil {
			var ss *runtimeapi.PodSandboxStatus
			if ss, err = k.runtime.PodSandboxStatus(ctx, id); err == nil {
				sb = &sandboxState{id: id, attempt: attempt, ready: true, ip: ss.GetNetwork().GetIp()}
			}
		}
		if err != nil {
			w.podError = "Failed to create pod sandbox: " + err.Error()
			k.event(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", w.podError)
			k.status.set(pod, k.podStatus(w, pod, rt))
			return k.failed(w, "creating sandbox", err), false
		}
		w.podError = ""
		changed = true
		if !w.stamped.sandbox {
			w.stamped.sandbox = true
			k.tracer.Emit(trace.PodSandboxReady, "Pod", pod.Namespace, pod.Name, pod.UID)
		}
	} else {
		sbCfg = k.sandboxConfig(pod, sb.attempt)
	}

	// The containers, in order.
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur := rt.latest(c.Name)
		inSandbox := cur != nil && cur.sandboxID == sb.id
		if inSandbox && cur.running() {
			kill, why := k.mustKill(pod, c, cur.id)
			if !kill {
				delete(w.waiting, c.Name)
				continue
			}
			k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Killing", why)
			if err := k.runtime.StopContainer(ctx, cur.id, probeGrace(pod, c)); err != nil {
				note(k.failed(w, "killing container", err))
				continue
			}
			changed = true
			st, err := k.runtime.ContainerStatus(ctx, cur.id)
			if err != nil {
				note(k.failed(w, "reading container", err))
				continue
			}
			cur = &containerState{id: cur.id, sandboxID: cur.sandboxID, name: cur.name, attempt: cur.attempt,
				state: st.State, startedAt: st.StartedAt, finishedAt: st.FinishedAt, exitCode: st.ExitCode, reason: st.Reason}
			if cur.exitCode == 0 {
				// A probe kill restarts under OnFailure whatever the
				// application's exit code, as upstream; the status still
				// reports the code the runtime saw.
				cur.exitCode = 137
			}
		}
		if inSandbox && cur.state == runtimeapi.ContainerState_CONTAINER_CREATED {
			// Created before a kubelet restart or a failed start: start it.
			if err := k.runtime.StartContainer(ctx, cur.id); err != nil {
				w.waiting[c.Name] = waitingState{reason: "RunContainerError", message: err.Error()}
				note(k.failed(w, "starting container", err))
				continue
			}
			changed = true
			delete(w.waiting, c.Name)
			k.markStarted(w, pod, c.Name)
			continue
		}
		if cur != nil && cur.exited() {
			if !shouldRestart(pod.Spec.RestartPolicy, cur.exitCode) {
				delete(w.waiting, c.Name)
				continue
			}
			key := string(pod.UID) + "/" + c.Name
			finishedAt := time.Unix(0, cur.finishedAt)
			if cur.finishedAt == 0 {
				finishedAt = k.clock.Now()
			}
			if in, left := k.crashLoop.InBackoffSince(key, finishedAt); in {
				msg := fmt.Sprintf("back-off %v restarting failed container=%s pod=%s_%s(%s)", k.crashLoop.Delay(key), c.Name, pod.Name, pod.Namespace, pod.UID)
				if w.waiting[c.Name].reason != "CrashLoopBackOff" {
					k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container "+c.Name)
				}
				w.waiting[c.Name] = waitingState{reason: "CrashLoopBackOff", message: msg}
				note(left)
				continue
			}
			k.crashLoop.Next(key, finishedAt)
		}
		if ws, d := k.images.ensure(ctx, pod, c, sbCfg); ws != nil {
			w.waiting[c.Name] = *ws
			note(d)
			continue
		}
		k.markPulled(w, pod, c.Name)
		var attempt uint32
		if cur != nil {
			attempt = cur.attempt + 1
		}
		cfg, err := k.containerConfig(ctx, pod, c, attempt, sb.ip)
		if err != nil {
			w.waiting[c.Name] = waitingState{reason: "CreateContainerConfigError", message: err.Error()}
			k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
			note(k.failed(w, "container config", err))
			continue
		}
		id, err := k.runtime.CreateContainer(ctx, sb.id, cfg, sbCfg)
		if err != nil {
			w.waiting[c.Name] = waitingState{reason: "CreateContainerError", message: err.Error()}
			k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
			note(k.failed(w, "creating container", err))
			continue
		}
		changed = true
		k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Created", "Created container "+c.Name)
		if err := k.runtime.StartContainer(ctx, id); err != nil {
			w.waiting[c.Name] = waitingState{reason: "RunContainerError", message: err.Error()}
			k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
			note(k.failed(w, "starting container", err))
			continue
		}
		k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Started", "Started container "+c.Name)
		startedNow[c.Name] = true
		delete(w.waiting, c.Name)
		if cur != nil {
			containerRestarts.Inc()
		}
		k.markStarted(w, pod, c.Name)
	}
	if retry == 0 {
		w.retries = 0
	}

	if changed {
		if rt, err = k.readPod(ctx, pod.UID, &w.cache); err != nil {
			return k.failed(w, "reading runtime", err), false
		}
		k.collectGarbage(ctx, w, rt)
	}
	// Probes first learn which containers run now, so the status below
	// reads their verdicts for these containers.
	podIP := pod.Status.PodIP
	if sb := rt.readySandbox(); sb != nil {
		podIP = sb.ip
	}
	for _, c := range pod.Spec.Containers {
		if cur := rt.latest(c.Name); cur != nil {
			pc := prober.Container{ID: cur.id, Running: cur.running(), StartedAt: time.Unix(0, cur.startedAt), PodIP: podIP}
			for _, was := range pod.Status.ContainerStatuses {
				if was.Name == c.Name && was.ContainerID == k.runtimeScheme()+"://"+cur.id {
					pc.WasReady, pc.WasStarted = was.Ready, was.Started != nil && *was.Started
				}
			}
			k.probes.UpdateContainer(pod.UID, c.Name, pc)
			if startedNow[c.Name] {
				k.probes.ProbeNow(pod.UID, c.Name)
			}
		}
	}
	st := k.podStatus(w, pod, rt)
	k.status.set(pod, st)
	if isReady(&st) && !w.stamped.ready && !isReady(&pod.Status) {
		w.stamped.ready = true
		k.tracer.Emit(trace.PodProbeReady, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
	return retry, false
}

// markPulled stamps pod.image.pulled once every container's image has been
// made present by this kubelet.
func (k *Kubelet) markPulled(w *podWorker, pod *corev1.Pod, name string) {
	if w.stamped.pulled {
		return
	}
	if w.pulled == nil {
		w.pulled = map[string]bool{}
	}
	w.pulled[name] = true
	if len(w.pulled) >= len(pod.Spec.Containers) {
		w.stamped.pulled, w.pulled = true, nil
		k.tracer.Emit(trace.PodImagePulled, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
}

// markStarted stamps pod.container.started once every container has been
// started by this kubelet.
func (k *Kubelet) markStarted(w *podWorker, pod *corev1.Pod, name string) {
	if w.stamped.started {
		return
	}
	if w.started == nil {
		w.started = map[string]bool{}
	}
	w.started[name] = true
	if len(w.started) >= len(pod.Spec.Containers) {
		w.stamped.started, w.started = true, nil
		k.tracer.Emit(trace.PodContainerStarted, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
}

// collectGarbage removes what a running pod no longer needs: exited
// containers older than the one before the newest (the newest exit stays
// for lastState), and sandboxes that are neither ready nor the newest dead
// one.
func (k *Kubelet) collectGarbage(ctx context.Context, w *podWorker, rt *podRuntime) {
	seen := map[string]int{}
	for _, c := range rt.containers {
		seen[c.name]++
		if seen[c.name] > 2 && c.exited() {
			if err := k.runtime.RemoveContainer(ctx, c.id); err != nil {
				k.log.Warn("removing old container", "pod", w.key, "err", err)
			}
		}
	}
	dead := 0
	for _, s := range rt.sandboxes {
		if s.ready {
			continue
		}
		dead++
		if dead > 1 && len(rt.runningIn(s.id)) == 0 {
			if err := k.runtime.RemovePodSandbox(ctx, s.id); err != nil {
				k.log.Warn("removing old sandbox", "pod", w.key, "err", err)
			}
		}
	}
}

// event writes a pod's Event (nothing without a recorder); the recorder
// names it <pod>.<hex UnixNano> and folds repeats into its count.
func (k *Kubelet) event(pod *corev1.Pod, typ, reason, msg string) {
	if k.recorder != nil {
		k.recorder.Event(pod, typ, reason, msg)
	}
}

// containerEvent writes an Event on one of the pod's containers, as
// upstream's kubelet does for Pulling, Created, Started, Killing, BackOff,
// Failed: involvedObject is the pod with fieldPath spec.containers{name}.
func (k *Kubelet) containerEvent(pod *corev1.Pod, container, typ, reason, msg string) {
	if k.recorder != nil {
		k.recorder.Event(prober.ContainerRef(pod, container), typ, reason, msg)
	}
}

// execProbe runs an exec probe through CRI ExecSync.
func (k *Kubelet) execProbe(ctx context.Context, id string, cmd []string, timeout time.Duration) (prober.Result, string) {
	r, err := k.runtime.ExecSync(ctx, id, cmd, timeout)
	if err != nil {
		if status.Code(errors.Unwrap(err)) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			return prober.Failure, fmt.Sprintf("command timed out after %v", timeout)
		}
		return prober.Unknown, err.Error()
	}
	if r.ExitCode != 0 {
		return prober.Failure, string(r.Stdout) + string(r.Stderr)
	}
	return prober.Success, ""
}

// mergeOwnConditions is cur with the kubelet's own condition types taken
// from mine.
func mergeOwnConditions(cur, mine []corev1.PodCondition) []corev1.PodCondition {
	own := map[corev1.PodConditionType]bool{corev1.PodReadyToStartContainers: true, corev1.PodInitialized: true, corev1.PodReady: true, corev1.ContainersReady: true}
	out := make([]corev1.PodCondition, 0, len(cur)+len(mine))
	for _, c := range cur {
		if !own[c.Type] {
			out = append(out, c)
		}
	}
	for _, c := range mine {
		if own[c.Type] {
			out = append(out, c)
		}
	}
	return out
}
