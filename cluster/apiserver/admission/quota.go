package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceQuota for pods, as upstream's quota evaluator for core/v1 pods:
// pods (and count/pods), requests.cpu (and cpu), requests.memory (and
// memory), limits.cpu, limits.memory. Pods in a terminal phase use nothing.
// Other resource names in spec.hard are not tracked by kstep.

// Tracked reports whether kstep computes usage of a quota resource name.
func Tracked(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourcePods, "count/pods", corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory:
		return true
	}
	return false
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

// Usage sums the usage of pods, restricted to the names of hard (every
// tracked name of hard appears, zero if unused).
func Usage(pods []*corev1.Pod, hard corev1.ResourceList) corev1.ResourceList {
	used := corev1.ResourceList{}
	for k := range hard {
		if Tracked(k) {
			used[k] = *resource.NewQuantity(0, hard[k].Format)
		}
	}
	for _, p := range pods {
		for k, v := range PodUsage(p) {
			if q, ok := used[k]; ok {
				q.Add(v)
				used[k] = q
			}
		}
	}
	return used
}

// CheckQuota refuses a pod whose usage on top of used would exceed hard,
// with upstream's message, or which does not specify a resource the quota
// limits. quotaName names the quota in the message.
func CheckQuota(quotaName string, hard, used corev1.ResourceList, pod *corev1.Pod) error {
	if msg := missing(hard, pod); msg != "" {
		return fmt.Errorf("failed quota: %s: must specify %s", quotaName, msg)
	}
	req := PodUsage(pod)
	var over []corev1.ResourceName
	for _, k := range sortedNames(hard) {
		r, ok := req[k]
		if !ok || !Tracked(k) {
			continue
		}
		u := used[k]
		u.Add(r)
		if u.Cmp(hard[k]) > 0 {
			over = append(over, k)
		}
	}
	if len(over) == 0 {
		return nil
	}
	return fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
		quotaName, render(over, req), render(over, used), render(over, hard))
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
