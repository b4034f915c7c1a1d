package controller

import (
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// informer is an unstarted informer with the named indexes (asked for
// twice, as two controllers sharing it would) holding objs.
func informer(t testing.TB, example runtime.Object, indexes []string, objs ...runtime.Object) cache.Indexer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, example, 0, cache.Indexers{})
	MustIndex(inf, indexes...)
	MustIndex(inf, indexes...)
	for _, o := range objs {
		if err := inf.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return inf.GetIndexer()
}

func pod(ns, name, node string, owner types.UID, l map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}, Spec: corev1.PodSpec{NodeName: node}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: owner, Controller: ptr.To(true)}}
	}
	return p
}

func podNames(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

// The indexes find exactly what a scan of the namespace with the same
// predicate would.
func TestIndexes(t *testing.T) {
	pods := []runtime.Object{
		pod("a", "web-0", "n1", "rs-1", map[string]string{"app": "web"}),
		pod("a", "web-1", "n2", "rs-1", map[string]string{"app": "web", "tier": "front"}),
		pod("a", "orphan", "", "", map[string]string{"app": "web", "tier": "back"}),
		pod("a", "db-0", "n1", "rs-2", map[string]string{"app": "db"}),
		pod("b", "web-0", "n1", "rs-3", map[string]string{"app": "web"}),
		pod("b", "orphan", "n2", "", map[string]string{"app.kubernetes.io/name": "x=y"}),
	}
	idx := informer(t, &corev1.Pod{}, []string{PodsByController, PodsByLabel, PodsByNode}, pods...)

	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"rs-1", []string{"a/web-0", "a/web-1"}},
		{OrphansIn("a"), []string{"a/orphan"}},
		{OrphansIn("b"), []string{"b/orphan"}},
		{"rs-9", nil},
	} {
		objs, err := idx.ByIndex(PodsByController, tc.key)
		if err != nil {
			t.Fatal(err)
		}
		var got []*corev1.Pod
		for _, o := range objs {
			got = append(got, o.(*corev1.Pod))
		}
		if !slices.Equal(podNames(got), tc.want) {
			t.Errorf("controller %s: %v, want %v", tc.key, podNames(got), tc.want)
		}
	}

	for _, tc := range []struct {
		ns   string
		sel  map[string]string
		want []string
	}{
		{"a", map[string]string{"app": "web"}, []string{"a/orphan", "a/web-0", "a/web-1"}},
		{"a", map[string]string{"app": "web", "tier": "front"}, []string{"a/web-1"}},
		{"a", map[string]string{"tier": "front", "app": "db"}, nil},
		{"b", map[string]string{"app": "web"}, []string{"b/web-0"}},
		{"b", map[string]string{"app.kubernetes.io/name": "x=y"}, []string{"b/orphan"}},
	} {
		got, err := PodsSelectedBy(idx, tc.ns, tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(podNames(got), tc.want) {
			t.Errorf("%s %v selects %v, want %v", tc.ns, tc.sel, podNames(got), tc.want)
		}
	}

	on, err := PodsOn(idx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/db-0", "a/web-0", "b/web-0"}; !slices.Equal(podNames(on), want) {
		t.Errorf("pods on n1: %v, want %v", podNames(on), want)
	}

	svc := func(ns, name string, sel map[string]string) runtime.Object {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Selector: sel}}
	}
	svcs := informer(t, &corev1.Service{}, []string{ServicesBySelector},
		svc("a", "web", map[string]string{"app": "web"}),
		svc("a", "front", map[string]string{"app": "web", "tier": "front"}),
		svc("a", "back", map[string]string{"app": "web", "tier": "back"}),
		svc("a", "db", map[string]string{"app": "db"}),
		svc("a", "headless", nil),
		svc("b", "web", map[string]string{"app": "web"}),
	)
	var got []string
	for _, s := range ServicesSelecting(svcs, pods[1].(*corev1.Pod)) {
		got = append(got, s.Namespace+"/"+s.Name)
	}
	slices.Sort(got)
	if want := []string{"a/front", "a/web"}; !slices.Equal(got, want) {
		t.Errorf("services selecting a/web-1: %v, want %v", got, want)
	}
}

// BenchmarkServicesSelecting is one pod event's lookup in a namespace of
// 1,000 Services that all select a label every pod carries (the load
// generator's kstep.dev/job) beside one of their own: the cost must not
// grow with the Services that share the common label.
func BenchmarkServicesSelecting(b *testing.B) {
	var objs []runtime.Object
	for i := range 1000 {
		name := "rs-" + strconv.Itoa(i)
		objs = append(objs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: name},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name, "kstep.dev/job": "saturation"}}})
	}
	svcs := informer(b, &corev1.Service{}, []string{ServicesBySelector}, objs...)
	p := pod("load", "rs-500-x", "", "", map[string]string{"app": "rs-500", "kstep.dev/job": "saturation"})
	b.ReportAllocs()
	for b.Loop() {
		if got := ServicesSelecting(svcs, p); len(got) != 1 || got[0].Name != "rs-500" {
			b.Fatalf("services selecting the pod: %d", len(got))
		}
	}
}
