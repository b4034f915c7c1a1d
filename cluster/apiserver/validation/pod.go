package validation

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// podOpts are the few knobs pod spec validation has.
type podOpts struct {
	// resourceIsPod is true for a Pod, false for a pod template embedded in
	// another object (ReplicaSet, Deployment).
	resourceIsPod bool
}

var (
	supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
	supportedHTTPSchemes   = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)
	supportedPullPolicies  = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
)

func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func validateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func validateNameWith(nameFn apimachineryvalidation.ValidateNameFunc, value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range nameFn(value, false) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

// ---------------------------------------------------------------------------
// Pod create / update / status

func validatePodCreate(pod *corev1.Pod) field.ErrorList {
	allErrs := validatePodMetadataAndSpec(pod)
	specPath := field.NewPath("spec")
	// Ephemeral containers are only added through their own subresource.
	if len(pod.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return allErrs
}

func validatePodMetadataAndSpec(pod *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateObjectMeta(&pod.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	allErrs = append(allErrs, validatePodSpecificAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpec(&pod.Spec, specPath, podOpts{resourceIsPod: true})...)

	if pod.Spec.ServiceAccountName == "" {
		for vi, vol := range pod.Spec.Volumes {
			if vol.Projected == nil {
				continue
			}
			for si, source := range vol.Projected.Sources {
				if source.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateContainersOnlyForPod(pod.Spec.Containers, specPath.Child("containers"))...)
	allErrs = append(allErrs, validateContainersOnlyForPod(pod.Spec.InitContainers, specPath.Child("initContainers"))...)
	return allErrs
}

func validatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value, isMirror := annotations[corev1.MirrorPodAnnotationKey]; isMirror && spec.NodeName == "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), value, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if value, ok := annotations[corev1.PodDeletionCost]; ok {
		if _, err := parseInt32(value); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), value, "must be a 32bit integer"))
		}
	}
	return allErrs
}

func parseInt32(s string) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err
}

func validateContainersOnlyForPod(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ctr := range containers {
		if len(ctr.Image) != len(strings.TrimSpace(ctr.Image)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("image"), ctr.Image, "must not have leading or trailing whitespace"))
		}
	}
	return allErrs
}

// updatablePodSpecFields is upstream's list, quoted in the error message.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

func validatePodUpdate(newPod, oldPod *corev1.Pod) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&newPod.ObjectMeta, &oldPod.ObjectMeta)
	allErrs = append(allErrs, validatePodMetadataAndSpec(newPod)...)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(newPod, oldPod, metadataPath.Child("annotations"))...)
	specPath := field.NewPath("spec")

	containerErrs, stop := validateContainerUpdates(newPod.Spec.Containers, oldPod.Spec.Containers, specPath.Child("containers"))
	allErrs = append(allErrs, containerErrs...)
	if stop {
		return allErrs
	}
	containerErrs, stop = validateContainerUpdates(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, specPath.Child("initContainers"))
	allErrs = append(allErrs, containerErrs...)
	if stop {
		return allErrs
	}

	// activeDeadlineSeconds may be set from nil, or lowered.
	if newPod.Spec.ActiveDeadlineSeconds != nil {
		newADS := *newPod.Spec.ActiveDeadlineSeconds
		if newADS < 0 || newADS > math.MaxInt32 {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newADS, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if oldPod.Spec.ActiveDeadlineSeconds != nil && *oldPod.Spec.ActiveDeadlineSeconds < newADS {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newADS, "must be less than or equal to previous value"))
		}
	} else if oldPod.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), newPod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	allErrs = append(allErrs, validateOnlyAddedTolerations(newPod.Spec.Tolerations, oldPod.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(newPod.Spec.SchedulingGates, oldPod.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(newPod.Spec, oldPod.Spec) {
		return allErrs
	}

	// Put back every field that may change, then require equality.
	munged := *newPod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = oldPod.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = oldPod.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = nil
	if oldPod.Spec.ActiveDeadlineSeconds != nil {
		ads := *oldPod.Spec.ActiveDeadlineSeconds
		munged.ActiveDeadlineSeconds = &ads
	}
	munged.SchedulingGates = oldPod.Spec.SchedulingGates
	munged.Tolerations = oldPod.Spec.Tolerations
	if oldPod.Spec.TerminationGracePeriodSeconds != nil && *oldPod.Spec.TerminationGracePeriodSeconds < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = oldPod.Spec.TerminationGracePeriodSeconds
	}
	// A pod still gated from scheduling may gain node selectors.
	if len(oldPod.Spec.SchedulingGates) > 0 && !apiequality.Semantic.DeepEqual(munged.NodeSelector, oldPod.Spec.NodeSelector) {
		allErrs = append(allErrs, validateNodeSelectorMutation(specPath.Child("nodeSelector"), munged.NodeSelector, oldPod.Spec.NodeSelector)...)
		munged.NodeSelector = oldPod.Spec.NodeSelector
	}

	if !apiequality.Semantic.DeepEqual(munged, oldPod.Spec) {
		specDiff := cmp.Diff(oldPod.Spec, munged)
		allErrs = append(allErrs, field.Forbidden(specPath,
			fmt.Sprintf("pod updates may not change fields other than %s\n%v", strings.Join(updatablePodSpecFields, ","), specDiff)))
	}
	return allErrs
}

func validatePodSpecificAnnotationUpdates(newPod, oldPod *corev1.Pod, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	oldVal, oldMirror := oldPod.Annotations[corev1.MirrorPodAnnotationKey]
	newVal, newMirror := newPod.Annotations[corev1.MirrorPodAnnotationKey]
	switch {
	case oldMirror && (!newMirror || newVal != oldVal):
		allErrs = append(allErrs, field.Forbidden(fldPath.Key(corev1.MirrorPodAnnotationKey), "may not remove or update mirror pod annotation"))
	case !oldMirror && newMirror:
		allErrs = append(allErrs, field.Forbidden(fldPath.Key(corev1.MirrorPodAnnotationKey), "may not add mirror pod annotation"))
	}
	return allErrs
}

func validateContainerUpdates(newContainers, oldContainers []corev1.Container, fldPath *field.Path) (field.ErrorList, bool) {
	var allErrs field.ErrorList
	if len(newContainers) != len(oldContainers) {
		return field.ErrorList{field.Forbidden(fldPath, "pod updates may not add or remove containers")}, true
	}
	for i, ctr := range newContainers {
		if ctr.Image == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("image"), ""))
		}
	}
	return allErrs, false
}

func validateOnlyAddedTolerations(newTolerations, oldTolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, old := range oldTolerations {
		found := false
		oldClone := old.DeepCopy()
		for _, newToleration := range newTolerations {
			// tolerationSeconds may change.
			oldClone.TolerationSeconds = newToleration.TolerationSeconds
			if reflect.DeepEqual(*oldClone, newToleration) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(newTolerations, fldPath)
}

func validateOnlyDeletedSchedulingGates(newGates, oldGates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	old := sets.New[string]()
	for _, g := range oldGates {
		old.Insert(g.Name)
	}
	for i, g := range newGates {
		if !old.Has(g.Name) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

func validateNodeSelectorMutation(fldPath *field.Path, newNodeSelector, oldNodeSelector map[string]string) field.ErrorList {
	for k, v1 := range oldNodeSelector {
		if v2, ok := newNodeSelector[k]; !ok || v1 != v2 {
			return field.ErrorList{field.Invalid(fldPath, newNodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")}
		}
	}
	return nil
}

func validatePodStatusUpdate(newPod, oldPod *corev1.Pod) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&newPod.ObjectMeta, &oldPod.ObjectMeta)
	allErrs = append(allErrs, validatePodSpecificAnnotationUpdates(newPod, oldPod, metadataPath.Child("annotations"))...)
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, validatePodConditions(newPod.Status.Conditions, statusPath.Child("conditions"))...)

	// nodeName is set through the binding subresource only.
	if newPod.Spec.NodeName != oldPod.Spec.NodeName {
		allErrs = append(allErrs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if newPod.Status.NominatedNodeName != oldPod.Status.NominatedNodeName && newPod.Status.NominatedNodeName != "" {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, newPod.Status.NominatedNodeName, statusPath.Child("nominatedNodeName"))...)
	}
	// QoS class is computed once, at creation.
	if oldPod.Status.QOSClass != "" {
		allErrs = append(allErrs, validateImmutableField(newPod.Status.QOSClass, oldPod.Status.QOSClass, statusPath.Child("qosClass"))...)
	}

	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.ContainerStatuses, oldPod.Status.ContainerStatuses, statusPath.Child("containerStatuses"), oldPod.Spec.RestartPolicy, nil)...)
	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.InitContainerStatuses, oldPod.Status.InitContainerStatuses, statusPath.Child("initContainerStatuses"), oldPod.Spec.RestartPolicy, oldPod.Spec.InitContainers)...)
	allErrs = append(allErrs, validateContainerStateTransition(newPod.Status.EphemeralContainerStatuses, oldPod.Status.EphemeralContainerStatuses, statusPath.Child("ephemeralContainerStatuses"), corev1.RestartPolicyNever, nil)...)

	podIPs := make([]string, 0, len(newPod.Status.PodIPs))
	for _, ip := range newPod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	allErrs = append(allErrs, validateIPList(podIPs, statusPath.Child("podIPs"), newPod.Status.PodIPs)...)

	if len(newPod.Status.HostIPs) > 0 {
		hostIPsPath := statusPath.Child("hostIPs")
		if newPod.Status.HostIP != newPod.Status.HostIPs[0].IP {
			allErrs = append(allErrs, field.Invalid(hostIPsPath.Index(0).Child("ip"), newPod.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
		}
		hostIPs := make([]string, 0, len(newPod.Status.HostIPs))
		for _, ip := range newPod.Status.HostIPs {
			hostIPs = append(hostIPs, ip.IP)
		}
		allErrs = append(allErrs, validateIPList(hostIPs, hostIPsPath, newPod.Status.HostIPs)...)
	}
	return allErrs
}

// validateIPList checks a pod's podIPs/hostIPs: valid IPs, at most one per
// family, no duplicates.
func validateIPList(ips []string, fldPath *field.Path, badValue any) field.ErrorList {
	var allErrs field.ErrorList
	invalid := false
	for i, ip := range ips {
		errs := validation.IsValidIP(fldPath.Index(i).Child("ip"), ip)
		invalid = invalid || len(errs) > 0
		allErrs = append(allErrs, errs...)
	}
	if len(ips) > 1 && !invalid {
		seen := sets.New[string]()
		for i, ip := range ips {
			if seen.Has(ip) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), ip))
			}
			seen.Insert(ip)
		}
		if dual, err := netutils.IsDualStackIPStrings(ips); err != nil || !dual || len(ips) > 2 {
			allErrs = append(allErrs, field.Invalid(fldPath, badValue, "may specify no more than one IP for each IP family"))
		}
	}
	return allErrs
}

var systemPodConditions = sets.New(corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized, corev1.ContainersReady)

func validatePodConditions(conditions []corev1.PodCondition, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range conditions {
		if systemPodConditions.Has(c.Type) {
			continue
		}
		allErrs = append(allErrs, validateQualifiedName(string(c.Type), fldPath.Index(i).Child("type"))...)
	}
	return allErrs
}

// validateContainerStateTransition forbids a terminated container from
// running again when the pod's restart policy does not allow it. initSpecs,
// when given, lets restartable (sidecar) init containers restart.
func validateContainerStateTransition(newStatuses, oldStatuses []corev1.ContainerStatus, fldPath *field.Path, restartPolicy corev1.RestartPolicy, initSpecs []corev1.Container) field.ErrorList {
	var allErrs field.ErrorList
	if restartPolicy == corev1.RestartPolicyAlways {
		return nil
	}
	for i, oldStatus := range oldStatuses {
		if oldStatus.State.Terminated == nil {
			continue
		}
		if oldStatus.State.Terminated.ExitCode != 0 && restartPolicy == corev1.RestartPolicyOnFailure {
			continue
		}
		restartable := false
		for _, c := range initSpecs {
			if c.Name == oldStatus.Name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				restartable = true
			}
		}
		if restartable {
			continue
		}
		for _, newStatus := range newStatuses {
			if oldStatus.Name == newStatus.Name && newStatus.State.Terminated == nil {
				allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return allErrs
}

func validatePodBinding(b *corev1.Binding) field.ErrorList {
	var allErrs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("target", "name"), ""))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Pod templates

// validatePodTemplateSpec validates a template embedded in a controller.
func validatePodTemplateSpec(tmpl *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// Upstream says spec.template.labels; the JSON path has metadata.
	metaPath := fldPath.Child("metadata")
	allErrs = append(allErrs, metav1validation.ValidateLabels(tmpl.Labels, metaPath.Child("labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(tmpl.Annotations, metaPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpecificAnnotations(tmpl.Annotations, &tmpl.Spec, metaPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpec(&tmpl.Spec, fldPath.Child("spec"), podOpts{})...)
	if len(tmpl.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Pod spec

func validatePodSpec(spec *corev1.PodSpec, fldPath *field.Path, opts podOpts) field.ErrorList {
	var allErrs field.ErrorList

	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	gracePeriod := spec.TerminationGracePeriodSeconds
	hostUsers := spec.HostUsers == nil || *spec.HostUsers

	vols, vErrs := validateVolumes(spec.Volumes, fldPath.Child("volumes"))
	allErrs = append(allErrs, vErrs...)
	claimNames := sets.New[string]()
	for _, c := range spec.ResourceClaims {
		claimNames.Insert(c.Name)
	}
	allErrs = append(allErrs, validateContainers(spec.Containers, vols, claimNames, gracePeriod, fldPath.Child("containers"), spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, vols, claimNames, gracePeriod, fldPath.Child("initContainers"), spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, claimNames, fldPath.Child("ephemeralContainers"), spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validatePodHostNetworkDeps(spec, fldPath, opts)...)
	allErrs = append(allErrs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	allErrs = append(allErrs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSecurityContext(spec, fldPath.Child("securityContext"))...)
	allErrs = append(allErrs, validateImagePullSecrets(spec.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	allErrs = append(allErrs, validateAffinity(spec.Affinity, fldPath.Child("affinity"))...)
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		allErrs = append(allErrs, validateQualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	allErrs = append(allErrs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)

	if hostUsers := spec.HostUsers; hostUsers != nil && !*hostUsers {
		if spec.HostNetwork {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostNetwork"), "when `pod.Spec.HostUsers` is false"))
		}
		if spec.HostPID {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostPID"), "when `pod.Spec.HostUsers` is false"))
		}
		if spec.HostIPC {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostIPC"), "when `pod.Spec.HostUsers` is false"))
		}
	}
	if spec.ServiceAccountName != "" {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.ValidateServiceAccountName, spec.ServiceAccountName, fldPath.Child("serviceAccountName"))...)
	}
	if spec.NodeName != "" {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, spec.NodeName, fldPath.Child("nodeName"))...)
	}
	if spec.PriorityClassName != "" {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(spec.PreemptionPolicy, fldPath.Child("preemptionPolicy"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if spec.Hostname != "" {
		allErrs = append(allErrs, validateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		allErrs = append(allErrs, validateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	for i, ha := range spec.HostAliases {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("hostAliases").Index(i).Child("ip"), ha.IP)...)
		for j, hostname := range ha.Hostnames {
			allErrs = append(allErrs, validateDNS1123Subdomain(hostname, fldPath.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, *spec.RuntimeClassName, fldPath.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		switch *spec.PreemptionPolicy {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		case "":
			allErrs = append(allErrs, field.Required(fldPath.Child("preemptionPolicy"), ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("preemptionPolicy"), *spec.PreemptionPolicy, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	if spec.Overhead != nil {
		allErrs = append(allErrs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, nil, fldPath.Child("overhead"))...)
	}
	if spec.OS != nil {
		switch spec.OS.Name {
		case corev1.Linux, corev1.Windows:
		case "":
			allErrs = append(allErrs, field.Required(fldPath.Child("os", "name"), ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("os", "name"), spec.OS.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
		}
	}
	return allErrs
}

func validateRestartPolicy(policy corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, policy, []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	}
}

func validateDNSPolicy(policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, policy, []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone})}
	}
}

const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validatePodDNSConfig(dnsConfig *corev1.PodDNSConfig, dnsPolicy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if dnsPolicy == corev1.DNSNone {
		if dnsConfig == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(dnsConfig.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if dnsConfig == nil {
		return nil
	}
	if len(dnsConfig.Nameservers) > maxDNSNameservers {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), dnsConfig.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range dnsConfig.Nameservers {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("nameservers").Index(i), ns)...)
	}
	if len(dnsConfig.Searches) > maxDNSSearchPaths {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), dnsConfig.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(dnsConfig.Searches, " ")) > maxDNSSearchListChars {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), dnsConfig.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, search := range dnsConfig.Searches {
		if search == "." {
			continue
		}
		search = strings.TrimSuffix(search, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), search, msg))
		}
	}
	for i, option := range dnsConfig.Options {
		if option.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

func validatePodHostNetworkDeps(spec *corev1.PodSpec, fldPath *field.Path, opts podOpts) field.ErrorList {
	var allErrs field.ErrorList
	if !spec.HostNetwork {
		return nil
	}
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			// A pod needs hostPort == containerPort; a template may leave it 0
			// (it is defaulted when the pod is created).
			if hp, cp := port.HostPort, port.ContainerPort; (opts.resourceIsPod || hp != 0) && hp != cp {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

func validateImagePullSecrets(secrets []corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range secrets {
		if s.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("name"), ""))
		}
	}
	return allErrs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		allErrs = append(allErrs, validateQualifiedName(g.Name, fldPath.Index(i))...)
		if seen.Has(g.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return allErrs
}

var supportedTaintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

func validateTaintEffect(effect corev1.TaintEffect, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if !allowEmpty && effect == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	default:
		return field.ErrorList{field.NotSupported(fldPath, effect, supportedTaintEffects)}
	}
}

func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		idxPath := fldPath.Index(i)
		if t.Key != "" {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, idxPath.Child("key"))...)
		}
		// An empty key with Exists matches all taints.
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			allErrs = append(allErrs, validateTaintEffect(t.Effect, true, idxPath.Child("effect"))...)
		}
	}
	return allErrs
}

func validateAffinity(affinity *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if affinity == nil {
		return nil
	}
	if na := affinity.NodeAffinity; na != nil {
		naPath := fldPath.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			reqPath := naPath.Child("requiredDuringSchedulingIgnoredDuringExecution")
			if len(req.NodeSelectorTerms) == 0 {
				allErrs = append(allErrs, field.Required(reqPath.Child("nodeSelectorTerms"), "must have at least one node selector term"))
			}
			for i, term := range req.NodeSelectorTerms {
				allErrs = append(allErrs, validateNodeSelectorTerm(term, reqPath.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			prefPath := naPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			for _, msg := range validation.IsInRange(int(pref.Weight), 1, 100) {
				allErrs = append(allErrs, field.Invalid(prefPath.Child("weight"), pref.Weight, msg))
			}
			allErrs = append(allErrs, validateNodeSelectorTerm(pref.Preference, prefPath.Child("preference"))...)
		}
	}
	if pa := affinity.PodAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAffinity"))...)
	}
	if pa := affinity.PodAntiAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAntiAffinity"))...)
	}
	return allErrs
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, req := range term.MatchExpressions {
		allErrs = append(allErrs, validateNodeSelectorRequirement(req, fldPath.Child("matchExpressions").Index(i))...)
	}
	for i, req := range term.MatchFields {
		idxPath := fldPath.Child("matchFields").Index(i)
		switch req.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(req.Values) != 1 {
				allErrs = append(allErrs, field.Required(idxPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		if req.Key != metav1ObjectNameField {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("key"), req.Key, []string{metav1ObjectNameField}))
		}
	}
	return allErrs
}

const metav1ObjectNameField = "metadata.name"

func validateNodeSelectorRequirement(rq corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelName(rq.Key, fldPath.Child("key"))...)
	return allErrs
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, term := range required {
		allErrs = append(allErrs, validatePodAffinityTerm(term, fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, w := range preferred {
		wPath := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		for _, msg := range validation.IsInRange(int(w.Weight), 1, 100) {
			allErrs = append(allErrs, field.Invalid(wPath.Child("weight"), w.Weight, msg))
		}
		allErrs = append(allErrs, validatePodAffinityTerm(w.PodAffinityTerm, wPath.Child("podAffinityTerm"))...)
	}
	return allErrs
}

func validatePodAffinityTerm(term corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	opts := metav1validation.LabelSelectorValidationOptions{}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for _, name := range term.Namespaces {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.ValidateNamespaceName, name, fldPath.Child("namespace"))...)
	}
	if term.TopologyKey == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(term.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	return allErrs
}

var supportedScheduleActions = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)

func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range constraints {
		subPath := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(subPath.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(subPath.Child("topologyKey"), "can not be empty"))
		} else {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(c.TopologyKey, subPath.Child("topologyKey"))...)
		}
		if !supportedScheduleActions.Has(c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(subPath.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(supportedScheduleActions)))
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(subPath.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(subPath.Child("minDomains"), c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, prev := range constraints[:i] {
			if prev.TopologyKey == c.TopologyKey && prev.WhenUnsatisfiable == c.WhenUnsatisfiable {
				allErrs = append(allErrs, field.Duplicate(subPath, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, subPath.Child("labelSelector"))...)
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Security contexts

var validFSGroupChangePolicies = sets.New(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)

var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

func validatePodSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	if sc.FSGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for g, gid := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(gid) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("supplementalGroups").Index(g), gid, msg))
		}
	}
	if spec.ShareProcessNamespace != nil && spec.HostPID && *spec.ShareProcessNamespace {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	names := sets.New[string]()
	for i, s := range sc.Sysctls {
		namePath := fldPath.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlRegexp.MatchString(s.Name):
			allErrs = append(allErrs, field.Invalid(namePath, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlRegexp)))
		case names.Has(s.Name):
			allErrs = append(allErrs, field.Duplicate(namePath, s.Name))
		}
		names.Insert(s.Name)
	}
	if sc.FSGroupChangePolicy != nil && !validFSGroupChangePolicies.Has(*sc.FSGroupChangePolicy) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy, sets.List(validFSGroupChangePolicies)))
	}
	allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	return allErrs
}

func validateSeccompProfile(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if sp == nil {
		return nil
	}
	supported := []corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), sp.Type, supported))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

func validateSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	if sc == nil {
		return nil
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		switch *sc.ProcMount {
		case corev1.DefaultProcMount, corev1.UnmaskedProcMount:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("procMount"), *sc.ProcMount, []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Containers

func validateContainers(containers []corev1.Container, vols map[string]corev1.VolumeSource, claimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	allNames := sets.New[string]()
	for i := range containers {
		ctr := &containers[i]
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, vols, claimNames, idxPath, podRestartPolicy, hostUsers)...)
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), ctr.Name))
		} else {
			allNames.Insert(ctr.Name)
		}
		if ctr.Lifecycle != nil {
			allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, idxPath.Child("lifecycle"))...)
		}
		allErrs = append(allErrs, validateProbe(ctr.LivenessProbe, idxPath.Child("livenessProbe"), true)...)
		allErrs = append(allErrs, validateProbe(ctr.ReadinessProbe, idxPath.Child("readinessProbe"), false)...)
		allErrs = append(allErrs, validateProbe(ctr.StartupProbe, idxPath.Child("startupProbe"), true)...)
		if ctr.RestartPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	allErrs = append(allErrs, checkHostPortConflicts(containers, fldPath)...)
	return allErrs
}

func validateInitContainers(containers, regular []corev1.Container, vols map[string]corev1.VolumeSource, claimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.New[string]()
	for _, c := range regular {
		allNames.Insert(c.Name)
	}
	for i := range containers {
		ctr := &containers[i]
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, vols, claimNames, idxPath, podRestartPolicy, hostUsers)...)

		restartAlways := false
		if ctr.RestartPolicy != nil {
			if *ctr.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				allErrs = append(allErrs, field.NotSupported(idxPath.Child("restartPolicy"), *ctr.RestartPolicy, []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
			}
			restartAlways = *ctr.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), ctr.Name))
		} else if ctr.Name != "" {
			allNames.Insert(ctr.Name)
		}
		// Init containers run one by one: conflicts only within one.
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*ctr}, fldPath)...)

		if restartAlways {
			if ctr.Lifecycle != nil {
				allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, idxPath.Child("lifecycle"))...)
			}
			allErrs = append(allErrs, validateProbe(ctr.LivenessProbe, idxPath.Child("livenessProbe"), true)...)
			allErrs = append(allErrs, validateProbe(ctr.ReadinessProbe, idxPath.Child("readinessProbe"), false)...)
			allErrs = append(allErrs, validateProbe(ctr.StartupProbe, idxPath.Child("startupProbe"), true)...)
			continue
		}
		const msg = "may not be set for init containers without restartPolicy=Always"
		if ctr.Lifecycle != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("lifecycle"), msg))
		}
		if ctr.LivenessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("livenessProbe"), msg))
		}
		if ctr.ReadinessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("readinessProbe"), msg))
		}
		if ctr.StartupProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("startupProbe"), msg))
		}
	}
	return allErrs
}

func validateEphemeralContainers(ecs []corev1.EphemeralContainer, containers, initContainers []corev1.Container, vols map[string]corev1.VolumeSource, claimNames sets.Set[string], fldPath *field.Path, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	otherNames := sets.New[string]()
	for _, c := range containers {
		otherNames.Insert(c.Name)
	}
	for _, c := range initContainers {
		otherNames.Insert(c.Name)
	}
	allNames := otherNames.Clone()
	for i := range ecs {
		ec := &ecs[i]
		idxPath := fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(c, vols, claimNames, idxPath, podRestartPolicy, hostUsers)...)
		allErrs = append(allErrs, validateContainersOnlyForPod([]corev1.Container{*c}, fldPath)...)
		if allNames.Has(ec.Name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), ec.Name))
		} else {
			allNames.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !otherNames.Has(ec.TargetContainerName) {
			allErrs = append(allErrs, field.NotFound(idxPath.Child("targetContainerName"), ec.TargetContainerName))
		}
		const msg = "cannot be set for an Ephemeral Container"
		if len(ec.Ports) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("ports"), msg))
		}
		if len(ec.Resources.Limits)+len(ec.Resources.Requests)+len(ec.Resources.Claims) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("resources"), msg))
		}
		if ec.LivenessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("livenessProbe"), msg))
		}
		if ec.ReadinessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("readinessProbe"), msg))
		}
		if ec.StartupProbe != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("startupProbe"), msg))
		}
		if ec.Lifecycle != nil {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("lifecycle"), msg))
		}
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("volumeMounts").Index(j).Child("subPath"), msg))
			}
			if vm.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("volumeMounts").Index(j).Child("subPathExpr"), msg))
			}
		}
	}
	return allErrs
}

// validateContainerCommon applies the rules shared by every container type.
func validateContainerCommon(ctr *corev1.Container, vols map[string]corev1.VolumeSource, claimNames sets.Set[string], fldPath *field.Path, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	namePath := fldPath.Child("name")
	if ctr.Name == "" {
		allErrs = append(allErrs, field.Required(namePath, ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(ctr.Name, namePath)...)
	}
	if ctr.Image == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("image"), ""))
	}
	switch ctr.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationMessagePolicy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("terminationMessagePolicy"), ctr.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	allErrs = append(allErrs, validateContainerPorts(ctr.Ports, fldPath.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(ctr.Env, fldPath.Child("env"))...)
	allErrs = append(allErrs, validateEnvFrom(ctr.EnvFrom, fldPath.Child("envFrom"))...)
	allErrs = append(allErrs, validateVolumeMounts(ctr.VolumeMounts, vols, fldPath.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateVolumeDevices(ctr.VolumeDevices, ctr.VolumeMounts, vols, fldPath.Child("volumeDevices"))...)
	switch ctr.ImagePullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("imagePullPolicy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("imagePullPolicy"), ctr.ImagePullPolicy, sets.List(supportedPullPolicies)))
	}
	allErrs = append(allErrs, validateResourceRequirements(&ctr.Resources, claimNames, fldPath.Child("resources"))...)
	allErrs = append(allErrs, validateResizePolicy(ctr.ResizePolicy, fldPath.Child("resizePolicy"), podRestartPolicy)...)
	allErrs = append(allErrs, validateSecurityContext(ctr.SecurityContext, fldPath.Child("securityContext"), hostUsers)...)
	return allErrs
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.New[string]()
	for i, port := range ports {
		idxPath := fldPath.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), port.Name, msg))
				}
			} else if allNames.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), port.Name))
			} else {
				allNames.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostPort"), port.HostPort, msg))
			}
		}
		if port.Protocol == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
		}
	}
	return allErrs
}

// checkHostPortConflicts rejects two ports claiming the same
// protocol/hostIP/hostPort.
func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for ci, ctr := range containers {
		for pi, p := range ctr.Ports {
			if p.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
			if seen.Has(key) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			}
			seen.Insert(key)
		}
	}
	return allErrs
}

var validEnvDownwardAPIFieldPaths = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.serviceAccountName",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

var validContainerResourceFieldPaths = sets.New(
	"limits.cpu",
	"limits.memory",
	"limits.ephemeral-storage",
	"requests.cpu",
	"requests.memory",
	"requests.ephemeral-storage",
)

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		idxPath := fldPath.Index(i)
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, idxPath.Child("valueFrom"))...)
	}
	return allErrs
}

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ev.ValueFrom == nil {
		return nil
	}
	numSources := 0
	if ref := ev.ValueFrom.FieldRef; ref != nil {
		numSources++
		allErrs = append(allErrs, validateObjectFieldSelector(ref, fldPath.Child("fieldRef"))...)
	}
	if ref := ev.ValueFrom.ResourceFieldRef; ref != nil {
		numSources++
		allErrs = append(allErrs, validateContainerResourceFieldSelector(ref, fldPath.Child("resourceFieldRef"))...)
	}
	if ref := ev.ValueFrom.ConfigMapKeyRef; ref != nil {
		numSources++
		allErrs = append(allErrs, validateKeySelector(ref.Name, ref.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if ref := ev.ValueFrom.SecretKeyRef; ref != nil {
		numSources++
		allErrs = append(allErrs, validateKeySelector(ref.Name, ref.Key, fldPath.Child("secretKeyRef"))...)
	}
	if ref := ev.ValueFrom.FileKeyRef; ref != nil {
		numSources++
	}
	switch {
	case numSources == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case ev.Value != "":
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case numSources > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, name, fldPath.Child("name"))...)
	}
	if key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

// splitMaybeSubscriptedPath splits `metadata.labels['key']` into
// ("metadata.labels", "key", true).
func splitMaybeSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	s := strings.TrimSuffix(fieldPath, "']")
	parts := strings.SplitN(s, "['", 2)
	if len(parts) < 2 || len(parts[0]) == 0 {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, fldPath *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	if fs.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: unsupported pod version: %s", fs.APIVersion))}
	}
	p, subscript, ok := splitMaybeSubscriptedPath(fs.FieldPath)
	if ok {
		switch p {
		case "metadata.annotations":
			return validateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return validateQualifiedName(subscript, fldPath)
		default:
			return field.ErrorList{field.Invalid(fldPath, p, "does not support subscript")}
		}
	}
	if !validEnvDownwardAPIFieldPaths.Has(p) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), p, sets.List(validEnvDownwardAPIFieldPaths))}
	}
	return nil
}

func validateContainerResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path) field.ErrorList {
	switch {
	case fs.Resource == "":
		return field.ErrorList{field.Required(fldPath.Child("resource"), "")}
	case validContainerResourceFieldPaths.Has(fs.Resource),
		strings.HasPrefix(fs.Resource, "requests.hugepages-"),
		strings.HasPrefix(fs.Resource, "limits.hugepages-"):
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(validContainerResourceFieldPaths))}
	}
	if fs.Divisor.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath.Child("divisor"), fs.Divisor.String(), isNegativeErrorMsg)}
	}
	return nil
}

func validateEnvFrom(vars []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		idxPath := fldPath.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("prefix"), ev.Prefix, msg))
			}
		}
		numSources := 0
		if ev.ConfigMapRef != nil {
			numSources++
			allErrs = append(allErrs, validateEnvSourceName(ev.ConfigMapRef.Name, idxPath.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			numSources++
			allErrs = append(allErrs, validateEnvSourceName(ev.SecretRef.Name, idxPath.Child("secretRef"))...)
		}
		switch {
		case numSources == 0:
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		case numSources > 1:
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	var allErrs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, true) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Probes and lifecycle handlers

func validateProbe(probe *corev1.Probe, fldPath *field.Path, successMustBeOne bool) field.ErrorList {
	var allErrs field.ErrorList
	if probe == nil {
		return nil
	}
	allErrs = append(allErrs, validateHandler(handler{
		exec: probe.Exec, httpGet: probe.HTTPGet, tcpSocket: probe.TCPSocket, grpc: probe.GRPC,
	}, nil, fldPath)...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.InitialDelaySeconds), fldPath.Child("initialDelaySeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.TimeoutSeconds), fldPath.Child("timeoutSeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.PeriodSeconds), fldPath.Child("periodSeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.SuccessThreshold), fldPath.Child("successThreshold"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.FailureThreshold), fldPath.Child("failureThreshold"))...)
	if probe.TerminationGracePeriodSeconds != nil && *probe.TerminationGracePeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *probe.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	// Liveness and startup probes decide on the first success.
	if successMustBeOne && probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

// validateHandler requires exactly one handler type.
func validateHandler(h handler, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	num := 0
	add := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if num > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		num++
		allErrs = append(allErrs, validate()...)
	}
	add(h.exec != nil, "exec", func() field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("exec", "command"), "")}
		}
		return nil
	})
	add(h.httpGet != nil, "httpGet", func() field.ErrorList {
		return validateHTTPGetAction(h.httpGet, fldPath.Child("httpGet"))
	})
	add(h.tcpSocket != nil, "tcpSocket", func() field.ErrorList {
		return validatePortNumOrName(h.tcpSocket.Port, fldPath.Child("tcpSocket", "port"))
	})
	add(h.grpc != nil, "grpc", func() field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(h.grpc.Port), fldPath.Child("grpc", "port"))
	})
	add(h.sleep != nil, "sleep", func() field.ErrorList {
		if gracePeriod != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *gracePeriod) {
			return field.ErrorList{field.Invalid(fldPath.Child("sleep"), h.sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	})
	if num == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a handler type"))
	}
	return allErrs
}

func validateHTTPGetAction(http *corev1.HTTPGetAction, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if http.Path == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validatePortNumOrName(http.Port, fldPath.Child("port"))...)
	if !supportedHTTPSchemes.Has(http.Scheme) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scheme"), http.Scheme, sets.List(supportedHTTPSchemes)))
	}
	for _, header := range http.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("httpHeaders"), header.Name, msg))
		}
	}
	return allErrs
}

func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}

func validateLifecycle(lc *corev1.Lifecycle, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, nh := range []struct {
		name string
		h    *corev1.LifecycleHandler
	}{{"postStart", lc.PostStart}, {"preStop", lc.PreStop}} {
		if name, h := nh.name, nh.h; h != nil {
			allErrs = append(allErrs, validateHandler(handler{
				exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, sleep: h.Sleep,
			}, gracePeriod, fldPath.Child(name))...)
		}
	}
	if lc.StopSignal != nil && *lc.StopSignal == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("stopSignal"), ""))
	}
	return allErrs
}

var supportedResizeResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory)
var supportedResizePolicies = sets.New(corev1.NotRequired, corev1.RestartContainer)

func validateResizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, p := range policies {
		if seen.Has(p.ResourceName) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), p.ResourceName))
		}
		seen.Insert(p.ResourceName)
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.ResourceName, sets.List(supportedResizeResources)))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.RestartPolicy, sets.List(supportedResizePolicies)))
		}
		if podRestartPolicy == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			allErrs = append(allErrs, field.Invalid(fldPath, p.RestartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
		}
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Resources

var standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// isNativeResource: unprefixed, or in the kubernetes.io domain.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	// A quota on it is "requests.<name>", which must be a qualified name too.
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isOvercommitAllowed: only native, non-hugepage resources may have
// requests below limits.
func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePageResourceName(name)
}

func validateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources.Has(name) && !isHugePageResourceName(name) {
			return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource for containers")}
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

// validateResourceQuantityValue: not negative, and whole for resources
// counted in units (extended resources).
func validateResourceQuantityValue(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), isNegativeErrorMsg))
	}
	if isExtendedResourceName(name) && q.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), isNotIntegerErrorMsg))
	}
	return allErrs
}

// validateResourceRequirements checks names, quantities and that every
// request is at most its limit (equal to it for non-overcommittable
// resources). claimNames nil skips the claims check.
func validateResourceRequirements(req *corev1.ResourceRequirements, claimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	limPath := fldPath.Child("limits")
	reqPath := fldPath.Child("requests")
	limCPUOrMem, reqCPUOrMem, limHuge, reqHuge := false, false, false, false
	for _, name := range sortedResourceNames(req.Limits) {
		q := req.Limits[name]
		p := limPath.Key(string(name))
		allErrs = append(allErrs, validateContainerResourceName(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, p)...)
		limHuge = limHuge || isHugePageResourceName(name)
		limCPUOrMem = limCPUOrMem || supportedResizeResources.Has(name)
	}
	for _, name := range sortedResourceNames(req.Requests) {
		q := req.Requests[name]
		p := reqPath.Key(string(name))
		allErrs = append(allErrs, validateContainerResourceName(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, p)...)
		if limit, ok := req.Limits[name]; ok {
			if q.Cmp(limit) != 0 && !isOvercommitAllowed(name) {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if q.Cmp(limit) > 0 {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !isOvercommitAllowed(name) {
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		reqHuge = reqHuge || isHugePageResourceName(name)
		reqCPUOrMem = reqCPUOrMem || supportedResizeResources.Has(name)
	}
	if !limCPUOrMem && !reqCPUOrMem && (reqHuge || limHuge) {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	if claimNames != nil {
		seen := sets.New[string]()
		for i, c := range req.Claims {
			idxPath := fldPath.Child("claims").Index(i)
			key := c.Name
			if c.Request != "" {
				key += "/" + c.Request
			}
			switch {
			case c.Name == "":
				allErrs = append(allErrs, field.Required(idxPath, ""))
			case seen.Has(key):
				allErrs = append(allErrs, field.Duplicate(idxPath, key))
			case !claimNames.Has(c.Name):
				e := field.NotFound(idxPath, c.Name)
				e.Detail = "must be one of the names in pod.spec.resourceClaims"
				if claimNames.Len() == 0 {
					e.Detail += " which is empty"
				} else {
					e.Detail += ": " + strings.Join(sets.List(claimNames), ", ")
				}
				allErrs = append(allErrs, e)
			}
			seen.Insert(key)
		}
	}
	return allErrs
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	return sets.List(sets.New(names...))
}

// ---------------------------------------------------------------------------
// Volumes

var volumeSourceFields = func() []struct {
	index int
	name  string
} {
	var out []struct {
		index int
		name  string
	}
	t := reflect.TypeOf(corev1.VolumeSource{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, struct {
			index int
			name  string
		}{i, name})
	}
	return out
}()

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

func validateVolumes(volumes []corev1.Volume, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	vols := make(map[string]corev1.VolumeSource)
	for i, vol := range volumes {
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		el := validateVolumeSource(&vol.VolumeSource, idxPath)
		if vol.Name == "" {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, validateDNS1123Label(vol.Name, namePath)...)
		}
		if _, dup := vols[vol.Name]; dup {
			el = append(el, field.Duplicate(namePath, vol.Name))
		}
		if len(el) == 0 {
			vols[vol.Name] = vol.VolumeSource
		} else {
			allErrs = append(allErrs, el...)
		}
	}
	return vols, allErrs
}

func validateVolumeSource(src *corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	v := reflect.ValueOf(src).Elem()
	num := 0
	for _, f := range volumeSourceFields {
		if v.Field(f.index).IsNil() {
			continue
		}
		if num > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(f.name), "may not specify more than 1 volume type"))
			continue
		}
		num++
	}
	if num == 0 {
		return field.ErrorList{field.Required(fldPath, "must specify a volume type")}
	}
	switch {
	case src.HostPath != nil:
		if src.HostPath.Path == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("hostPath", "path"), ""))
		} else {
			allErrs = append(allErrs, validatePathNoBacksteps(src.HostPath.Path, fldPath.Child("hostPath", "path"))...)
		}
	case src.EmptyDir != nil:
		if src.EmptyDir.SizeLimit != nil && src.EmptyDir.SizeLimit.Sign() < 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
	case src.Secret != nil:
		p := fldPath.Child("secret")
		if src.Secret.SecretName == "" {
			allErrs = append(allErrs, field.Required(p.Child("secretName"), ""))
		}
		allErrs = append(allErrs, validateFileMode(src.Secret.DefaultMode, p.Child("defaultMode"))...)
		allErrs = append(allErrs, validateKeyToPaths(src.Secret.Items, p.Child("items"))...)
	case src.ConfigMap != nil:
		p := fldPath.Child("configMap")
		if src.ConfigMap.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, src.ConfigMap.Name, p.Child("name"))...)
		}
		allErrs = append(allErrs, validateFileMode(src.ConfigMap.DefaultMode, p.Child("defaultMode"))...)
		allErrs = append(allErrs, validateKeyToPaths(src.ConfigMap.Items, p.Child("items"))...)
	case src.PersistentVolumeClaim != nil:
		if src.PersistentVolumeClaim.ClaimName == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("persistentVolumeClaim", "claimName"), ""))
		}
	case src.DownwardAPI != nil:
		allErrs = append(allErrs, validateFileMode(src.DownwardAPI.DefaultMode, fldPath.Child("downwardAPI", "defaultMode"))...)
	case src.Projected != nil:
		allErrs = append(allErrs, validateFileMode(src.Projected.DefaultMode, fldPath.Child("projected", "defaultMode"))...)
	}
	return allErrs
}

func validateFileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateKeyToPaths(items []corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, kp := range items {
		idxPath := fldPath.Index(i)
		if kp.Key == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("key"), ""))
		}
		if kp.Path == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("path"), ""))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(kp.Path, idxPath.Child("path"))...)
			if strings.HasPrefix(path.Clean(kp.Path), "..") {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("path"), kp.Path, "must not start with '..'"))
			}
		}
		allErrs = append(allErrs, validateFileMode(kp.Mode, idxPath.Child("mode"))...)
	}
	return allErrs
}

// validatePathNoBacksteps rejects paths with a '..' element.
func validatePathNoBacksteps(targetPath string, fldPath *field.Path) field.ErrorList {
	for _, item := range strings.Split(strings.ReplaceAll(targetPath, `\`, "/"), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(fldPath, targetPath, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalDescendingPath requires a relative path without '..'.
func validateLocalDescendingPath(targetPath string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(targetPath) || strings.HasPrefix(targetPath, `\`) {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must be a relative path"))
	}
	return append(allErrs, validatePathNoBacksteps(targetPath, fldPath)...)
}

var supportedMountPropagations = sets.New(corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)

func validateVolumeMounts(mounts []corev1.VolumeMount, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountpoints := sets.New[string]()
	for i, mnt := range mounts {
		idxPath := fldPath.Index(i)
		if mnt.Name == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		} else if _, ok := vols[mnt.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(idxPath.Child("name"), mnt.Name))
		}
		if mnt.MountPath == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("mountPath"), ""))
		}
		if mountpoints.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("mountPath"), mnt.MountPath, "must be unique"))
		}
		mountpoints.Insert(mnt.MountPath)
		if mnt.SubPath != "" {
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPath, idxPath.Child("subPath"))...)
		}
		if mnt.SubPathExpr != "" {
			if mnt.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("subPathExpr"), mnt.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPathExpr, idxPath.Child("subPathExpr"))...)
		}
		if mnt.MountPropagation != nil && !supportedMountPropagations.Has(*mnt.MountPropagation) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("mountPropagation"), *mnt.MountPropagation, sets.List(supportedMountPropagations)))
		}
	}
	return allErrs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, mounts []corev1.VolumeMount, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	devicePaths := sets.New[string]()
	mountNames := sets.New[string]()
	for _, m := range mounts {
		mountNames.Insert(m.Name)
	}
	for i, dev := range devices {
		idxPath := fldPath.Index(i)
		if dev.Name == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		}
		src, ok := vols[dev.Name]
		switch {
		case !ok:
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "must match the name of a persistentVolumeClaim"))
		case src.PersistentVolumeClaim == nil && src.Ephemeral == nil:
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if dev.DevicePath == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("devicePath"), ""))
		}
		if devicePaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("devicePath"), dev.DevicePath, "must be unique"))
		}
		devicePaths.Insert(dev.DevicePath)
		if mountNames.Has(dev.Name) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "must not already exist in volumeMounts"))
		}
	}
	return allErrs
}
