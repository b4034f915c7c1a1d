package apiserver

import (
	"crypto/rand"
	"reflect"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// The strategy is what the apiserver itself decides about an object, beside
// the client's intent: system metadata, which parts a subresource may touch,
// generation. Every served type has Spec and/or Status fields or neither;
// they are reached by reflection so one strategy serves every kind.

func structField(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj).Elem().FieldByName(name)
	return v
}

// copyField sets dst.<name> = src.<name> when the type has that field.
func copyField(dst, src runtime.Object, name string) {
	d, s := structField(dst, name), structField(src, name)
	if d.IsValid() && s.IsValid() {
		d.Set(s)
	}
}

// zeroField resets obj.<name> when the type has that field.
func zeroField(obj runtime.Object, name string) {
	if f := structField(obj, name); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}

func fieldEqual(a, b runtime.Object, name string) bool {
	fa, fb := structField(a, name), structField(b, name)
	if !fa.IsValid() || !fb.IsValid() {
		return true
	}
	return apiequality.Semantic.DeepEqual(fa.Interface(), fb.Interface())
}

func hasSpec(obj runtime.Object) bool { return structField(obj, "Spec").IsValid() }

// nameSuffix is upstream's alphabet for generateName: no vowels, no
// look-alikes, so generated names never spell words or confuse readers.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = nameAlphabet[int(b[i])%len(nameAlphabet)]
	}
	return string(b)
}

// SchedulingGatedMessage is upstream's message of the PodScheduled=False
// condition a pod created with scheduling gates gets.
const SchedulingGatedMessage = "Scheduling is blocked due to non-empty scheduling gates"

// prepareForCreate fills the system fields of a new object.
func prepareForCreate(r *resource, obj runtime.Object, now metav1.Time) {
	m := objectMeta(obj)
	if m.Name == "" && m.GenerateName != "" {
		m.Name = m.GenerateName + randomSuffix(5)
	}
	m.UID = types.UID(uuid.NewUUID())
	m.CreationTimestamp = now
	m.ResourceVersion = ""
	m.DeletionTimestamp = nil
	m.DeletionGracePeriodSeconds = nil
	m.Generation = 0
	if hasSpec(obj) {
		m.Generation = 1
	}
	if !r.namespaced {
		m.Namespace = ""
	}
	m.SelfLink = ""
	switch o := obj.(type) {
	case *schedulingv1.PriorityClass:
		m.Generation = 1 // upstream's PrepareForCreate
	case *corev1.Pod:
		// A new pod is Pending; a client cannot create it bound (pods/binding
		// is the scheduler's write) unless it names a node itself.
		o.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(&o.Spec)}
		if o.Spec.NodeName != "" {
			o.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		} else if len(o.Spec.SchedulingGates) > 0 {
			// Upstream's applySchedulingGatedCondition: the scheduler
			// leaves a gated pod alone, so the apiserver says why it waits.
			o.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonSchedulingGated, Message: SchedulingGatedMessage}}
		}
	case *corev1.Namespace:
		o.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
		if len(o.Spec.Finalizers) == 0 {
			o.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
		}
	case *corev1.Node:
		// Nodes report their own status; keep what the kubelet sends.
	case *corev1.PodTemplate:
		m.Generation = 1 // upstream's: a template's changes count
	case *batchv1.Job:
		o.Status = batchv1.JobStatus{}
		if o.Spec.ManualSelector == nil || !*o.Spec.ManualSelector {
			generateJobSelector(o)
		}
	default:
		if r.status {
			zeroField(obj, "Status")
		}
	}
}

// prepareForUpdate carries over what a write through `sub` may not change.
func prepareForUpdate(r *resource, obj, old runtime.Object, sub string) {
	m, om := objectMeta(obj), objectMeta(old)
	if m.UID == "" {
		m.UID = om.UID
	}
	m.CreationTimestamp = om.CreationTimestamp
	m.DeletionTimestamp = om.DeletionTimestamp
	m.DeletionGracePeriodSeconds = om.DeletionGracePeriodSeconds
	m.Generation = om.Generation
	m.SelfLink = ""
	if m.ResourceVersion == "" {
		m.ResourceVersion = om.ResourceVersion // an unconditional update
	}
	if svc, ok := obj.(*corev1.Service); ok {
		keepAllocatedIPs(svc, old.(*corev1.Service))
	}
	if ns, ok := obj.(*corev1.Namespace); ok {
		// spec.finalizers change only through namespaces/finalize, and
		// finalize changes nothing else.
		oldNS := old.(*corev1.Namespace)
		if sub == "finalize" {
			fin := ns.Spec.Finalizers
			oldNS.DeepCopyInto(ns)
			ns.Spec.Finalizers = fin
			return
		}
		ns.Spec.Finalizers = oldNS.Spec.Finalizers
	}
	if pt, ok := obj.(*corev1.PodTemplate); ok && !apiequality.Semantic.DeepEqual(pt.Template, old.(*corev1.PodTemplate).Template) {
		m.Generation = om.Generation + 1
	}
	switch sub {
	case "binding":
		// pods/binding sets spec.nodeName and the PodScheduled condition.
	case "status":
		// Status writes change status (and, as upstream, labels and
		// annotations); never the spec or the owners.
		copyField(obj, old, "Spec")
		m.OwnerReferences = om.OwnerReferences
		m.Finalizers = om.Finalizers
	case "":
		if r.status {
			copyField(obj, old, "Status")
		}
		if hasSpec(obj) && !fieldEqual(obj, old, "Spec") {
			m.Generation = om.Generation + 1
		}
	}
}

// qosClass is upstream's classification: Guaranteed when every container
// has equal cpu and memory requests and limits, BestEffort when none has
// any, Burstable otherwise.
func qosClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	any, guaranteed := false, true
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			any = true
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, lok := c.Resources.Limits[res]
			q, qok := c.Resources.Requests[res]
			if !lok || (qok && q.Cmp(l) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// semanticallyEqual reports a no-op write: nothing the client sees would
// change, so nothing is written and no watch event is caused.
func semanticallyEqual(a, b runtime.Object) bool {
	ma, mb := objectMeta(a), objectMeta(b)
	rva, rvb := ma.ResourceVersion, mb.ResourceVersion
	mfa, mfb := ma.ManagedFields, mb.ManagedFields
	ma.ResourceVersion, mb.ResourceVersion = "", ""
	ma.ManagedFields, mb.ManagedFields = nil, nil
	eq := apiequality.Semantic.DeepEqual(a, b)
	ma.ResourceVersion, mb.ResourceVersion = rva, rvb
	ma.ManagedFields, mb.ManagedFields = mfa, mfb
	return eq
}

// keepAllocatedIPs carries the allocated cluster IP over an update that does
// not mention it (kubectl apply of a manifest without one), as upstream does.
func keepAllocatedIPs(svc, old *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
		return
	}
	if svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = old.Spec.IPFamilies
	}
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
	}
}

// generateJobSelector is upstream's generateSelector for a Job without
// spec.manualSelector: the template is labelled with the Job's uid and
// name (the batch.kubernetes.io keys and the legacy ones), and the
// selector, when unset, matches the uid. A label the user set is kept;
// validation then reports a mismatch.
func generateJobSelector(j *batchv1.Job) {
	uid, name := string(j.UID), j.Name
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		batchv1.ControllerUidLabel: uid, "controller-uid": uid,
		batchv1.JobNameLabel: name, "job-name": name,
	} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = v
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: uid}}
	}
}
