package validation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func jobTemplate(restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "w", Image: "registry.kstep.local/app:v1"}}}}
}

// TestWorkloads: each new kind's upstream rules on the fields users set.
func TestWorkloads(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}
	job := func(mut func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: meta("j"), Spec: batchv1.JobSpec{Selector: sel, Template: jobTemplate(corev1.RestartPolicyNever)}}
		mut(j)
		return defaulted(j)
	}
	cron := func(schedule string, tz *string) *batchv1.CronJob {
		return defaulted(&batchv1.CronJob{ObjectMeta: meta("c"), Spec: batchv1.CronJobSpec{Schedule: schedule, TimeZone: tz,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate(corev1.RestartPolicyOnFailure)}}}})
	}
	str := func(s string) *string { return &s }
	ds := defaulted(&appsv1.DaemonSet{ObjectMeta: meta("d"), Spec: appsv1.DaemonSetSpec{Selector: sel, Template: jobTemplate(corev1.RestartPolicyAlways)}})
	ss := defaulted(&appsv1.StatefulSet{ObjectMeta: meta("s"), Spec: appsv1.StatefulSetSpec{Selector: sel, Template: jobTemplate(corev1.RestartPolicyAlways)}})

	expectErrs(t, ValidateCreate(job(func(*batchv1.Job) {})))
	expectErrs(t, ValidateCreate(job(func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways })),
		"NotSupported spec.template.spec.restartPolicy: ")
	expectErrs(t, ValidateCreate(job(func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr(int32(-1)) })), "Invalid spec.backoffLimit: ")
	expectErrs(t, ValidateCreate(job(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
		j.Spec.Parallelism = ptr(int32(2)) // completions stays unset
	})), "Required spec.completions: ")
	expectErrs(t, ValidateCreate(job(func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{0, 3, 2}}}}}
		j.Spec.PodReplacementPolicy = nil
		defaulted(j)
	})), "Invalid spec.podFailurePolicy.rules[0].onExitCodes.values[0]: must not be 0", "Invalid spec.podFailurePolicy.rules[0].onExitCodes.values[2]: must be ordered")
	j := job(func(*batchv1.Job) {})
	j2 := j.DeepCopy()
	j2.ResourceVersion, j.ResourceVersion = "2", "1"
	j2.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w", "x": "y"}}
	j2.Spec.Template.Labels["x"] = "y"
	expectErrs(t, ValidateUpdate(j2, j), "Invalid spec.selector: field is immutable", "Invalid spec.template: field is immutable")

	expectErrs(t, ValidateCreate(cron("*/5 * * * *", str("Europe/Paris"))))
	expectErrs(t, ValidateCreate(cron("61 * * * *", nil)), "Invalid spec.schedule: ")
	expectErrs(t, ValidateCreate(cron("TZ=UTC 0 * * * *", nil)), "Invalid spec.schedule: cannot use TZ")
	expectErrs(t, ValidateCreate(cron("0 * * * *", str("Mars/Olympus"))), "Invalid spec.timeZone: ")

	expectErrs(t, ValidateCreate(ds))
	bad := ds.DeepCopy()
	bad.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr(intstr.FromInt32(0))
	expectErrs(t, ValidateCreate(bad), "Invalid spec.updateStrategy.rollingUpdate.maxUnavailable: may not be 0 when maxSurge is 0")

	expectErrs(t, ValidateCreate(ss))
	ss2 := ss.DeepCopy()
	ss2.ResourceVersion, ss.ResourceVersion = "2", "1"
	ss2.Spec.Replicas = ptr(int32(9))
	expectErrs(t, ValidateUpdate(ss2, ss))
	ss2.Spec.ServiceName = "other"
	expectErrs(t, ValidateUpdate(ss2, ss), "Forbidden spec: updates to statefulset spec for fields other than")
}
