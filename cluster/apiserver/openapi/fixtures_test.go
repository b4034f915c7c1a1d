package openapi

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func res(group, version, kind, plural string, namespaced bool, obj, list runtime.Object, subs ...Subresource) Resource {
	return Resource{
		GVK:    schema.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Plural: plural, Namespaced: namespaced, Verbs: allVerbs,
		Object: obj, List: list, Subresources: subs,
	}
}

var (
	statusSub = Subresource{Name: "status", Verbs: []string{"get", "patch", "update"}}
	scaleSub  = Subresource{Name: "scale", GVK: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
		Verbs: []string{"get", "patch", "update"}}
)

// testResources is a realistic set of built-in resources, like the one the
// apiserver wires.
func testResources() []Resource {
	return []Resource{
		res("", "v1", "Pod", "pods", true, &corev1.Pod{}, &corev1.PodList{}, statusSub,
			Subresource{Name: "binding", GVK: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Verbs: []string{"create"}},
			Subresource{Name: "eviction", GVK: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}},
			Subresource{Name: "log", Verbs: []string{"get"}},
			Subresource{Name: "exec", Verbs: []string{"get", "create"}},
		),
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Plural: "bindings", Namespaced: true,
			Verbs: []string{"create"}, Object: &corev1.Binding{}},
		res("", "v1", "Service", "services", true, &corev1.Service{}, &corev1.ServiceList{}, statusSub),
		res("", "v1", "ConfigMap", "configmaps", true, &corev1.ConfigMap{}, &corev1.ConfigMapList{}),
		res("", "v1", "Secret", "secrets", true, &corev1.Secret{}, &corev1.SecretList{}),
		res("", "v1", "Namespace", "namespaces", false, &corev1.Namespace{}, &corev1.NamespaceList{}, statusSub),
		res("", "v1", "Node", "nodes", false, &corev1.Node{}, &corev1.NodeList{}, statusSub),
		res("", "v1", "ServiceAccount", "serviceaccounts", true, &corev1.ServiceAccount{}, &corev1.ServiceAccountList{}),
		res("", "v1", "Endpoints", "endpoints", true, &corev1.Endpoints{}, &corev1.EndpointsList{}),
		res("", "v1", "Event", "events", true, &corev1.Event{}, &corev1.EventList{}),
		res("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaimList{}, statusSub),
		res("", "v1", "PersistentVolume", "persistentvolumes", false, &corev1.PersistentVolume{}, &corev1.PersistentVolumeList{}, statusSub),
		res("", "v1", "ResourceQuota", "resourcequotas", true, &corev1.ResourceQuota{}, &corev1.ResourceQuotaList{}, statusSub),
		res("", "v1", "LimitRange", "limitranges", true, &corev1.LimitRange{}, &corev1.LimitRangeList{}),
		res("apps", "v1", "Deployment", "deployments", true, &appsv1.Deployment{}, &appsv1.DeploymentList{}, statusSub, scaleSub),
		res("apps", "v1", "ReplicaSet", "replicasets", true, &appsv1.ReplicaSet{}, &appsv1.ReplicaSetList{}, statusSub, scaleSub),
		res("apps", "v1", "StatefulSet", "statefulsets", true, &appsv1.StatefulSet{}, &appsv1.StatefulSetList{}, statusSub, scaleSub),
		res("apps", "v1", "DaemonSet", "daemonsets", true, &appsv1.DaemonSet{}, &appsv1.DaemonSetList{}, statusSub),
		res("apps", "v1", "ControllerRevision", "controllerrevisions", true, &appsv1.ControllerRevision{}, &appsv1.ControllerRevisionList{}),
		res("batch", "v1", "Job", "jobs", true, &batchv1.Job{}, &batchv1.JobList{}, statusSub),
		res("batch", "v1", "CronJob", "cronjobs", true, &batchv1.CronJob{}, &batchv1.CronJobList{}, statusSub),
		res("coordination.k8s.io", "v1", "Lease", "leases", true, &coordinationv1.Lease{}, &coordinationv1.LeaseList{}),
		res("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true, &discoveryv1.EndpointSlice{}, &discoveryv1.EndpointSliceList{}),
		res("networking.k8s.io", "v1", "Ingress", "ingresses", true, &networkingv1.Ingress{}, &networkingv1.IngressList{}, statusSub),
		res("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true, &networkingv1.NetworkPolicy{}, &networkingv1.NetworkPolicyList{}),
		res("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, &policyv1.PodDisruptionBudget{}, &policyv1.PodDisruptionBudgetList{}, statusSub),
		res("rbac.authorization.k8s.io", "v1", "Role", "roles", true, &rbacv1.Role{}, &rbacv1.RoleList{}),
		res("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true, &rbacv1.RoleBinding{}, &rbacv1.RoleBindingList{}),
		res("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false, &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleList{}),
		res("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false, &rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRoleBindingList{}),
		res("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, &storagev1.StorageClass{}, &storagev1.StorageClassList{}),
	}
}
