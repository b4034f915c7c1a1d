package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// PriorityClasses is what the Priority plugin reads: one class by name,
// and the global default. The apiserver answers both from its watch cache.
type PriorityClasses interface {
	// Get returns the class named name, or false.
	Get(name string) (*schedulingv1.PriorityClass, bool)
	// GlobalDefault returns the class marked globalDefault (the lowest
	// valued one if a race let several in, as upstream), or nil.
	GlobalDefault() *schedulingv1.PriorityClass
}

// PickGlobalDefault is upstream's choice among classes marked
// globalDefault: the lowest value wins, so that a race that let two in
// errs low. Nil when none is marked.
func PickGlobalDefault(classes []*schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
	var d *schedulingv1.PriorityClass
	for _, pc := range classes {
		if pc.GlobalDefault && (d == nil || pc.Value < d.Value) {
			d = pc
		}
	}
	return d
}

// ResolvePodPriority is upstream's Priority admission of a pod create: it
// resolves spec.priorityClassName (or, without one, the global default
// class, whose name it fills in) into spec.priority and
// spec.preemptionPolicy. With no class name and no global default the
// priority is 0 and the policy PreemptLowerPriority. An unknown class, and
// a priority or preemption policy the client set that disagrees with the
// resolved one, are refused with upstream's messages (the apiserver answers 403 Forbidden,
// as upstream's admission.NewForbidden).
func ResolvePodPriority(pod *corev1.Pod, classes PriorityClasses) error {
	var priority int32
	var policy *corev1.PreemptionPolicy
	if name := pod.Spec.PriorityClassName; name == "" {
		if d := classes.GlobalDefault(); d != nil {
			pod.Spec.PriorityClassName, priority, policy = d.Name, d.Value, d.PreemptionPolicy
		} else {
			lower := corev1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		pc, ok := classes.Get(name)
		if !ok {
			return fmt.Errorf("no PriorityClass with name %v was found", name)
		}
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	if p := pod.Spec.Priority; p != nil && *p != priority {
		return fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p, priority)
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if p := pod.Spec.PreemptionPolicy; p != nil && *p != *policy {
			return fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p, *policy)
		}
		v := *policy
		pod.Spec.PreemptionPolicy = &v
	}
	return nil
}

// KeepPodPriority is the Priority plugin on a pod update: a client that
// leaves out spec.priority or spec.preemptionPolicy (a PUT of what it
// created) keeps the stored ones. Any other change of them is pod
// validation's to refuse (the spec is immutable there).
func KeepPodPriority(pod, old *corev1.Pod) {
	if pod.Spec.Priority == nil && old.Spec.Priority != nil {
		v := *old.Spec.Priority
		pod.Spec.Priority = &v
	}
	if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		v := *old.Spec.PreemptionPolicy
		pod.Spec.PreemptionPolicy = &v
	}
}

// CheckGlobalDefault is the Priority plugin on a PriorityClass create or
// update (update is true for the latter): only one class may be the global
// default. dflt is the current global default (nil if none).
func CheckGlobalDefault(pc, dflt *schedulingv1.PriorityClass, update bool) error {
	if !pc.GlobalDefault || dflt == nil || (update && dflt.Name == pc.Name) {
		return nil
	}
	return fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dflt.Name)
}
