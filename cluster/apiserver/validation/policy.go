package validation

import (
	policyv1 "k8s.io/api/policy/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ---------------------------------------------------------------------------
// PodDisruptionBudget (policy/v1; upstream's ValidatePodDisruptionBudget in
// pkg/apis/policy/validation)

func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := validateObjectMeta(&pdb.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	spec, p := pdb.Spec, field.NewPath("spec")
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(p, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		allErrs = append(allErrs, validatePositiveIntOrPercent(*spec.MinAvailable, p.Child("minAvailable"))...)
		allErrs = append(allErrs, isNotMoreThan100Percent(*spec.MinAvailable, p.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		allErrs = append(allErrs, validatePositiveIntOrPercent(*spec.MaxUnavailable, p.Child("maxUnavailable"))...)
		allErrs = append(allErrs, isNotMoreThan100Percent(*spec.MaxUnavailable, p.Child("maxUnavailable"))...)
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}, p.Child("selector"))...)
	if u := spec.UnhealthyPodEvictionPolicy; u != nil && *u != policyv1.IfHealthyBudget && *u != policyv1.AlwaysAllow {
		allErrs = append(allErrs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *u,
			[]string{string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow)}))
	}
	return allErrs
}

func validatePodDisruptionBudgetUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	return append(validatePodDisruptionBudget(pdb), validateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta)...)
}

func validatePodDisruptionBudgetStatusUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta)
	s, p := pdb.Status, field.NewPath("status")
	allErrs = append(allErrs, validateNonnegativeField(int64(s.DisruptionsAllowed), p.Child("disruptionsAllowed"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.CurrentHealthy), p.Child("currentHealthy"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.DesiredHealthy), p.Child("desiredHealthy"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(s.ExpectedPods), p.Child("expectedPods"))...)
	return allErrs
}

func isNotMoreThan100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if n, isPercent := percentValue(v); isPercent && n > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}
