package validation

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error messages shared with upstream.
const (
	fieldImmutableErrorMsg = apimachineryvalidation.FieldImmutableErrorMsg
	isNegativeErrorMsg     = apimachineryvalidation.IsNegativeErrorMsg
	isNotIntegerErrorMsg   = `must be an integer`
	isNotPositiveErrorMsg  = `must be greater than zero`
)

// ValidateCreate validates a whole object about to be created. It expects the
// object to have been defaulted (defaults.Apply) and its namespace filled
// from the request URL. Name generation may not have happened yet: an empty
// name is accepted when generateName is set (and generateName is validated as
// a prefix).
//
// Kinds this package does not know are not validated (nil is returned).
func ValidateCreate(obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *corev1.Namespace:
		errs = validateNamespace(o)
	case *corev1.Pod:
		errs = validatePodCreate(o)
	case *corev1.Node:
		errs = validateNode(o)
	case *corev1.Service:
		errs = validateService(o)
	case *corev1.Endpoints:
		errs = validateEndpoints(o)
	case *discoveryv1.EndpointSlice:
		errs = validateEndpointSlice(o)
	case *corev1.Event:
		errs = validateCoreEvent(o)
	case *eventsv1.Event:
		errs = validateEventsV1Create(o)
	case *corev1.ConfigMap:
		errs = validateConfigMap(o)
	case *corev1.Secret:
		errs = validateSecret(o)
	case *corev1.ServiceAccount:
		errs = validateServiceAccount(o)
	case *coordinationv1.Lease:
		errs = validateLease(o)
	case *corev1.ReplicationController:
		errs = validateReplicationController(o)
	case *appsv1.ReplicaSet:
		errs = validateReplicaSet(o)
	case *appsv1.Deployment:
		errs = validateDeployment(o)
	case *appsv1.DaemonSet:
		errs = validateDaemonSet(o)
	case *appsv1.StatefulSet:
		errs = validateStatefulSet(o)
	case *appsv1.ControllerRevision:
		errs = validateControllerRevision(o)
	case *batchv1.Job:
		errs = validateJob(o)
	case *batchv1.CronJob:
		errs = validateCronJob(o)
	case *corev1.PodTemplate:
		errs = validatePodTemplate(o)
	case *policyv1.PodDisruptionBudget:
		errs = validatePodDisruptionBudget(o)
	case *autoscalingv1.Scale:
		errs = validateScale(o)
	case *corev1.Binding:
		errs = validateBinding(o)
	case *corev1.ResourceQuota:
		errs = validateResourceQuota(o)
	case *corev1.LimitRange:
		errs = validateLimitRange(o)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		errs = validateMutatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		errs = validateValidatingWebhookConfiguration(o)
	case *schedulingv1.PriorityClass:
		errs = validatePriorityClass(o)
	}
	return dedupe(append(errs, validateNesting(obj)...))
}

// ValidateUpdate validates an update of the main resource: obj is the new
// object (defaulted), old the stored one. On top of validating obj as a whole
// it enforces the update rules: immutable metadata (name, namespace, uid,
// creationTimestamp, ...), resourceVersion present, and each kind's immutable
// fields (pod spec, selectors, clusterIP, ...).
//
// obj and old must be of the same Go type; a mismatch is reported as an
// internal error.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *corev1.Namespace:
		errs = update(o, old, validateNamespaceUpdate)
	case *corev1.Pod:
		errs = update(o, old, validatePodUpdate)
	case *corev1.Node:
		errs = update(o, old, func(n, o *corev1.Node) field.ErrorList {
			return append(validateNode(n), validateNodeUpdate(n, o)...)
		})
	case *corev1.Service:
		errs = update(o, old, validateServiceUpdate)
	case *corev1.Endpoints:
		errs = update(o, old, validateEndpointsUpdate)
	case *discoveryv1.EndpointSlice:
		errs = update(o, old, validateEndpointSliceUpdate)
	case *corev1.Event:
		errs = update(o, old, validateCoreEventUpdate)
	case *eventsv1.Event:
		errs = update(o, old, validateEventsV1Update)
	case *corev1.ConfigMap:
		errs = update(o, old, validateConfigMapUpdate)
	case *corev1.Secret:
		errs = update(o, old, validateSecretUpdate)
	case *corev1.ServiceAccount:
		errs = update(o, old, validateServiceAccountUpdate)
	case *coordinationv1.Lease:
		errs = update(o, old, validateLeaseUpdate)
	case *corev1.ReplicationController:
		errs = update(o, old, validateReplicationControllerUpdate)
	case *appsv1.ReplicaSet:
		errs = update(o, old, validateReplicaSetUpdate)
	case *appsv1.Deployment:
		errs = update(o, old, validateDeploymentUpdate)
	case *appsv1.DaemonSet:
		errs = update(o, old, validateDaemonSetUpdate)
	case *appsv1.StatefulSet:
		errs = update(o, old, validateStatefulSetUpdate)
	case *appsv1.ControllerRevision:
		errs = update(o, old, validateControllerRevisionUpdate)
	case *batchv1.Job:
		errs = update(o, old, validateJobUpdate)
	case *batchv1.CronJob:
		errs = update(o, old, validateCronJobUpdate)
	case *corev1.PodTemplate:
		errs = update(o, old, validatePodTemplateUpdate)
	case *policyv1.PodDisruptionBudget:
		errs = update(o, old, validatePodDisruptionBudgetUpdate)
	case *autoscalingv1.Scale:
		// Like upstream's /scale handlers: only the Scale itself is checked,
		// the metadata belongs to the scaled object.
		errs = update(o, old, func(n, _ *autoscalingv1.Scale) field.ErrorList { return validateScale(n) })
	case *corev1.Binding:
		errs = update(o, old, func(n, _ *corev1.Binding) field.ErrorList { return validateBinding(n) })
	case *corev1.ResourceQuota:
		errs = update(o, old, func(n, o *corev1.ResourceQuota) field.ErrorList {
			return append(validateResourceQuota(n), validateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta)...)
		})
	case *corev1.LimitRange:
		errs = update(o, old, func(n, o *corev1.LimitRange) field.ErrorList {
			return append(validateLimitRange(n), validateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta)...)
		})
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		errs = update(o, old, func(n, o *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
			return append(validateMutatingWebhookConfiguration(n), validateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta)...)
		})
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		errs = update(o, old, func(n, o *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
			return append(validateValidatingWebhookConfiguration(n), validateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta)...)
		})
	case *schedulingv1.PriorityClass:
		errs = update(o, old, validatePriorityClassUpdate)
	}
	return dedupe(append(errs, validateNesting(obj)...))
}

// ValidateStatusUpdate validates a write to the /status subresource: obj is
// the new object, old the stored one. Metadata immutability is enforced and
// the status is checked; the spec is expected to have been reset to old's by
// the caller (as upstream's status strategies do), but a pod's spec.nodeName
// change is still rejected here.
//
// Kinds without a status subresource fall back to ValidateUpdate.
func ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *corev1.Namespace:
		errs = update(o, old, validateNamespaceStatusUpdate)
	case *corev1.Pod:
		errs = update(o, old, validatePodStatusUpdate)
	case *corev1.Node:
		errs = update(o, old, validateNodeUpdate)
	case *corev1.Service:
		errs = update(o, old, validateServiceStatusUpdate)
	case *corev1.ReplicationController:
		errs = update(o, old, validateReplicationControllerStatusUpdate)
	case *appsv1.ReplicaSet:
		errs = update(o, old, validateReplicaSetStatusUpdate)
	case *appsv1.Deployment:
		errs = update(o, old, validateDeploymentStatusUpdate)
	case *appsv1.DaemonSet:
		errs = update(o, old, validateDaemonSetStatusUpdate)
	case *appsv1.StatefulSet:
		errs = update(o, old, validateStatefulSetStatusUpdate)
	case *batchv1.Job:
		errs = update(o, old, validateJobStatusUpdate)
	case *batchv1.CronJob:
		errs = update(o, old, validateCronJobStatusUpdate)
	case *policyv1.PodDisruptionBudget:
		errs = update(o, old, validatePodDisruptionBudgetStatusUpdate)
	default:
		return ValidateUpdate(obj, old)
	}
	return dedupe(append(errs, validateNesting(obj)...))
}

// update type-asserts old to the type of obj and runs fn.
func update[T runtime.Object](obj T, old runtime.Object, fn func(obj, old T) field.ErrorList) field.ErrorList {
	o, ok := old.(T)
	if !ok {
		return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("old object is %T, want %T", old, obj))}
	}
	return fn(obj, o)
}

// dedupe drops errors identical to an earlier one. Metadata is validated both
// by the update rules and by the whole-object rules (as upstream does), which
// would otherwise report, say, a bad label twice.
func dedupe(errs field.ErrorList) field.ErrorList {
	if len(errs) < 2 {
		return errs
	}
	seen := sets.New[string]()
	out := errs[:0:0]
	for _, e := range errs {
		key := e.Type.String() + "\x00" + e.Error()
		if seen.Has(key) {
			continue
		}
		seen.Insert(key)
		out = append(out, e)
	}
	return out
}

var metadataPath = field.NewPath("metadata")

// validateObjectMeta validates metadata on create. Unlike upstream, which
// validates after name generation, an empty name with a generateName is
// accepted: generateName has already been validated as a prefix by
// apimachinery, and the storage layer generates the name.
func validateObjectMeta(meta *metav1.ObjectMeta, namespaced bool, nameFn apimachineryvalidation.ValidateNameFunc) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(meta, namespaced, nameFn, metadataPath)
	if meta.Name == "" && meta.GenerateName != "" {
		namePath := metadataPath.Child("name").String()
		kept := errs[:0]
		for _, e := range errs {
			if e.Type == field.ErrorTypeRequired && e.Field == namePath {
				continue
			}
			kept = append(kept, e)
		}
		errs = kept
	}
	for i := range meta.Finalizers {
		errs = append(errs, validateKubeFinalizerName(meta.Finalizers[i], metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// validateObjectMetaUpdate validates metadata on update: name, namespace, uid,
// creationTimestamp, deletionTimestamp are immutable, resourceVersion must be
// set, generation may not decrease, labels/annotations must be valid.
func validateObjectMetaUpdate(newMeta, oldMeta *metav1.ObjectMeta) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(newMeta, oldMeta, metadataPath)
	for i := range newMeta.Finalizers {
		errs = append(errs, validateKubeFinalizerName(newMeta.Finalizers[i], metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

var standardFinalizers = sets.New(
	string(corev1.FinalizerKubernetes),
	metav1.FinalizerOrphanDependents,
	metav1.FinalizerDeleteDependents,
)

// validateKubeFinalizerName checks that an unqualified finalizer is one of
// Kubernetes' own.
func validateKubeFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

func validateImmutableField(newVal, oldVal any, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(newVal, oldVal, fldPath)
}

func validateNonnegativeField(value int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(value, fldPath)
}
