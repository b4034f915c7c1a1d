package validation

import (
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // spec.timeZone resolves without the host's zoneinfo (containers lack it)

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The workload APIs beyond ReplicaSet and Deployment (#52): DaemonSet,
// StatefulSet and ControllerRevision (upstream's pkg/apis/apps/validation),
// Job and CronJob (pkg/apis/batch/validation) and PodTemplate
// (pkg/apis/core/validation), for the fields users set.

// ---------------------------------------------------------------------------
// DaemonSet

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	allErrs := validateObjectMeta(&ds.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	p := field.NewPath("spec")
	spec := &ds.Spec
	allErrs = append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, "DaemonSet", p)...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	sp := p.Child("updateStrategy")
	switch spec.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := spec.UpdateStrategy.RollingUpdate
		if ru == nil {
			allErrs = append(allErrs, field.Required(sp.Child("rollingUpdate"), ""))
			break
		}
		var maxUnavailable, maxSurge intstr.IntOrString
		if ru.MaxUnavailable != nil {
			maxUnavailable = *ru.MaxUnavailable
		}
		if ru.MaxSurge != nil {
			maxSurge = *ru.MaxSurge
		}
		rp := sp.Child("rollingUpdate")
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxUnavailable, rp.Child("maxUnavailable"))...)
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, rp.Child("maxSurge"))...)
		u, s := intOrPercentValue(maxUnavailable), intOrPercentValue(maxSurge)
		switch {
		case u == 0 && s == 0:
			allErrs = append(allErrs, field.Invalid(rp.Child("maxUnavailable"), maxUnavailable, "may not be 0 when maxSurge is 0"))
		case u != 0 && s != 0:
			allErrs = append(allErrs, field.Invalid(rp.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
		}
		if v, isPercent := percentValue(maxUnavailable); isPercent && v > 100 {
			allErrs = append(allErrs, field.Invalid(rp.Child("maxUnavailable"), maxUnavailable, "must not be greater than 100%"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(sp.Child("type"), spec.UpdateStrategy.Type,
			[]appsv1.DaemonSetUpdateStrategyType{appsv1.OnDeleteDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType}))
	}
	return allErrs
}

func validateDaemonSetUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateDaemonSet(ds)...)
	return append(allErrs, validateImmutableField(ds.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func validateDaemonSetStatusUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta)
	s, p := ds.Status, field.NewPath("status")
	for name, v := range map[string]int64{
		"currentNumberScheduled": int64(s.CurrentNumberScheduled), "numberMisscheduled": int64(s.NumberMisscheduled),
		"desiredNumberScheduled": int64(s.DesiredNumberScheduled), "numberReady": int64(s.NumberReady),
		"observedGeneration": s.ObservedGeneration, "updatedNumberScheduled": int64(s.UpdatedNumberScheduled),
		"numberAvailable": int64(s.NumberAvailable), "numberUnavailable": int64(s.NumberUnavailable),
	} {
		allErrs = append(allErrs, validateNonnegativeField(v, p.Child(name))...)
	}
	if s.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// StatefulSet

func validateStatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	allErrs := validateObjectMeta(&ss.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validateStatefulSetSpec(&ss.Spec, field.NewPath("spec"))...)
}

func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("podManagementPolicy"), ""))
	default:
		allErrs = append(allErrs, field.Invalid(p.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	sp := p.Child("updateStrategy")
	switch spec.UpdateStrategy.Type {
	case "":
		allErrs = append(allErrs, field.Required(sp, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if spec.UpdateStrategy.RollingUpdate != nil {
			allErrs = append(allErrs, field.Invalid(sp.Child("rollingUpdate"), spec.UpdateStrategy.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := spec.UpdateStrategy.RollingUpdate; ru != nil {
			if ru.Partition != nil {
				allErrs = append(allErrs, validateNonnegativeField(int64(*ru.Partition), sp.Child("rollingUpdate", "partition"))...)
			}
			if ru.MaxUnavailable != nil {
				mp := sp.Child("rollingUpdate", "maxUnavailable")
				allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxUnavailable, mp)...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					allErrs = append(allErrs, field.Invalid(mp, *ru.MaxUnavailable, isNotPositiveErrorMsg))
				}
				if v, isPercent := percentValue(*ru.MaxUnavailable); isPercent && v > 100 {
					allErrs = append(allErrs, field.Invalid(mp, *ru.MaxUnavailable, "must not be greater than 100%"))
				}
			}
		}
	default:
		allErrs = append(allErrs, field.Invalid(sp, spec.UpdateStrategy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if pol := spec.PersistentVolumeClaimRetentionPolicy; pol != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		types := []appsv1.PersistentVolumeClaimRetentionPolicyType{appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
		if !slices.Contains(types, pol.WhenDeleted) {
			allErrs = append(allErrs, field.NotSupported(pp.Child("whenDeleted"), pol.WhenDeleted, types))
		}
		if !slices.Contains(types, pol.WhenScaled) {
			allErrs = append(allErrs, field.NotSupported(pp.Child("whenScaled"), pol.WhenScaled, types))
		}
	}
	if spec.Ordinals != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(spec.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	allErrs = append(allErrs, validateNonnegativeField(int64(replicasOf(spec.Replicas)), p.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if spec.ServiceName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(spec.ServiceName, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	for i := range spec.VolumeClaimTemplates {
		t := &spec.VolumeClaimTemplates[i]
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(t.Name, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("volumeClaimTemplates").Index(i).Child("metadata", "name"), t.Name, msg))
		}
	}
	return append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, "StatefulSet", p)...)
}

// validateStatefulSetUpdate: upstream allows changing only replicas,
// ordinals, template, updateStrategy, the PVC retention policy and
// minReadySeconds.
func validateStatefulSetUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateStatefulSet(ss)...)
	a, b := ss.Spec.DeepCopy(), old.Spec.DeepCopy()
	for _, s := range []*appsv1.StatefulSetSpec{a, b} {
		s.Replicas, s.Ordinals, s.Template, s.UpdateStrategy = nil, nil, corev1.PodTemplateSpec{}, appsv1.StatefulSetUpdateStrategy{}
		s.PersistentVolumeClaimRetentionPolicy, s.MinReadySeconds = nil, 0
	}
	if !apiequality.Semantic.DeepEqual(a, b) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"),
			"updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return allErrs
}

func validateStatefulSetStatusUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta)
	s, p := ss.Status, field.NewPath("status")
	allErrs = append(allErrs, validateReplicaCounts(s.Replicas, s.Replicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration, p)...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.CurrentReplicas), p.Child("currentReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.UpdatedReplicas), p.Child("updatedReplicas"))...)
	if s.CurrentReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("currentReplicas"), s.CurrentReplicas, "cannot be greater than status.replicas"))
	}
	if s.UpdatedReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("updatedReplicas"), s.UpdatedReplicas, "cannot be greater than status.replicas"))
	}
	if s.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// ControllerRevision

func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	allErrs := validateObjectMeta(&cr.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	if cr.Data.Raw == nil && cr.Data.Object == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(allErrs, validateNonnegativeField(cr.Revision, field.NewPath("revision"))...)
}

func validateControllerRevisionUpdate(cr, old *appsv1.ControllerRevision) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&cr.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateControllerRevision(cr)...)
	return append(allErrs, validateImmutableField(cr.Data, old.Data, field.NewPath("data"))...)
}

// ---------------------------------------------------------------------------
// PodTemplate

func validatePodTemplate(pt *corev1.PodTemplate) field.ErrorList {
	allErrs := validateObjectMeta(&pt.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
}

func validatePodTemplateUpdate(pt, old *corev1.PodTemplate) field.ErrorList {
	return append(validateObjectMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta), validatePodTemplate(pt)...)
}

// ---------------------------------------------------------------------------
// Job

// maxPodFailurePolicyRules and maxOnExitCodesValues are upstream's bounds.
const (
	maxPodFailurePolicyRules = 20
	maxOnExitCodesValues     = 255
)

func validateJob(j *batchv1.Job) field.ErrorList {
	allErrs := validateObjectMeta(&j.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	p := field.NewPath("spec")
	allErrs = append(allErrs, validateJobSpec(&j.Spec, p)...)
	// The selector is generated on create unless manualSelector is set:
	// a stored Job always has one.
	if j.Spec.Selector == nil {
		allErrs = append(allErrs, field.Required(p.Child("selector"), ""))
	} else {
		sp := p.Child("selector")
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(j.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, sp)...)
		if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(labels.Set(j.Spec.Template.Labels)) {
			allErrs = append(allErrs, field.Invalid(p.Child("template", "metadata", "labels"), j.Spec.Template.Labels, "`selector` does not match template `labels`"))
		}
	}
	return allErrs
}

// validateJobSpec is the part of a Job's spec a CronJob's template has too.
func validateJobSpec(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Parallelism != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.Parallelism), p.Child("parallelism"))...)
	}
	if spec.Completions != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.Completions), p.Child("completions"))...)
	}
	if spec.ActiveDeadlineSeconds != nil && *spec.ActiveDeadlineSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("activeDeadlineSeconds"), *spec.ActiveDeadlineSeconds, isNotPositiveErrorMsg))
	}
	if spec.BackoffLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.BackoffLimit), p.Child("backoffLimit"))...)
	}
	if spec.TTLSecondsAfterFinished != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.TTLSecondsAfterFinished), p.Child("ttlSecondsAfterFinished"))...)
	}
	if spec.CompletionMode != nil {
		switch *spec.CompletionMode {
		case batchv1.NonIndexedCompletion:
		case batchv1.IndexedCompletion:
			if spec.Completions == nil {
				allErrs = append(allErrs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("completionMode"), *spec.CompletionMode,
				[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
	}
	if spec.PodReplacementPolicy != nil {
		switch *spec.PodReplacementPolicy {
		case batchv1.TerminatingOrFailed:
			if spec.PodFailurePolicy != nil {
				allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *spec.PodReplacementPolicy, []batchv1.PodReplacementPolicy{batchv1.Failed}))
			}
		case batchv1.Failed:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *spec.PodReplacementPolicy,
				[]batchv1.PodReplacementPolicy{batchv1.TerminatingOrFailed, batchv1.Failed}))
		}
	}
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, p.Child("podFailurePolicy"))...)
	}
	tp := p.Child("template")
	allErrs = append(allErrs, validatePodTemplateSpec(&spec.Template, tp)...)
	switch spec.Template.Spec.RestartPolicy {
	case corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "":
		allErrs = append(allErrs, field.Required(tp.Child("spec", "restartPolicy"), fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	default:
		allErrs = append(allErrs, field.NotSupported(tp.Child("spec", "restartPolicy"), spec.Template.Spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	return allErrs
}

// validatePodFailurePolicy: at most 20 rules, each with exactly one of
// onExitCodes and onPodConditions, a known action, and pods that are never
// restarted in place (restartPolicy Never).
func validatePodFailurePolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rules := spec.PodFailurePolicy.Rules
	rp := p.Child("rules")
	if len(rules) > maxPodFailurePolicyRules {
		return append(allErrs, field.TooMany(rp, len(rules), maxPodFailurePolicyRules))
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		allErrs = append(allErrs, field.Invalid(p.Root().Child("spec", "template", "spec", "restartPolicy"), spec.Template.Spec.RestartPolicy,
			fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	containers := map[string]bool{}
	for _, c := range append(slices.Clone(spec.Template.Spec.InitContainers), spec.Template.Spec.Containers...) {
		containers[c.Name] = true
	}
	actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount}
	for i, r := range rules {
		ip := rp.Index(i)
		if !slices.Contains(actions, r.Action) {
			allErrs = append(allErrs, field.NotSupported(ip.Child("action"), r.Action, actions))
		}
		if r.Action == batchv1.PodFailurePolicyActionFailIndex && spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Invalid(ip.Child("action"), r.Action, "requires the backoffLimitPerIndex to be set"))
		}
		switch {
		case r.OnExitCodes != nil && len(r.OnPodConditions) > 0:
			allErrs = append(allErrs, field.Invalid(ip, r, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case r.OnExitCodes == nil && len(r.OnPodConditions) == 0:
			allErrs = append(allErrs, field.Invalid(ip, r, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
		if e := r.OnExitCodes; e != nil {
			ep := ip.Child("onExitCodes")
			if e.ContainerName != nil && !containers[*e.ContainerName] {
				allErrs = append(allErrs, field.Invalid(ep.Child("containerName"), *e.ContainerName, "must be one of the container or initContainer names in the pod template"))
			}
			ops := []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
			if !slices.Contains(ops, e.Operator) {
				allErrs = append(allErrs, field.NotSupported(ep.Child("operator"), e.Operator, ops))
			}
			vp := ep.Child("values")
			switch {
			case len(e.Values) == 0:
				allErrs = append(allErrs, field.Invalid(vp, e.Values, "at least one value is required"))
			case len(e.Values) > maxOnExitCodesValues:
				allErrs = append(allErrs, field.TooMany(vp, len(e.Values), maxOnExitCodesValues))
			default:
				for k, v := range e.Values {
					if e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
						allErrs = append(allErrs, field.Invalid(vp.Index(k), v, "must not be 0 for the In operator"))
					}
					if k > 0 && e.Values[k-1] == v {
						allErrs = append(allErrs, field.Duplicate(vp.Index(k), v))
					} else if k > 0 && e.Values[k-1] > v {
						allErrs = append(allErrs, field.Invalid(vp.Index(k), v, "must be ordered"))
					}
				}
			}
		}
		for k, c := range r.OnPodConditions {
			cp := ip.Child("onPodConditions").Index(k)
			if c.Status != corev1.ConditionTrue && c.Status != corev1.ConditionFalse && c.Status != corev1.ConditionUnknown {
				allErrs = append(allErrs, field.NotSupported(cp.Child("status"), c.Status,
					[]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}))
			}
			allErrs = append(allErrs, metav1validation.ValidateLabelName(string(c.Type), cp.Child("type"))...)
		}
	}
	return allErrs
}

// validateJobUpdate: the selector, completion mode and (unless the Job is
// suspended and has not started) the pod template are immutable;
// completions change only with parallelism in an Indexed Job, as
// upstream's elastic Indexed Jobs.
func validateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateJob(j)...)
	p := field.NewPath("spec")
	allErrs = append(allErrs, validateImmutableField(j.Spec.Selector, old.Spec.Selector, p.Child("selector"))...)
	allErrs = append(allErrs, validateImmutableField(j.Spec.CompletionMode, old.Spec.CompletionMode, p.Child("completionMode"))...)
	allErrs = append(allErrs, validateImmutableField(j.Spec.PodFailurePolicy, old.Spec.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	allErrs = append(allErrs, validateImmutableField(j.Spec.BackoffLimitPerIndex, old.Spec.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	if !indexed || !equalInt32(j.Spec.Completions, j.Spec.Parallelism) {
		allErrs = append(allErrs, validateImmutableField(j.Spec.Completions, old.Spec.Completions, p.Child("completions"))...)
	}
	suspendedUnstarted := old.Spec.Suspend != nil && *old.Spec.Suspend && old.Status.StartTime == nil
	if !suspendedUnstarted {
		allErrs = append(allErrs, validateImmutableField(j.Spec.Template, old.Spec.Template, p.Child("template"))...)
	}
	return allErrs
}

func equalInt32(a, b *int32) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func validateJobStatusUpdate(j, old *batchv1.Job) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta)
	s, p := j.Status, field.NewPath("status")
	allErrs = append(allErrs, validateNonnegativeField(int64(s.Active), p.Child("active"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.Succeeded), p.Child("succeeded"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.Failed), p.Child("failed"))...)
	if s.Ready != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.Ready), p.Child("ready"))...)
	}
	if s.Terminating != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.Terminating), p.Child("terminating"))...)
	}
	if s.CompletionTime != nil && s.StartTime != nil && s.CompletionTime.Before(s.StartTime) {
		allErrs = append(allErrs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "completionTime cannot be set before startTime"))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// CronJob

// maxCronJobNameLength leaves room for the 11-character suffix of the
// Jobs a CronJob creates (upstream's).
const maxCronJobNameLength = 52

func validateCronJob(cj *batchv1.CronJob) field.ErrorList {
	allErrs := validateObjectMeta(&cj.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	if len(cj.Name) > maxCronJobNameLength {
		allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), cj.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	p := field.NewPath("spec")
	spec := &cj.Spec
	allErrs = append(allErrs, validateSchedule(spec.Schedule, spec.TimeZone, p)...)
	if spec.StartingDeadlineSeconds != nil {
		allErrs = append(allErrs, validateNonnegativeField(*spec.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	policies := []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}
	switch {
	case spec.ConcurrencyPolicy == "":
		allErrs = append(allErrs, field.Required(p.Child("concurrencyPolicy"), ""))
	case !slices.Contains(policies, spec.ConcurrencyPolicy):
		allErrs = append(allErrs, field.NotSupported(p.Child("concurrencyPolicy"), spec.ConcurrencyPolicy, policies))
	}
	if spec.SuccessfulJobsHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.SuccessfulJobsHistoryLimit), p.Child("successfulJobsHistoryLimit"))...)
	}
	if spec.FailedJobsHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.FailedJobsHistoryLimit), p.Child("failedJobsHistoryLimit"))...)
	}
	jp := p.Child("jobTemplate")
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.JobTemplate.Labels, jp.Child("metadata", "labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.JobTemplate.Annotations, jp.Child("metadata", "annotations"))...)
	if spec.JobTemplate.Spec.ManualSelector != nil && *spec.JobTemplate.Spec.ManualSelector {
		allErrs = append(allErrs, field.NotSupported(jp.Child("spec", "manualSelector"), spec.JobTemplate.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return append(allErrs, validateJobSpec(&spec.JobTemplate.Spec, jp.Child("spec"))...)
}

// validateSchedule parses the schedule as the CronJob controller does
// (robfig/cron's standard five fields and descriptors), with the time
// zone in spec.timeZone, never in the schedule.
func validateSchedule(schedule string, tz *string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sp := p.Child("schedule")
	if schedule == "" {
		return append(allErrs, field.Required(sp, ""))
	}
	if _, err := cron.ParseStandard(schedule); err != nil {
		allErrs = append(allErrs, field.Invalid(sp, schedule, err.Error()))
	}
	if strings.Contains(schedule, "TZ") {
		if tz != nil {
			allErrs = append(allErrs, field.Invalid(sp, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		} else {
			allErrs = append(allErrs, field.Invalid(sp, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		}
	}
	if tz != nil {
		tp := p.Child("timeZone")
		switch {
		case *tz == "" || strings.EqualFold(*tz, "local"):
			allErrs = append(allErrs, field.Invalid(tp, *tz, "unknown time zone "+*tz))
		default:
			if _, err := time.LoadLocation(*tz); err != nil {
				allErrs = append(allErrs, field.Invalid(tp, *tz, err.Error()))
			}
		}
	}
	return allErrs
}

func validateCronJobUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	return append(validateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta), validateCronJob(cj)...)
}

func validateCronJobStatusUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	return validateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta)
}
