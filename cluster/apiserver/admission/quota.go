package admission

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceQuota, as upstream's quota evaluators: every object of every
// served resource counts as one "count/<resource>.<group>" ("count/<resource>"
// in the core group); the standard names count what upstream's core
// evaluators do: pods (and count/pods), requests.cpu (and cpu),
// requests.memory (and memory), limits.cpu, limits.memory of pods that are
// not terminal; services, services.nodeports, services.loadbalancers;
// configmaps, secrets, replicationcontrollers, resourcequotas;
// persistentvolumeclaims and requests.storage (and their
// <class>.storageclass.storage.k8s.io/ forms). Other names in spec.hard are
// not tracked by kstep.

var (
	core             = func(r string) schema.GroupResource { return schema.GroupResource{Resource: r} }
	podsResource     = core("pods")
	servicesResource = core("services")
	pvcResource      = core("persistentvolumeclaims")
	// standardNames are the names that count a resource other than by
	// count/: what each of upstream's core evaluators reports.
	standardNames = map[corev1.ResourceName]schema.GroupResource{
		corev1.ResourcePods: podsResource, corev1.ResourceCPU: podsResource, corev1.ResourceMemory: podsResource,
		corev1.ResourceRequestsCPU: podsResource, corev1.ResourceRequestsMemory: podsResource,
		corev1.ResourceLimitsCPU: podsResource, corev1.ResourceLimitsMemory: podsResource,
		corev1.ResourceServices: servicesResource, corev1.ResourceServicesNodePorts: servicesResource,
		corev1.ResourceServicesLoadBalancers: servicesResource,
		corev1.ResourceConfigMaps:            core("configmaps"), corev1.ResourceSecrets: core("secrets"),
		corev1.ResourceReplicationControllers: core("replicationcontrollers"),
		corev1.ResourceQuotas:                 core("resourcequotas"),
		corev1.ResourcePersistentVolumeClaims: pvcResource, corev1.ResourceRequestsStorage: pvcResource,
	}
)

// storageClassSuffix is the domain of the per-StorageClass PVC names:
// <class>.storageclass.storage.k8s.io/requests.storage.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// CountName is the object-count quota name of a resource:
// count/<resource>.<group>, or count/<resource> in the core group.
func CountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// CountedResource is the resource whose objects a quota name counts, and
// false for a name kstep does not track. count/<resource>.<group> names
// any resource: whether it is served is the caller's to know.
func CountedResource(name corev1.ResourceName) (schema.GroupResource, bool) {
	if gr, ok := standardNames[name]; ok {
		return gr, true
	}
	if rest, ok := strings.CutPrefix(string(name), "count/"); ok && rest != "" {
		r, g, _ := strings.Cut(rest, ".")
		if r == "" {
			return schema.GroupResource{}, false
		}
		return schema.GroupResource{Group: g, Resource: r}, true
	}
	if i := strings.Index(string(name), storageClassSuffix); i > 0 {
		switch corev1.ResourceName(string(name)[i+len(storageClassSuffix):]) {
		case corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage:
			return pvcResource, true
		}
	}
	return schema.GroupResource{}, false
}

// Tracked reports whether kstep computes usage of a quota resource name.
func Tracked(name corev1.ResourceName) bool {
	_, ok := CountedResource(name)
	return ok
}

// ObjectUsage is what one object of resource gr uses of every quota name
// that counts it.
func ObjectUsage(gr schema.GroupResource, obj runtime.Object) corev1.ResourceList {
	one := func() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }
	switch o := obj.(type) {
	case *corev1.Pod:
		return PodUsage(o)
	case *corev1.Service:
		return serviceUsage(o)
	case *corev1.PersistentVolumeClaim:
		return pvcUsage(o)
	}
	u := corev1.ResourceList{CountName(gr): one()}
	for name, r := range standardNames {
		if r == gr && !strings.Contains(string(name), ".") {
			u[name] = one() // configmaps, secrets, replicationcontrollers, resourcequotas
		}
	}
	return u
}

// serviceUsage is upstream's service evaluator: every Service counts; a
// NodePort or LoadBalancer one takes a node port per port (a
// LoadBalancer that allocates none: the ports that name one).
func serviceUsage(svc *corev1.Service) corev1.ResourceList {
	u := corev1.ResourceList{
		corev1.ResourceServices:     *resource.NewQuantity(1, resource.DecimalSI),
		CountName(servicesResource): *resource.NewQuantity(1, resource.DecimalSI),
	}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		u[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		u[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		u[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return u
}

// pvcUsage is upstream's PersistentVolumeClaim evaluator.
func pvcUsage(pvc *corev1.PersistentVolumeClaim) corev1.ResourceList {
	u := corev1.ResourceList{
		corev1.ResourcePersistentVolumeClaims: *resource.NewQuantity(1, resource.DecimalSI),
		CountName(pvcResource):                *resource.NewQuantity(1, resource.DecimalSI),
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class != "" {
		u[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		u[corev1.ResourceRequestsStorage] = q.DeepCopy()
		if class != "" {
			u[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = q.DeepCopy()
		}
	}
	return u
}

// PodCounts reports whether a pod counts against quota: terminal pods do not.
func PodCounts(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// PodUsage is what one pod uses of every tracked quota resource.
func PodUsage(pod *corev1.Pod) corev1.ResourceList {
	if !PodCounts(pod) {
		return corev1.ResourceList{}
	}
	req, lim := podTotals(pod)
	u := corev1.ResourceList{
		corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI),
		"count/pods":        *resource.NewQuantity(1, resource.DecimalSI),
	}
	if q, ok := req[corev1.ResourceCPU]; ok {
		u[corev1.ResourceRequestsCPU], u[corev1.ResourceCPU] = q.DeepCopy(), q.DeepCopy()
	}
	if q, ok := req[corev1.ResourceMemory]; ok {
		u[corev1.ResourceRequestsMemory], u[corev1.ResourceMemory] = q.DeepCopy(), q.DeepCopy()
	}
	if q, ok := lim[corev1.ResourceCPU]; ok {
		u[corev1.ResourceLimitsCPU] = q.DeepCopy()
	}
	if q, ok := lim[corev1.ResourceMemory]; ok {
		u[corev1.ResourceLimitsMemory] = q.DeepCopy()
	}
	return u
}

// Usage sums the usage of objects of resource gr, restricted to the names
// of hard that count gr (every such name appears, zero if unused).
func Usage(gr schema.GroupResource, objs []runtime.Object, hard corev1.ResourceList) corev1.ResourceList {
	used := corev1.ResourceList{}
	for k := range hard {
		if r, ok := CountedResource(k); ok && r == gr {
			used[k] = *resource.NewQuantity(0, hard[k].Format)
		}
	}
	if len(used) == 0 {
		return used
	}
	for _, o := range objs {
		for k, v := range ObjectUsage(gr, o) {
			if q, ok := used[k]; ok {
				q.Add(v)
				used[k] = q
			}
		}
	}
	return used
}

// Requested is what a new object of resource gr takes of the names of
// hard: only the names it uses, and none that are zero.
func Requested(gr schema.GroupResource, obj runtime.Object, hard corev1.ResourceList) corev1.ResourceList {
	req := corev1.ResourceList{}
	for k, v := range ObjectUsage(gr, obj) {
		if _, ok := hard[k]; ok && !v.IsZero() {
			req[k] = v
		}
	}
	return req
}

// Constraints refuses a new object that does not state what the quota
// limits: a pod must request (or limit) every compute resource named.
func Constraints(quotaName string, hard corev1.ResourceList, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	if msg := missing(hard, pod); msg != "" {
		return fmt.Errorf("failed quota: %s: must specify %s", quotaName, msg)
	}
	return nil
}

// Charge adds requested to used and returns the new usage, or upstream's
// refusal when that would exceed hard. A name missing from used counts
// as zero. quotaName names the quota in the message.
func Charge(quotaName string, hard, used, requested corev1.ResourceList) (corev1.ResourceList, error) {
	next := used.DeepCopy()
	if next == nil {
		next = corev1.ResourceList{}
	}
	var over []corev1.ResourceName
	for _, k := range sortedNames(requested) {
		u := next[k]
		u.Add(requested[k])
		next[k] = u
		if u.Cmp(hard[k]) > 0 {
			over = append(over, k)
		}
	}
	if len(over) == 0 {
		return next, nil
	}
	zero := corev1.ResourceList{}
	for _, k := range over {
		if _, ok := used[k]; !ok {
			zero[k] = resource.Quantity{}
		} else {
			zero[k] = used[k]
		}
	}
	return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
		quotaName, render(over, requested), render(over, zero), render(over, hard))
}

// missing lists, upstream's way, the compute resources the quota limits
// that some container does not state ("limits.cpu for: c1,c2").
func missing(hard corev1.ResourceList, pod *corev1.Pod) string {
	var parts []string
	for _, k := range sortedNames(hard) {
		var res corev1.ResourceName
		limits := false
		switch k {
		case corev1.ResourceCPU, corev1.ResourceRequestsCPU:
			res = corev1.ResourceCPU
		case corev1.ResourceMemory, corev1.ResourceRequestsMemory:
			res = corev1.ResourceMemory
		case corev1.ResourceLimitsCPU:
			res, limits = corev1.ResourceCPU, true
		case corev1.ResourceLimitsMemory:
			res, limits = corev1.ResourceMemory, true
		default:
			continue
		}
		var names []string
		for _, c := range pod.Spec.Containers {
			l := c.Resources.Requests
			if limits {
				l = c.Resources.Limits
			}
			if _, ok := l[res]; !ok {
				names = append(names, c.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, string(k)+" for: "+strings.Join(names, ","))
		}
	}
	return strings.Join(parts, "; ")
}

func render(names []corev1.ResourceName, l corev1.ResourceList) string {
	out := make([]string, 0, len(names))
	for _, k := range names {
		q := l[k]
		out = append(out, string(k)+"="+q.String())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// Matches reports whether a quota counts an object of resource gr: a
// quota without scopes counts everything; one with scopes (spec.scopes,
// spec.scopeSelector) counts only the pods that match them all, as
// upstream's pod evaluator (its other evaluators support no scope).
func Matches(q *corev1.ResourceQuota, gr schema.GroupResource, obj runtime.Object) bool {
	sels := scopeSelectors(q)
	if len(sels) == 0 {
		return true
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || gr != podsResource {
		return false
	}
	for _, s := range sels {
		if !podMatchesScope(pod, s) {
			return false
		}
	}
	return true
}

// Matching is the objects of objs that q counts.
func Matching(q *corev1.ResourceQuota, gr schema.GroupResource, objs []runtime.Object) []runtime.Object {
	if len(scopeSelectors(q)) == 0 {
		return objs
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if Matches(q, gr, o) {
			out = append(out, o)
		}
	}
	return out
}

func scopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// podMatchesScope is upstream's podMatchesScopeFunc.
func podMatchesScope(pod *corev1.Pod, s corev1.ScopedResourceSelectorRequirement) bool {
	switch s.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
	case corev1.ResourceQuotaScopeNotTerminating:
		return pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds < 0
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		switch s.Operator {
		case corev1.ScopeSelectorOpExists:
			return pod.Spec.PriorityClassName != ""
		case corev1.ScopeSelectorOpDoesNotExist:
			return pod.Spec.PriorityClassName == ""
		case corev1.ScopeSelectorOpIn:
			return slices.Contains(s.Values, pod.Spec.PriorityClassName)
		case corev1.ScopeSelectorOpNotIn:
			return !slices.Contains(s.Values, pod.Spec.PriorityClassName)
		}
		return false
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod)
	}
	return false
}

// bestEffort: no container states a cpu or memory request or limit (the
// BestEffort QoS class).
func bestEffort(pod *corev1.Pod) bool {
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := l[name]; ok && !q.IsZero() {
					return false
				}
			}
		}
	}
	return true
}

// crossNamespaceAffinity: a pod (anti-)affinity term names other
// namespaces or selects them.
func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}
