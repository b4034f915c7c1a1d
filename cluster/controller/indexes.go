package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Indexes the controllers add to the shared informers, so that a sync
// touches the objects it concerns and not every object in the namespace.
// Without them the ReplicaSet controller read every pod of the namespace on
// each sync and the Endpoints controller matched every Service against each
// pod event: O(n²) in a namespace of thousands, which left the Endpoints
// controller tens of seconds behind on the nightly profile.
const (
	// PodsByController: pods under their controller's UID, orphans (no
	// controller) under OrphansIn(namespace).
	PodsByController = "kstep/pods-by-controller"
	// PodsByLabel: pods under LabelKey(namespace, key, value) for each of
	// their labels.
	PodsByLabel = "kstep/pods-by-label"
	// ServicesBySelector: Services under LabelKey(namespace, key, value) of
	// one pair of their selector, the one with the smallest key. A Service
	// selects a pod only if the pod carries every pair, that one included,
	// so looking up each of the pod's labels finds it; indexed under every
	// pair, a label all the pods share (kstep.dev/job) put every Service of
	// the namespace in one bucket, and each pod event matched them all: 29 %
	// of the controller-manager's CPU at 2,000 Services.
	ServicesBySelector = "kstep/services-by-selector"
	// PodsByNode: pods under their spec.nodeName (unscheduled pods are not
	// indexed).
	PodsByNode = "kstep/pods-by-node"
	// EndpointSlicesByService: EndpointSlices under ns/<their
	// kubernetes.io/service-name label> (slices without it are not
	// indexed), whoever manages them.
	EndpointSlicesByService = "kstep/endpointslices-by-service"
)

// OrphansIn is the PodsByController key of a namespace's pods without a
// controller.
func OrphansIn(ns string) string { return "orphan/" + ns }

// LabelKey is the PodsByLabel and ServicesBySelector key of one label.
func LabelKey(ns, k, v string) string { return ns + "/" + k + "=" + v }

// MustIndex adds to inf those of the named indexes it lacks. Controllers
// share informers, so each asks for what it reads and the first one adds
// it. Only a started informer refuses, and the manager builds every
// controller before it starts any informer: a refusal is a programming
// error, and it panics.
func MustIndex(inf cache.SharedIndexInformer, names ...string) {
	if err := addIndexes(inf, names...); err != nil {
		panic(fmt.Sprintf("indexes %v: %v", names, err))
	}
}

func addIndexes(inf cache.SharedIndexInformer, names ...string) error {
	have := inf.GetIndexer().GetIndexers()
	add := cache.Indexers{}
	for _, n := range names {
		if _, ok := have[n]; ok {
			continue
		}
		fn, ok := indexFuncs[n]
		if !ok {
			return fmt.Errorf("unknown index %q", n)
		}
		add[n] = fn
	}
	if len(add) == 0 {
		return nil
	}
	return inf.AddIndexers(add)
}

var indexFuncs = map[string]cache.IndexFunc{
	PodsByController: func(obj any) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		if ref := metav1.GetControllerOf(p); ref != nil {
			return []string{string(ref.UID)}, nil
		}
		return []string{OrphansIn(p.Namespace)}, nil
	},
	PodsByLabel: func(obj any) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		return labelKeys(p.Namespace, p.Labels), nil
	},
	PodsByNode: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	},
	EndpointSlicesByService: func(obj any) ([]string, error) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return nil, nil
		}
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
			return []string{s.Namespace + "/" + svc}, nil
		}
		return nil, nil
	},
	ServicesBySelector: func(obj any) ([]string, error) {
		s, ok := obj.(*corev1.Service)
		if !ok {
			return nil, nil
		}
		if k, ok := smallestKey(s.Spec.Selector); ok {
			return []string{LabelKey(s.Namespace, k, s.Spec.Selector[k])}, nil
		}
		return nil, nil
	},
}

// smallestKey is the smallest key of m, false for an empty m.
func smallestKey(m map[string]string) (string, bool) {
	var k string
	for key := range m {
		if k == "" || key < k {
			k = key
		}
	}
	return k, len(m) > 0
}

func labelKeys(ns string, m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, LabelKey(ns, k, v))
	}
	return out
}

// PodsSelectedBy returns the pods of ns that selector (a Service's
// map selector, non-empty) selects, through the PodsByLabel index: only the
// pods carrying one of its pairs are matched.
func PodsSelectedBy(idx cache.Indexer, ns string, selector map[string]string) ([]*corev1.Pod, error) {
	// Any one pair narrows the candidates; the smallest key keeps it
	// deterministic.
	k, _ := smallestKey(selector)
	objs, err := idx.ByIndex(PodsByLabel, LabelKey(ns, k, selector[k]))
	if err != nil {
		return nil, err
	}
	sel := labels.SelectorFromValidatedSet(selector)
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// ServicesSelecting returns the Services of the pod's namespace whose
// selector selects the pod, through the ServicesBySelector index: each
// Service is under one pair, so it comes up at most once.
func ServicesSelecting(idx cache.Indexer, pod *corev1.Pod) []*corev1.Service {
	var out []*corev1.Service
	set := labels.Set(pod.Labels)
	for k, v := range pod.Labels {
		objs, err := idx.ByIndex(ServicesBySelector, LabelKey(pod.Namespace, k, v))
		if err != nil {
			return nil
		}
		for _, o := range objs {
			s, ok := o.(*corev1.Service)
			if !ok {
				continue
			}
			if labels.SelectorFromValidatedSet(s.Spec.Selector).Matches(set) {
				out = append(out, s)
			}
		}
	}
	return out
}

// PodsOn returns the pods bound to node, through the PodsByNode index.
func PodsOn(idx cache.Indexer, node string) ([]*corev1.Pod, error) {
	objs, err := idx.ByIndex(PodsByNode, node)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out, nil
}
