package job_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/job"
	"github.com/kstep-dev/kstep/internal/testenv"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// start runs the Job controller in-process against a real apiserver; the
// test plays the kubelet, ending pods through their status.
func start(t *testing.T) kubernetes.Interface {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cc := testenv.ControllerContext(t, api.Config)
	testenv.RunController(t, job.New(cc), cc)
	return cc.Client
}

func newJob(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "work", Image: "registry.kstep.local/app:v1"}}}}},
	}
}

// pods lists the Job's pods by its generated selector's label.
func pods(t *testing.T, cs kubernetes.Interface, j *batchv1.Job) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(j.UID)})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(a, b int) bool { return l.Items[a].Name < l.Items[b].Name })
	return l.Items
}

func running(ps []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range ps {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// finish ends a pod as a kubelet would: phase and its container's exit code.
func finish(t *testing.T, cs kubernetes.Interface, p corev1.Pod, code int32) {
	t.Helper()
	p.Status.Phase = corev1.PodSucceeded
	reason := "Completed"
	if code != 0 {
		p.Status.Phase, reason = corev1.PodFailed, "Error"
	}
	now := metav1.Now()
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "work", Image: "registry.kstep.local/app:v1",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: now, FinishedAt: now}}}}
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func condition(j *batchv1.Job, ct batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == ct && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func get(t *testing.T, cs kubernetes.Interface, name string) *batchv1.Job {
	t.Helper()
	j, err := cs.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJobRunsToCompletion: 5 completions, 2 at a time; never more than 2
// active, never more pods than completions, then Complete and its counts.
func TestJobRunsToCompletion(t *testing.T) {
	cs := start(t)
	j, err := cs.BatchV1().Jobs("default").Create(context.Background(), newJob("batch", 5, 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Selector == nil || j.Spec.Template.Labels[batchv1.JobNameLabel] != "batch" {
		t.Fatalf("generated selector and labels: %v %v", j.Spec.Selector, j.Spec.Template.Labels)
	}
	done := 0
	for done < 5 {
		var act []corev1.Pod
		testenv.Eventually(t, 30*time.Second, "active pods", func() bool { act = running(pods(t, cs, j)); return len(act) == min(2, 5-done) })
		if n := len(pods(t, cs, j)); n > 5 {
			t.Fatalf("%d pods for 5 completions", n)
		}
		finish(t, cs, act[0], 0)
		done++
	}
	testenv.Eventually(t, 30*time.Second, "Complete", func() bool { return condition(get(t, cs, "batch"), batchv1.JobComplete) != nil })
	j = get(t, cs, "batch")
	if j.Status.Succeeded != 5 || j.Status.Failed != 0 || j.Status.Active != 0 || j.Status.CompletionTime == nil || j.Status.StartTime == nil {
		t.Fatalf("status: %+v", j.Status)
	}
	if n := len(pods(t, cs, j)); n != 5 {
		t.Fatalf("%d pods, want 5", n)
	}
}

// TestJobBackoffLimit: with backoffLimit 0 the first failure fails the Job.
func TestJobBackoffLimit(t *testing.T) {
	cs := start(t)
	in := newJob("fails", 1, 1)
	in.Spec.BackoffLimit = ptr.To(int32(0))
	j, err := cs.BatchV1().Jobs("default").Create(context.Background(), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var act []corev1.Pod
	testenv.Eventually(t, 30*time.Second, "a pod", func() bool { act = running(pods(t, cs, j)); return len(act) == 1 })
	finish(t, cs, act[0], 1)
	testenv.Eventually(t, 30*time.Second, "Failed", func() bool {
		c := condition(get(t, cs, "fails"), batchv1.JobFailed)
		return c != nil && c.Reason == "BackoffLimitExceeded"
	})
	if j = get(t, cs, "fails"); j.Status.Failed != 1 || j.Status.Succeeded != 0 {
		t.Fatalf("status: %+v", j.Status)
	}
}

// TestJobPodFailurePolicy: a failure the policy ignores is replaced at
// once and not counted; one it names FailJob fails the Job whatever the
// backoff limit.
func TestJobPodFailurePolicy(t *testing.T) {
	cs := start(t)
	in := newJob("policy", 1, 1)
	in.Spec.BackoffLimit = ptr.To(int32(0))
	in.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{5}}},
	}}
	j, err := cs.BatchV1().Jobs("default").Create(context.Background(), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var act []corev1.Pod
	testenv.Eventually(t, 30*time.Second, "a pod", func() bool { act = running(pods(t, cs, j)); return len(act) == 1 })
	first := act[0].Name
	finish(t, cs, act[0], 42)
	testenv.Eventually(t, 30*time.Second, "a replacement", func() bool { act = running(pods(t, cs, j)); return len(act) == 1 && act[0].Name != first })
	if c := condition(get(t, cs, "policy"), batchv1.JobFailed); c != nil {
		t.Fatalf("an ignored failure failed the Job: %+v", c)
	}
	finish(t, cs, act[0], 5)
	testenv.Eventually(t, 30*time.Second, "Failed", func() bool {
		c := condition(get(t, cs, "policy"), batchv1.JobFailed)
		return c != nil && c.Reason == "PodFailurePolicy"
	})
	if j = get(t, cs, "policy"); j.Status.Failed != 1 {
		t.Fatalf("failed = %d, want 1 (the ignored failure uncounted)", j.Status.Failed)
	}
}

// TestJobIndexedAndTTL: an Indexed Job's pods carry indexes 0..n-1, it
// completes with every index, and ttlSecondsAfterFinished 0 deletes it.
func TestJobIndexedAndTTL(t *testing.T) {
	cs := start(t)
	in := newJob("indexed", 3, 3)
	in.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	in.Spec.TTLSecondsAfterFinished = ptr.To(int32(0))
	j, err := cs.BatchV1().Jobs("default").Create(context.Background(), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var act []corev1.Pod
	testenv.Eventually(t, 30*time.Second, "3 pods", func() bool { act = running(pods(t, cs, j)); return len(act) == 3 })
	seen := map[string]bool{}
	for _, p := range act {
		seen[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = true
		if len(p.Spec.Containers[0].Env) == 0 || p.Spec.Containers[0].Env[len(p.Spec.Containers[0].Env)-1].Name != "JOB_COMPLETION_INDEX" {
			t.Fatalf("pod %s has no JOB_COMPLETION_INDEX", p.Name)
		}
	}
	if !seen["0"] || !seen["1"] || !seen["2"] {
		t.Fatalf("indexes %v", seen)
	}
	for _, p := range act {
		finish(t, cs, p, 0)
	}
	testenv.Eventually(t, 30*time.Second, "the Job deleted after its TTL", func() bool {
		_, err := cs.BatchV1().Jobs("default").Get(context.Background(), "indexed", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
