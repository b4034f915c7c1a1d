package admission

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// LimitRange defaulting and bounds, as upstream's LimitRanger: a new pod's
// containers get the Container items' default limits and requests where
// they set none; then every container (and the pod as a whole, for Pod
// items) must lie within min, max and maxLimitRequestRatio.

// ApplyLimitRangeDefaults sets the default requests and limits of every
// Container item on the containers and init containers that lack them.
func ApplyLimitRangeDefaults(pod *corev1.Pod, ranges []*corev1.LimitRange) {
	for _, lr := range ranges {
		for _, it := range lr.Spec.Limits {
			if it.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for i := range cs {
					r := &cs[i].Resources
					r.Limits = fill(r.Limits, it.Default)
					r.Requests = fill(r.Requests, it.DefaultRequest)
				}
			}
		}
	}
}

func fill(have, defaults corev1.ResourceList) corev1.ResourceList {
	for k, v := range defaults {
		if _, ok := have[k]; ok {
			continue
		}
		if have == nil {
			have = corev1.ResourceList{}
		}
		have[k] = v.DeepCopy()
	}
	return have
}

// ValidateLimitRanges returns upstream's messages for every bound a pod
// breaks; none means it fits.
func ValidateLimitRanges(pod *corev1.Pod, ranges []*corev1.LimitRange) []string {
	var errs []string
	for _, lr := range ranges {
		for _, it := range lr.Spec.Limits {
			switch it.Type {
			case corev1.LimitTypeContainer:
				for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
					for i := range cs {
						errs = append(errs, checkBounds(it, "Container", cs[i].Resources.Requests, cs[i].Resources.Limits)...)
					}
				}
			case corev1.LimitTypePod:
				req, lim := podTotals(pod)
				errs = append(errs, checkBounds(it, "Pod", req, lim)...)
			}
		}
	}
	return errs
}

// podTotals sums the containers' requests and limits, taking the largest
// init container where it is larger (init containers run one at a time).
func podTotals(pod *corev1.Pod) (req, lim corev1.ResourceList) {
	req, lim = corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		add(req, c.Resources.Requests)
		add(lim, c.Resources.Limits)
	}
	for _, c := range pod.Spec.InitContainers {
		maxOf(req, c.Resources.Requests)
		maxOf(lim, c.Resources.Limits)
	}
	return req, lim
}

func add(sum, l corev1.ResourceList) {
	for k, v := range l {
		q := sum[k]
		q.Add(v)
		sum[k] = q
	}
}

func maxOf(m, l corev1.ResourceList) {
	for k, v := range l {
		if q, ok := m[k]; !ok || v.Cmp(q) > 0 {
			m[k] = v.DeepCopy()
		}
	}
}

func checkBounds(it corev1.LimitRangeItem, kind string, req, lim corev1.ResourceList) []string {
	var errs []string
	for _, k := range sortedNames(it.Min) {
		min := it.Min[k]
		r, rok := req[k]
		l, lok := lim[k]
		switch {
		case !rok:
			errs = append(errs, fmt.Sprintf("minimum %s usage per %s is %s.  No request is specified", k, kind, min.String()))
		case r.Cmp(min) < 0:
			errs = append(errs, fmt.Sprintf("minimum %s usage per %s is %s, but request is %s", k, kind, min.String(), r.String()))
		}
		if lok && l.Cmp(min) < 0 {
			errs = append(errs, fmt.Sprintf("minimum %s usage per %s is %s, but limit is %s", k, kind, min.String(), l.String()))
		}
	}
	for _, k := range sortedNames(it.Max) {
		max := it.Max[k]
		r, rok := req[k]
		l, lok := lim[k]
		switch {
		case !lok:
			errs = append(errs, fmt.Sprintf("maximum %s usage per %s is %s.  No limit is specified", k, kind, max.String()))
		case l.Cmp(max) > 0:
			errs = append(errs, fmt.Sprintf("maximum %s usage per %s is %s, but limit is %s", k, kind, max.String(), l.String()))
		}
		if rok && r.Cmp(max) > 0 {
			errs = append(errs, fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", k, kind, max.String(), r.String()))
		}
	}
	for _, k := range sortedNames(it.MaxLimitRequestRatio) {
		ratio := it.MaxLimitRequestRatio[k]
		r, rok := req[k]
		l, lok := lim[k]
		if !lok || !rok || r.IsZero() {
			if lok && !rok {
				continue // the request defaults to the limit: ratio 1
			}
			if !lok {
				errs = append(errs, fmt.Sprintf("%s max limit to request ratio per %s is %s, but no limit is specified", k, kind, ratio.String()))
			}
			continue
		}
		got := float64(l.MilliValue()) / float64(r.MilliValue())
		if got > float64(ratio.MilliValue())/1000 {
			errs = append(errs, fmt.Sprintf("%s max limit to request ratio per %s is %s, but provided ratio is %f", k, kind, ratio.String(), got))
		}
	}
	return errs
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
