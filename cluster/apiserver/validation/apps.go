package validation

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// replicasOf reads an optional replica count the way the internal API sees
// it after defaulting: nil is 1.
func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// validateSelectorAndTemplate is shared by ReplicaSet and Deployment: a
// required, non-empty, valid selector that matches the template's labels,
// and a template that is a valid pod template with restartPolicy Always.
func validateSelectorAndTemplate(selector *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, kind string, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	selPath := specPath.Child("selector")
	if selector == nil {
		allErrs = append(allErrs, field.Required(selPath, ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, selPath)...)
		if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
			allErrs = append(allErrs, field.Invalid(selPath, selector, "empty selector is invalid for deployment"))
		}
	}

	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return append(allErrs, field.Invalid(selPath, selector, "invalid label selector"))
	}
	return append(allErrs, validateControllerTemplate(sel, tmpl, kind, specPath.Child("template"))...)
}

// validateControllerTemplate is the template half of every replica
// controller's spec (ReplicaSet, Deployment, ReplicationController): the
// template's labels match a non-empty selector, and the template is a valid
// pod template whose pods keep running (restartPolicy Always, no
// activeDeadlineSeconds).
func validateControllerTemplate(sel labels.Selector, tmpl *corev1.PodTemplateSpec, kind string, tmplPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !sel.Empty() && !sel.Matches(labels.Set(tmpl.Labels)) {
		allErrs = append(allErrs, field.Invalid(tmplPath.Child("metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, validatePodTemplateSpec(tmpl, tmplPath)...)
	// Controllers keep their pods running.
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(tmplPath.Child("spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if tmpl.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(tmplPath.Child("spec", "activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return allErrs
}

// validateReplicaCounts is the status check of every replica controller:
// counts non-negative, and each no more than the one it is a part of.
func validateReplicaCounts(replicas, fullyLabeled, ready, available int32, observedGeneration int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateNonnegativeField(int64(replicas), p.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(fullyLabeled), p.Child("fullyLabeledReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(ready), p.Child("readyReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(available), p.Child("availableReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(observedGeneration, p.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	if fullyLabeled > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("fullyLabeledReplicas"), fullyLabeled, msg))
	}
	if ready > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("readyReplicas"), ready, msg))
	}
	if available > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), available, msg))
	}
	if available > ready {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), available, "cannot be greater than readyReplicas"))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// ReplicaSet

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	allErrs := validateObjectMeta(&rs.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func validateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateNonnegativeField(int64(replicasOf(spec.Replicas)), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	return append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, "ReplicaSet", fldPath)...)
}

func validateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateReplicaSet(rs)...)
	// apps/v1 forbids selector changes (only extensions/v1beta1 allowed it).
	return append(allErrs, validateImmutableField(rs.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func validateReplicaSetStatusUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	s := rs.Status
	p := field.NewPath("status")
	allErrs = append(allErrs, validateReplicaCounts(s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration, p)...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// ReplicationController (core/v1, the ReplicaSet's predecessor; upstream's
// ValidateReplicationController in pkg/apis/core/validation)

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := validateObjectMeta(&rc.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

// validateReplicationControllerSpec: the selector is a map, required and
// non-empty; the template is required and checked as a ReplicaSet's.
func validateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	sel := labels.SelectorFromSet(spec.Selector)
	if sel.Empty() {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	}
	allErrs = append(allErrs, validateNonnegativeField(int64(replicasOf(spec.Replicas)), fldPath.Child("replicas"))...)
	if spec.Template == nil {
		return append(allErrs, field.Required(fldPath.Child("template"), ""))
	}
	return append(allErrs, validateControllerTemplate(sel, spec.Template, "ReplicationController", fldPath.Child("template"))...)
}

// validateReplicationControllerUpdate: unlike a ReplicaSet's, the selector
// may change.
func validateReplicationControllerUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
	return append(allErrs, validateReplicationController(rc)...)
}

func validateReplicationControllerStatusUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
	s := rc.Status
	return append(allErrs, validateReplicaCounts(s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration, field.NewPath("status"))...)
}

// ---------------------------------------------------------------------------
// Deployment

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	allErrs := validateObjectMeta(&d.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
}

func validateDeploymentSpec(spec *appsv1.DeploymentSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateNonnegativeField(int64(replicasOf(spec.Replicas)), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateSelectorAndTemplate(spec.Selector, &spec.Template, "ReplicaSet", fldPath)...)
	allErrs = append(allErrs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}
	if pds := spec.ProgressDeadlineSeconds; pds != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*pds), fldPath.Child("progressDeadlineSeconds"))...)
		if *pds <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), *pds, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

func validateDeploymentStrategy(strategy *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	switch strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if strategy.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("rollingUpdate"),
				fmt.Sprintf("may not be specified when strategy `type` is '%s'", appsv1.RecreateDeploymentStrategyType))}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		// defaults.Apply always fills it in.
		if strategy.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdateDeployment(strategy.RollingUpdate, fldPath.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), strategy.Type,
			[]appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType})}
	}
	return nil
}

func validateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// nil reads as 0, as after conversion to the internal API.
	var maxUnavailable, maxSurge intstr.IntOrString
	if ru.MaxUnavailable != nil {
		maxUnavailable = *ru.MaxUnavailable
	}
	if ru.MaxSurge != nil {
		maxSurge = *ru.MaxSurge
	}
	allErrs = append(allErrs, validatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
	allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	if v, isPercent := percentValue(maxUnavailable); isPercent && v > 100 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "must not be greater than 100%"))
	}
	return allErrs
}

func validatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, validateNonnegativeField(int64(v.IntValue()), fldPath)...)
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')"))
	}
	return allErrs
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, isPercent := percentValue(v); isPercent {
		return n
	}
	return v.IntValue()
}

func validateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateDeployment(d)...)
	// apps/v1 forbids selector changes (only extensions/v1beta1 allowed it).
	return append(allErrs, validateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func validateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	s := d.Status
	p := field.NewPath("status")
	allErrs = append(allErrs, validateNonnegativeField(s.ObservedGeneration, p.Child("observedGeneration"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.Replicas), p.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.UpdatedReplicas), p.Child("updatedReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.ReadyReplicas), p.Child("readyReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.AvailableReplicas), p.Child("availableReplicas"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.UnavailableReplicas), p.Child("unavailableReplicas"))...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if s.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegativeField(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.UpdatedReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("updatedReplicas"), s.UpdatedReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	if old.Status.CollisionCount != nil && (s.CollisionCount == nil || *s.CollisionCount < *old.Status.CollisionCount) {
		var v int32
		if s.CollisionCount != nil {
			v = *s.CollisionCount
		}
		allErrs = append(allErrs, field.Invalid(p.Child("collisionCount"), v, "cannot be decremented"))
	}
	return allErrs
}
