package job

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Upstream's pod failure backoff: 10 s, doubling per failure, at most 6 min.
const (
	backoffBase = 10 * time.Second
	backoffMax  = 6 * time.Minute
)

// Condition reasons, as upstream's.
const (
	reasonBackoffLimit     = "BackoffLimitExceeded"
	reasonDeadline         = "DeadlineExceeded"
	reasonPodFailurePolicy = "PodFailurePolicy"
	reasonCompletionsReach = "CompletionsReached"
)

// counts are a Job's pods as this sync sees them.
type counts struct {
	active, ready, terminating []*corev1.Pod
	succeeded, failed          int32
	// succeededIndexes: an Indexed Job's completed indexes.
	succeededIndexes map[int]bool
	// lastFailure is when the newest counted failure happened.
	lastFailure time.Time
	// failJob is the message of a FailJob rule that matched, if one did.
	failJob string
}

func (j *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := j.jobs.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		j.exp.Forget(key)
		return nil
	}
	job := obj.(*batchv1.Job)
	if job.DeletionTimestamp != nil {
		return nil
	}
	now := j.now()
	if finished(job) {
		return j.expire(ctx, key, job, now)
	}
	satisfied := j.exp.Satisfied(key)
	pods, err := j.owned(job)
	if err != nil {
		return err
	}
	c := classify(job, pods)

	st := *job.Status.DeepCopy()
	if st.StartTime == nil && !ptr.Deref(job.Spec.Suspend, false) {
		st.StartTime = &metav1.Time{Time: now}
	}
	var manageErr error
	var failReason, failMessage string
	switch {
	case c.failJob != "":
		failReason, failMessage = reasonPodFailurePolicy, c.failJob
	case c.failed > ptr.Deref(job.Spec.BackoffLimit, 6):
		failReason, failMessage = reasonBackoffLimit, "Job has reached the specified backoff limit"
	case job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil &&
		!now.Before(st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second)):
		failReason, failMessage = reasonDeadline, "Job was active longer than specified deadline"
	}
	complete := failReason == "" && completed(job, c)
	switch {
	case failReason != "" || complete:
		// A finished Job keeps no pods running.
		manageErr = j.deletePods(ctx, c.active)
		c.terminating = append(c.terminating, c.active...)
		c.active, c.ready = nil, nil
	case ptr.Deref(job.Spec.Suspend, false):
		manageErr = j.deletePods(ctx, c.active)
		c.active, c.ready = nil, nil
	case satisfied:
		var retryIn time.Duration
		retryIn, manageErr = j.manage(ctx, key, job, c, now)
		if retryIn > 0 {
			j.queue.AddAfter(key, retryIn)
		}
	}

	st.Active = int32(len(c.active))
	st.Ready = ptr.To(int32(len(c.ready)))
	st.Terminating = ptr.To(int32(len(c.terminating)))
	st.Succeeded, st.Failed = c.succeeded, c.failed
	if isIndexed(job) {
		st.CompletedIndexes = formatIndexes(c.succeededIndexes)
	}
	st.Conditions = setSuspended(st.Conditions, ptr.Deref(job.Spec.Suspend, false), now)
	switch {
	case failReason != "":
		st.Conditions = setCondition(st.Conditions, batchv1.JobFailureTarget, failReason, failMessage, now)
		st.Conditions = setCondition(st.Conditions, batchv1.JobFailed, failReason, failMessage, now)
		j.recorder.Event(job, corev1.EventTypeWarning, failReason, failMessage)
	case complete:
		st.Conditions = setCondition(st.Conditions, batchv1.JobSuccessCriteriaMet, reasonCompletionsReach, "Reached expected number of succeeded pods", now)
		st.Conditions = setCondition(st.Conditions, batchv1.JobComplete, reasonCompletionsReach, "Reached expected number of succeeded pods", now)
		st.CompletionTime = &metav1.Time{Time: now}
		j.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
	}
	if job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && failReason == "" && !complete {
		j.queue.AddAfter(key, time.Until(st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second)))
	}
	if err := j.updateStatus(ctx, job, st); err != nil {
		return err
	}
	return manageErr
}

// finished reports whether the Job has its Complete or Failed condition.
func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishTime is when the Job finished: its completion time, else its
// terminal condition's transition.
func finishTime(job *batchv1.Job) time.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time
	}
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// expire deletes a finished Job whose ttlSecondsAfterFinished has passed,
// or looks again when it will have.
func (j *Controller) expire(ctx context.Context, key string, job *batchv1.Job, now time.Time) error {
	if job.Spec.TTLSecondsAfterFinished == nil {
		return nil
	}
	at := finishTime(job).Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second)
	if now.Before(at) {
		j.queue.AddAfter(key, at.Sub(now))
		return nil
	}
	err := j.client.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
		Preconditions:     &metav1.Preconditions{UID: &job.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// owned returns the pods the Job controls.
func (j *Controller) owned(job *batchv1.Job) ([]*corev1.Pod, error) {
	objs, err := j.podIndex.ByIndex(controller.PodsByController, string(job.UID))
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Namespace == job.Namespace {
			out = append(out, p)
		}
	}
	return out, nil
}

func isIndexed(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}

// classify sorts the pods into active, succeeded and failed, applying the
// pod failure policy to the failed ones.
func classify(job *batchv1.Job, pods []*corev1.Pod) counts {
	c := counts{succeededIndexes: map[int]bool{}}
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			c.succeeded++
			if idx, ok := podIndex(p); ok {
				c.succeededIndexes[idx] = true
			}
		case p.Status.Phase == corev1.PodFailed:
			action, msg := matchPolicy(job.Spec.PodFailurePolicy, p)
			switch action {
			case batchv1.PodFailurePolicyActionIgnore:
				continue
			case batchv1.PodFailurePolicyActionFailJob:
				if c.failJob == "" {
					c.failJob = msg
				}
			}
			c.failed++
			if t := failedAt(p); t.After(c.lastFailure) {
				c.lastFailure = t
			}
		case p.DeletionTimestamp != nil:
			c.terminating = append(c.terminating, p)
		default:
			c.active = append(c.active, p)
			if controller.PodReady(p) {
				c.ready = append(c.ready, p)
			}
		}
	}
	return c
}

// failedAt is when a failed pod's last container finished (its creation
// when none reports it).
func failedAt(p *corev1.Pod) time.Time {
	t := p.CreationTimestamp.Time
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated != nil && s.State.Terminated.FinishedAt.After(t) {
			t = s.State.Terminated.FinishedAt.Time
		}
	}
	return t
}

// matchPolicy returns the action of the first rule of policy that matches
// the failed pod ("" when none does: the failure counts), with the
// message a FailJob action fails the Job with.
func matchPolicy(policy *batchv1.PodFailurePolicy, p *corev1.Pod) (batchv1.PodFailurePolicyAction, string) {
	if policy == nil {
		return "", ""
	}
	for i, r := range policy.Rules {
		if e := r.OnExitCodes; e != nil {
			for _, s := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
				t := s.State.Terminated
				if t == nil || t.ExitCode == 0 || (e.ContainerName != nil && *e.ContainerName != s.Name) {
					continue
				}
				in := slices.Contains(e.Values, t.ExitCode)
				if (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
					return r.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
						s.Name, p.Namespace, p.Name, t.ExitCode, r.Action, i)
				}
			}
		}
		for _, pc := range r.OnPodConditions {
			for _, cond := range p.Status.Conditions {
				if cond.Type == pc.Type && cond.Status == pc.Status {
					return r.Action, fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d", p.Namespace, p.Name, pc.Type, r.Action, i)
				}
			}
		}
	}
	return "", ""
}

// completed reports whether the Job's success criteria are met.
func completed(job *batchv1.Job, c counts) bool {
	if isIndexed(job) {
		n := int(ptr.Deref(job.Spec.Completions, 0))
		for i := range n {
			if !c.succeededIndexes[i] {
				return false
			}
		}
		return true
	}
	if job.Spec.Completions == nil {
		return c.succeeded > 0 && len(c.active) == 0
	}
	return c.succeeded >= *job.Spec.Completions
}

// manage creates the missing pods and deletes the excess. It returns when
// to look again if failed pods' backoff holds creates back.
func (j *Controller) manage(ctx context.Context, key string, job *batchv1.Job, c counts, now time.Time) (time.Duration, error) {
	parallelism := int(ptr.Deref(job.Spec.Parallelism, 1))
	want := parallelism
	var indexes []int // an Indexed Job's indexes without a pod
	switch {
	case isIndexed(job):
		taken := map[int]bool{}
		for i := range c.succeededIndexes {
			taken[i] = true
		}
		for _, p := range c.active {
			if i, ok := podIndex(p); ok {
				taken[i] = true
			}
		}
		for i := range int(ptr.Deref(job.Spec.Completions, 0)) {
			if !taken[i] {
				indexes = append(indexes, i)
			}
		}
		want = min(parallelism, len(c.active)+len(indexes))
	case job.Spec.Completions != nil:
		want = min(parallelism, int(*job.Spec.Completions-c.succeeded))
	case c.succeeded > 0:
		want = 0 // the work is done; the active pods finish
	}
	diff := want - len(c.active)
	switch {
	case diff > 0:
		if c.failed > 0 {
			if wait := backoff(c.failed) - now.Sub(c.lastFailure); wait > 0 {
				return wait, nil
			}
		}
		n := min(diff, burst)
		j.exp.Expect(key, n, 0)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			idx := -1
			if isIndexed(job) {
				idx = indexes[i]
			}
			wg.Go(func() { errs[i] = j.createPod(ctx, job, idx) })
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				j.exp.Observed(key, 1, 0) // will never show
			}
		}
		return 0, errors.Join(errs...)
	case diff < 0:
		// Newest first, as upstream.
		victims := slices.Clone(c.active)
		sort.SliceStable(victims, func(a, b int) bool {
			return victims[b].CreationTimestamp.Before(&victims[a].CreationTimestamp)
		})
		return 0, j.deletePods(ctx, victims[:min(-diff, burst)])
	}
	return 0, nil
}

// backoff is how long after the newest of failed failures a replacement
// may start.
func backoff(failed int32) time.Duration {
	d := backoffBase
	for i := int32(1); i < failed && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

func (j *Controller) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() {
			err := j.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createPod creates one pod of the Job's template; idx >= 0 is an Indexed
// Job's completion index.
func (j *Controller) createPod(ctx context.Context, job *batchv1.Job, idx int) error {
	t := job.Spec.Template
	prefix := job.Name + "-"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   job.Namespace,
			Labels:      cloneMap(t.Labels),
			Annotations: cloneMap(t.Annotations),
			Finalizers:  t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: jobKind.GroupVersion().String(), Kind: jobKind.Kind,
				Name: job.Name, UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	if idx >= 0 {
		s := strconv.Itoa(idx)
		prefix += s + "-"
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = s
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = s
		if pod.Spec.Hostname == "" {
			pod.Spec.Hostname = truncate(job.Name+"-"+s, validation.DNS1123LabelMaxLength)
		}
		env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)}}}
		for i := range pod.Spec.InitContainers {
			pod.Spec.InitContainers[i].Env = append(pod.Spec.InitContainers[i].Env, env)
		}
		for i := range pod.Spec.Containers {
			pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env)
		}
	}
	pod.Name = truncate(prefix, validation.DNS1123LabelMaxLength-5) + utilrand.String(5)
	created, err := j.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		j.recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	j.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Name)
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// podIndex is an Indexed Job's pod's completion index.
func podIndex(p *corev1.Pod) (int, bool) {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(v)
	return i, err == nil && i >= 0 && i < math.MaxInt32
}

// formatIndexes is status.completedIndexes: ranges, "1,3-5,7".
func formatIndexes(set map[int]bool) string {
	idx := make([]int, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := ""
	for k := 0; k < len(idx); {
		e := k
		for e+1 < len(idx) && idx[e+1] == idx[e]+1 {
			e++
		}
		if out != "" {
			out += ","
		}
		out += strconv.Itoa(idx[k])
		if e > k {
			out += "-" + strconv.Itoa(idx[e])
		}
		k = e + 1
	}
	return out
}

// setCondition sets a True condition of type t, keeping its transition
// time when it already was True.
func setCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType, reason, msg string, now time.Time) []batchv1.JobCondition {
	for i := range conds {
		if conds[i].Type == t {
			if conds[i].Status != corev1.ConditionTrue {
				conds[i].Status, conds[i].LastTransitionTime = corev1.ConditionTrue, metav1.NewTime(now)
			}
			conds[i].Reason, conds[i].Message, conds[i].LastProbeTime = reason, msg, metav1.NewTime(now)
			return conds
		}
	}
	return append(conds, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)})
}

// setSuspended keeps the Suspended condition in step with spec.suspend.
func setSuspended(conds []batchv1.JobCondition, suspended bool, now time.Time) []batchv1.JobCondition {
	for i := range conds {
		if conds[i].Type != batchv1.JobSuspended {
			continue
		}
		want := corev1.ConditionFalse
		reason, msg := "JobResumed", "Job resumed"
		if suspended {
			want, reason, msg = corev1.ConditionTrue, "JobSuspended", "Job suspended"
		}
		if conds[i].Status != want {
			conds[i] = batchv1.JobCondition{Type: batchv1.JobSuspended, Status: want, Reason: reason, Message: msg,
				LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
		}
		return conds
	}
	if !suspended {
		return conds
	}
	return append(conds, batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended",
		Message: "Job suspended", LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)})
}

func (j *Controller) updateStatus(ctx context.Context, job *batchv1.Job, st batchv1.JobStatus) error {
	if apiequality.Semantic.DeepEqual(job.Status, st) {
		return nil
	}
	cp := job.DeepCopy()
	cp.Status = st
	got, err := j.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	switch {
	case err == nil:
		j.jobs.Wrote(got)
	case apierrors.IsNotFound(err):
		return nil
	}
	return err
}
