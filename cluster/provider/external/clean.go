package external

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Removed counts the deletes Clean sent, by kind.
type Removed map[string]int

func (r Removed) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%d %s", r[k], k))
	}
	return strings.Join(parts, ", ")
}

// labelled is one kind of object Clean removes: how to list what carries
// the selector (every namespace) and how to delete one.
type labelled struct {
	kind string
	list func(ctx context.Context, sel string) ([]metav1.Object, error)
	del  func(ctx context.Context, ns, name string) error
}

// cleanPoll is how long Clean waits between passes.
var cleanPoll = 500 * time.Millisecond

// Clean deletes every object that carries the label selector sel
// (provider.RunLabel=<run>, or provider.RunLabel for every run):
// Deployments and ReplicaSets first (their pods are collected with them),
// then Services, pods and namespaces, in passes until nothing that carries
// it is left or ctx ends. It lists by the selector and deletes only what it
// listed, so it never touches an object without the label; a namespace
// that carries it goes with whatever is in it (kstep created it). Objects
// already being deleted are waited for, not deleted again.
func Clean(ctx context.Context, cs kubernetes.Interface, sel string) (Removed, error) {
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	kinds := []labelled{
		{"Deployment", func(ctx context.Context, sel string) ([]metav1.Object, error) {
			l, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: sel})
			return objects(err, func() []metav1.Object { return ptrs(l.Items) })
		}, func(ctx context.Context, ns, n string) error { return cs.AppsV1().Deployments(ns).Delete(ctx, n, opts) }},
		{"ReplicaSet", func(ctx context.Context, sel string) ([]metav1.Object, error) {
			l, err := cs.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{LabelSelector: sel})
			return objects(err, func() []metav1.Object { return ptrs(l.Items) })
		}, func(ctx context.Context, ns, n string) error { return cs.AppsV1().ReplicaSets(ns).Delete(ctx, n, opts) }},
		{"Service", func(ctx context.Context, sel string) ([]metav1.Object, error) {
			l, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{LabelSelector: sel})
			return objects(err, func() []metav1.Object { return ptrs(l.Items) })
		}, func(ctx context.Context, ns, n string) error { return cs.CoreV1().Services(ns).Delete(ctx, n, opts) }},
		{"Pod", func(ctx context.Context, sel string) ([]metav1.Object, error) {
			l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
			return objects(err, func() []metav1.Object { return ptrs(l.Items) })
		}, func(ctx context.Context, ns, n string) error { return cs.CoreV1().Pods(ns).Delete(ctx, n, opts) }},
		{"Namespace", func(ctx context.Context, sel string) ([]metav1.Object, error) {
			l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
			return objects(err, func() []metav1.Object { return ptrs(l.Items) })
		}, func(ctx context.Context, _, n string) error { return cs.CoreV1().Namespaces().Delete(ctx, n, opts) }},
	}
	removed := Removed{}
	for {
		left := 0
		var lastLeft string
		for _, k := range kinds {
			objs, err := k.list(ctx, sel)
			if err != nil {
				return removed, fmt.Errorf("clean %s: list %ss: %w", sel, k.kind, err)
			}
			for _, o := range objs {
				left++
				lastLeft = k.kind + " " + path(o)
				if o.GetDeletionTimestamp() != nil {
					continue
				}
				switch err := k.del(ctx, o.GetNamespace(), o.GetName()); {
				case err == nil:
					removed[k.kind]++
				case apierrors.IsNotFound(err), apierrors.IsConflict(err):
					// gone already, or being deleted
				default:
					return removed, fmt.Errorf("clean %s: delete %s %s: %w", sel, k.kind, path(o), err)
				}
			}
		}
		if left == 0 {
			return removed, nil
		}
		select {
		case <-ctx.Done():
			return removed, fmt.Errorf("clean %s: %d objects still there (%s, ...): %w", sel, left, lastLeft, ctx.Err())
		case <-time.After(cleanPoll):
		}
	}
}

func path(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func objects(err error, items func() []metav1.Object) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	return items(), nil
}

func ptrs[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}
