package apiserver

import (
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
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resource describes one served resource: how it is addressed, stored and
// selected. The table below is the whole API surface; adding a resource is
// adding a row.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	singular   string
	namespaced bool
	shortNames []string
	categories []string
	newObj     func() runtime.Object
	newList    func() runtime.Object
	// storeProtobuf: written to etcd as protobuf (Options.StorageMediaType
	// and a type that has it), else as JSON.
	storeProtobuf bool
	// status: the resource has a /status subresource; the main resource's
	// writes keep the stored status, /status writes keep everything else.
	status bool
	// scale: the resource has a /scale subresource (autoscaling/v1 Scale)
	// backed by spec.replicas and status.replicas.
	scale bool
	// binding: pods/binding, the scheduler's write.
	binding bool
	// eviction: pods/eviction (policy/v1 Eviction), a delete that respects
	// PodDisruptionBudgets (eviction.go).
	eviction bool
	// finalize: namespaces/finalize, the namespace controller's write of
	// spec.finalizers (the only way to change them).
	finalize bool
	// connect are the subresources served by proxying to a kubelet
	// (connect.go): pods/log, exec, attach, portforward and nodes/proxy.
	connect []string
	// fields returns the resource-specific selectable fields, in a new
	// map each call (attrsOf adds the metadata ones to it).
	fields func(obj runtime.Object) fields.Set
	// indexField is the field watchers select on exactly often enough to be
	// worth an index in the watch cache (kubelets: spec.nodeName).
	indexField string
	// uncached: no watch cache; reads, lists and watches go to etcd (Events,
	// as upstream's default --watch-cache-sizes has them: a cache would hold
	// and decode every Event written for the rare client that reads them).
	uncached bool
	// storage, when set, is another resource whose stored objects this one
	// serves through a conversion (events.k8s.io/v1 events are core events).
	storage *resource
	convert *conversion
	// pb is the resource's protobuf framing (protobuf.go), nil when its
	// type has none: its clients get JSON.
	pb *protoKinds
}

// conversion maps a served version to and from its storage version.
type conversion struct {
	toStorage   func(runtime.Object) runtime.Object
	fromStorage func(runtime.Object) runtime.Object
}

func (r *resource) gvk() schema.GroupVersionKind { return r.gvr.GroupVersion().WithKind(r.kind) }

// storageName is the resource segment of the etcd key.
func (r *resource) storageName() string {
	if r.storage != nil {
		return r.storage.storageName()
	}
	return r.gvr.Resource
}

// prefix is the etcd prefix of the resource, or of one namespace of it.
func (r *resource) prefix(namespace string) string {
	p := "/registry/" + r.storageName() + "/"
	if r.namespaced && namespace != "" {
		p += namespace + "/"
	}
	return p
}

// key is the etcd key of one object: /registry/<resource>/<namespace>/<name>.
func (r *resource) key(namespace, name string) string {
	if r.namespaced {
		return "/registry/" + r.storageName() + "/" + namespace + "/" + name
	}
	return "/registry/" + r.storageName() + "/" + name
}

func (r *resource) verbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

func (r *resource) subresources() []string {
	var s []string
	if r.status {
		s = append(s, "status")
	}
	if r.scale {
		s = append(s, "scale")
	}
	if r.binding {
		s = append(s, "binding")
	}
	if r.eviction {
		s = append(s, "eviction")
	}
	if r.finalize {
		s = append(s, "finalize")
	}
	return append(s, r.connect...)
}

func podFields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         boolString(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func nodeFields(obj runtime.Object) fields.Set {
	return fields.Set{"spec.unschedulable": boolString(obj.(*corev1.Node).Spec.Unschedulable)}
}

func namespaceFields(obj runtime.Object) fields.Set {
	return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
}

func eventFields(obj runtime.Object) fields.Set {
	e := obj.(*corev1.Event)
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}
}

func secretFields(obj runtime.Object) fields.Set {
	return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
}

func rsFields(obj runtime.Object) fields.Set {
	return fields.Set{"status.replicas": itoa(int64(obj.(*appsv1.ReplicaSet).Status.Replicas))}
}

// jobFields is upstream's JobToSelectableFields: status.successful.
func jobFields(obj runtime.Object) fields.Set {
	return fields.Set{"status.successful": itoa(int64(obj.(*batchv1.Job).Status.Succeeded))}
}

func rcFields(obj runtime.Object) fields.Set {
	return fields.Set{"status.replicas": itoa(int64(obj.(*corev1.ReplicationController).Status.Replicas))}
}

// resources builds the served API. Storage of events.k8s.io events is the
// core events resource.
func resources() []*resource {
	coreEvents := &resource{gvr: corev1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true, shortNames: []string{"ev"},
		newObj: func() runtime.Object { return &corev1.Event{} }, newList: func() runtime.Object { return &corev1.EventList{} }, fields: eventFields,
		uncached: true}
	rs := []*resource{
		{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), kind: "Namespace", shortNames: []string{"ns"}, status: true, finalize: true,
			newObj: func() runtime.Object { return &corev1.Namespace{} }, newList: func() runtime.Object { return &corev1.NamespaceList{} }, fields: namespaceFields},
		{gvr: corev1.SchemeGroupVersion.WithResource("pods"), kind: "Pod", namespaced: true, shortNames: []string{"po"}, categories: []string{"all"},
			status: true, binding: true, eviction: true, indexField: "spec.nodeName", connect: []string{"attach", "exec", "log", "portforward"},
			newObj: func() runtime.Object { return &corev1.Pod{} }, newList: func() runtime.Object { return &corev1.PodList{} }, fields: podFields},
		{gvr: corev1.SchemeGroupVersion.WithResource("nodes"), kind: "Node", shortNames: []string{"no"}, status: true, connect: []string{"proxy"},
			newObj: func() runtime.Object { return &corev1.Node{} }, newList: func() runtime.Object { return &corev1.NodeList{} }, fields: nodeFields},
		{gvr: corev1.SchemeGroupVersion.WithResource("services"), kind: "Service", namespaced: true, shortNames: []string{"svc"}, categories: []string{"all"}, status: true,
			newObj: func() runtime.Object { return &corev1.Service{} }, newList: func() runtime.Object { return &corev1.ServiceList{} }},
		{gvr: corev1.SchemeGroupVersion.WithResource("endpoints"), kind: "Endpoints", namespaced: true, shortNames: []string{"ep"},
			newObj: func() runtime.Object { return &corev1.Endpoints{} }, newList: func() runtime.Object { return &corev1.EndpointsList{} }},
		{gvr: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), kind: "EndpointSlice", namespaced: true,
			newObj: func() runtime.Object { return &discoveryv1.EndpointSlice{} }, newList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} }},
		coreEvents,
		{gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), kind: "ConfigMap", namespaced: true, shortNames: []string{"cm"},
			newObj: func() runtime.Object { return &corev1.ConfigMap{} }, newList: func() runtime.Object { return &corev1.ConfigMapList{} }},
		{gvr: corev1.SchemeGroupVersion.WithResource("secrets"), kind: "Secret", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Secret{} }, newList: func() runtime.Object { return &corev1.SecretList{} }, fields: secretFields},
		{gvr: corev1.SchemeGroupVersion.WithResource("serviceaccounts"), kind: "ServiceAccount", namespaced: true, shortNames: []string{"sa"},
			newObj: func() runtime.Object { return &corev1.ServiceAccount{} }, newList: func() runtime.Object { return &corev1.ServiceAccountList{} }},
		{gvr: coordinationv1.SchemeGroupVersion.WithResource("leases"), kind: "Lease", namespaced: true,
			newObj: func() runtime.Object { return &coordinationv1.Lease{} }, newList: func() runtime.Object { return &coordinationv1.LeaseList{} }},
		{gvr: corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), kind: "ReplicationController", namespaced: true, shortNames: []string{"rc"},
			categories: []string{"all"}, status: true, scale: true, fields: rcFields,
			newObj:  func() runtime.Object { return &corev1.ReplicationController{} },
			newList: func() runtime.Object { return &corev1.ReplicationControllerList{} }},
		{gvr: appsv1.SchemeGroupVersion.WithResource("replicasets"), kind: "ReplicaSet", namespaced: true, shortNames: []string{"rs"}, categories: []string{"all"},
			status: true, scale: true, fields: rsFields,
			newObj: func() runtime.Object { return &appsv1.ReplicaSet{} }, newList: func() runtime.Object { return &appsv1.ReplicaSetList{} }},
		{gvr: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), kind: "PodDisruptionBudget", namespaced: true, shortNames: []string{"pdb"},
			status:  true,
			newObj:  func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			newList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} }},
		{gvr: appsv1.SchemeGroupVersion.WithResource("deployments"), kind: "Deployment", namespaced: true, shortNames: []string{"deploy"}, categories: []string{"all"},
			status: true, scale: true,
			newObj: func() runtime.Object { return &appsv1.Deployment{} }, newList: func() runtime.Object { return &appsv1.DeploymentList{} }},
		// Workloads beyond ReplicaSets and Deployments (#52): their
		// controllers are in cluster/controller.
		{gvr: appsv1.SchemeGroupVersion.WithResource("daemonsets"), kind: "DaemonSet", namespaced: true, shortNames: []string{"ds"}, categories: []string{"all"},
			status: true,
			newObj: func() runtime.Object { return &appsv1.DaemonSet{} }, newList: func() runtime.Object { return &appsv1.DaemonSetList{} }},
		{gvr: appsv1.SchemeGroupVersion.WithResource("statefulsets"), kind: "StatefulSet", namespaced: true, shortNames: []string{"sts"}, categories: []string{"all"},
			status: true, scale: true,
			newObj: func() runtime.Object { return &appsv1.StatefulSet{} }, newList: func() runtime.Object { return &appsv1.StatefulSetList{} }},
		{gvr: appsv1.SchemeGroupVersion.WithResource("controllerrevisions"), kind: "ControllerRevision", namespaced: true,
			newObj:  func() runtime.Object { return &appsv1.ControllerRevision{} },
			newList: func() runtime.Object { return &appsv1.ControllerRevisionList{} }},
		{gvr: batchv1.SchemeGroupVersion.WithResource("jobs"), kind: "Job", namespaced: true, categories: []string{"all"},
			status: true, fields: jobFields,
			newObj: func() runtime.Object { return &batchv1.Job{} }, newList: func() runtime.Object { return &batchv1.JobList{} }},
		{gvr: batchv1.SchemeGroupVersion.WithResource("cronjobs"), kind: "CronJob", namespaced: true, shortNames: []string{"cj"}, categories: []string{"all"},
			status: true,
			newObj: func() runtime.Object { return &batchv1.CronJob{} }, newList: func() runtime.Object { return &batchv1.CronJobList{} }},
		{gvr: corev1.SchemeGroupVersion.WithResource("podtemplates"), kind: "PodTemplate", namespaced: true,
			newObj: func() runtime.Object { return &corev1.PodTemplate{} }, newList: func() runtime.Object { return &corev1.PodTemplateList{} }},
		{gvr: eventsv1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true, shortNames: []string{"ev"},
			newObj: func() runtime.Object { return &eventsv1.Event{} }, newList: func() runtime.Object { return &eventsv1.EventList{} },
			storage: coreEvents, convert: &conversion{toStorage: eventToCore, fromStorage: eventFromCore}},
		// RBAC (rbac.go reads them through their watch caches).
		{gvr: rbacv1.SchemeGroupVersion.WithResource("roles"), kind: "Role", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.Role{} }, newList: func() runtime.Object { return &rbacv1.RoleList{} }},
		{gvr: rbacv1.SchemeGroupVersion.WithResource("rolebindings"), kind: "RoleBinding", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.RoleBinding{} }, newList: func() runtime.Object { return &rbacv1.RoleBindingList{} }},
		{gvr: rbacv1.SchemeGroupVersion.WithResource("clusterroles"), kind: "ClusterRole",
			newObj: func() runtime.Object { return &rbacv1.ClusterRole{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleList{} }},
		{gvr: rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), kind: "ClusterRoleBinding",
			newObj: func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} }},
		// Admission (admission.go reads them through their watch caches).
		{gvr: corev1.SchemeGroupVersion.WithResource("resourcequotas"), kind: "ResourceQuota", namespaced: true, shortNames: []string{"quota"}, status: true,
			newObj: func() runtime.Object { return &corev1.ResourceQuota{} }, newList: func() runtime.Object { return &corev1.ResourceQuotaList{} }},
		{gvr: corev1.SchemeGroupVersion.WithResource("limitranges"), kind: "LimitRange", namespaced: true, shortNames: []string{"limits"},
			newObj: func() runtime.Object { return &corev1.LimitRange{} }, newList: func() runtime.Object { return &corev1.LimitRangeList{} }},
		// Pod priority (priority.go reads them through their watch cache).
		{gvr: priorityClassesGVR, kind: "PriorityClass", shortNames: []string{"pc"},
			newObj: func() runtime.Object { return &schedulingv1.PriorityClass{} }, newList: func() runtime.Object { return &schedulingv1.PriorityClassList{} }},
		{gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), kind: "MutatingWebhookConfiguration",
			newObj:  func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			newList: func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} }},
		{gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), kind: "ValidatingWebhookConfiguration",
			newObj:  func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			newList: func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} }},
	}
	for _, r := range rs {
		r.singular = strings.ToLower(r.kind)
		r.pb = newProtoKinds(r)
	}
	return rs
}

// scaleGVK is the kind of every /scale subresource.
var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// bindingGVK is the kind pods/binding accepts.
var bindingGVK = corev1.SchemeGroupVersion.WithKind("Binding")

// evictionGVK is the kind pods/eviction accepts.
var evictionGVK = policyv1.SchemeGroupVersion.WithKind("Eviction")

// objectMeta returns obj's metadata; every served type has ObjectMeta.
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	return obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}
