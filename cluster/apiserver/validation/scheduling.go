package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ---------------------------------------------------------------------------
// PriorityClass (scheduling.k8s.io/v1; upstream's ValidatePriorityClass and
// ValidatePriorityClassUpdate in pkg/apis/scheduling/validation, and the
// system classes of pkg/apis/scheduling/v1)

// Upstream's priority constants (pkg/apis/scheduling).
const (
	// HighestUserDefinablePriority is the highest value a PriorityClass
	// not named system-* may have.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is system-cluster-critical's value;
	// system-node-critical's is 1000 above it.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is reserved for the system classes.
	SystemPriorityClassPrefix = "system-"
	SystemClusterCritical     = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical        = SystemPriorityClassPrefix + "node-critical"
)

// SystemPriorityClasses returns new copies of the classes every cluster
// has from its first boot (the apiserver creates them), as upstream.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: SystemNodeCritical}, Value: SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: SystemClusterCritical}, Value: SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
}

// IsSystemPriorityClass reports whether name is one of the system classes.
func IsSystemPriorityClass(name string) bool {
	return name == SystemNodeCritical || name == SystemClusterCritical
}

// knownSystemPriorityClass is upstream's IsKnownSystemPriorityClass: a
// class named system-* must be one of the system classes exactly.
func knownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name != name {
			continue
		}
		if spc.Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMeta(&pc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain)
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			allErrs = append(allErrs, field.Forbidden(metadataPath.Child("name"),
				"priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return allErrs
}

// validatePriorityClassUpdate is upstream's: metadata, and value and
// preemptionPolicy immutable (the system classes can therefore not be
// given another value).
func validatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta)
	if pc.Value != old.Value {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(allErrs, validateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

// validatePreemptionPolicy is upstream's ValidatePreemptionPolicy (core).
func validatePreemptionPolicy(p *corev1.PreemptionPolicy, fldPath *field.Path) field.ErrorList {
	switch *p {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, *p, []string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)})}
	}
}
