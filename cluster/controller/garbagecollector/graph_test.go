package garbagecollector

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// A graph over plain indexers and a fake clientset: the caches are what the
// test puts in them, the "apiserver" what it puts in the fake, so the two
// can disagree the way a lagging informer and etcd do.

type world struct {
	cs    *fake.Clientset
	pods  *kind
	rss   *kind
	deps  *kind
	cms   *kind
	nss   *kind
	graph *graph
	gc    *Controller
}

func testKind[T metav1.Object](gvk schema.GroupVersionKind, namespaced bool, client func(ns string) typedClient[T]) *kind {
	return &kind{
		gk:         gvk.GroupKind(),
		namespaced: namespaced,
		indexer:    cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{ownerIndex: ownerUIDs}),
		client:     func(ns string) objectClient { return typed[T]{client(ns)} },
	}
}

func newWorld(t *testing.T, live ...runtime.Object) *world {
	t.Helper()
	cs := fake.NewClientset(live...)
	var c kubernetes.Interface = cs
	w := &world{cs: cs}
	w.pods = testKind(corev1.SchemeGroupVersion.WithKind("Pod"), true, func(ns string) typedClient[*corev1.Pod] { return c.CoreV1().Pods(ns) })
	w.rss = testKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), true, func(ns string) typedClient[*appsv1.ReplicaSet] { return c.AppsV1().ReplicaSets(ns) })
	w.deps = testKind(appsv1.SchemeGroupVersion.WithKind("Deployment"), true, func(ns string) typedClient[*appsv1.Deployment] { return c.AppsV1().Deployments(ns) })
	w.cms = testKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"), true, func(ns string) typedClient[*corev1.ConfigMap] { return c.CoreV1().ConfigMaps(ns) })
	w.nss = testKind(corev1.SchemeGroupVersion.WithKind("Namespace"), false, func(string) typedClient[*corev1.Namespace] { return c.CoreV1().Namespaces() })
	w.graph = newGraph([]*kind{w.pods, w.rss, w.deps, w.cms, w.nss})
	w.gc = &Controller{
		graph: w.graph,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[objectKey]()),
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	w.gc.syncHandler = w.gc.sync
	t.Cleanup(w.gc.queue.ShutDown)
	return w
}

// cache puts objects in the informer caches only.
func (w *world) cache(t *testing.T, k *kind, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k.indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
}

func ref(kind, name, uid string, block bool) metav1.OwnerReference {
	apiVersion := "v1"
	if kind == "ReplicaSet" || kind == "Deployment" {
		apiVersion = "apps/v1"
	}
	r := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
	if block {
		r.BlockOwnerDeletion = ptr.To(true)
	}
	return r
}

func pod(name, uid string, owners ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), OwnerReferences: owners}}
}

func rs(name, uid string, owners ...metav1.OwnerReference) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), OwnerReferences: owners}}
}

func deleting(obj metav1.Object, finalizers ...string) {
	now := metav1.NewTime(time.Now())
	obj.SetDeletionTimestamp(&now)
	obj.SetFinalizers(finalizers)
}

func names(ds []dependent, err error) []string {
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.kind.gk.Kind+"/"+d.obj.GetName())
	}
	sort.Strings(out)
	return out
}

func TestGraphResolution(t *testing.T) {
	w := newWorld(t)
	w.cache(t, w.deps, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", UID: "d1"}})
	w.cache(t, w.rss, rs("rs", "r1", ref("Deployment", "d", "d1", true)))
	w.cache(t, w.pods,
		pod("p1", "p1", ref("ReplicaSet", "rs", "r1", true)),
		pod("p2", "p2", ref("ReplicaSet", "rs", "r1", false)),
		pod("p3", "p3", ref("ReplicaSet", "rs", "r1", false), ref("ConfigMap", "cm", "c1", false)),
		pod("lone", "p4"))
	w.cache(t, w.cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm2", UID: "c2",
		OwnerReferences: []metav1.OwnerReference{ref("Namespace", "ns", "n1", false)}}})

	if got, want := names(w.graph.dependents("r1")), []string{"Pod/p1", "Pod/p2", "Pod/p3"}; !slices.Equal(got, want) {
		t.Errorf("dependents(rs) = %v, want %v", got, want)
	}
	if got, want := names(w.graph.dependents("d1")), []string{"ReplicaSet/rs"}; !slices.Equal(got, want) {
		t.Errorf("dependents(deployment) = %v, want %v", got, want)
	}
	if got, want := names(w.graph.dependents("c1")), []string{"Pod/p3"}; !slices.Equal(got, want) {
		t.Errorf("dependents(configmap) = %v, want %v (an owner absent from the cache still has dependents)", got, want)
	}
	if got := names(w.graph.dependents("p4")); len(got) != 0 {
		t.Errorf("dependents(lone pod) = %v", got)
	}
	for uid, want := range map[types.UID]dependentsState{"r1": {blocking: true}, "d1": {blocking: true}, "c1": {}} {
		if got, err := w.graph.dependentsState(uid); err != nil || got != want {
			t.Errorf("dependentsState(%s) = %+v %v, want %+v", uid, got, err, want)
		}
	}
	for _, tc := range []struct {
		ref  metav1.OwnerReference
		key  objectKey
		want bool
	}{
		{ref("ReplicaSet", "rs", "r1", false), objectKey{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, "ns", "rs"}, true},
		{ref("ConfigMap", "cm", "c1", false), objectKey{schema.GroupKind{Kind: "ConfigMap"}, "ns", "cm"}, true},
		{ref("Namespace", "ns", "n1", false), objectKey{schema.GroupKind{Kind: "Namespace"}, "", "ns"}, true},
		{metav1.OwnerReference{APIVersion: "extensions/v1beta1", Kind: "ReplicaSet", Name: "x"}, objectKey{}, false},
		{metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "x"}, objectKey{}, false},
		{metav1.OwnerReference{APIVersion: "a/b/c", Kind: "Pod", Name: "x"}, objectKey{}, false},
	} {
		key, ok := w.graph.ownerKey("ns", tc.ref)
		if ok != tc.want || key != tc.key {
			t.Errorf("ownerKey(%s %s) = %v %v, want %v %v", tc.ref.APIVersion, tc.ref.Kind, key, ok, tc.key, tc.want)
		}
	}
}

// A cache without the owner index must stop the collector, not look like
// an owner without dependents.
func TestGraphWithoutIndex(t *testing.T) {
	w := newWorld(t)
	w.pods.indexer = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	owner := rs("rs", "r1")
	deleting(owner, metav1.FinalizerOrphanDependents)
	w.cache(t, w.rss, owner)
	if _, err := w.graph.dependents("r1"); err == nil {
		t.Fatal("dependents: want an error")
	}
	if err := w.gc.sync(context.Background(), objectKey{w.rss.gk, "ns", "rs"}); err == nil {
		t.Fatal("sync: want an error")
	}
	if len(w.cs.Actions()) != 0 {
		t.Fatalf("actions = %v, want none", w.cs.Actions())
	}
}

func deletes(cs *fake.Clientset, resource string) []clienttesting.DeleteActionImpl {
	var out []clienttesting.DeleteActionImpl
	for _, a := range cs.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok && d.Resource.Resource == resource {
			out = append(out, d)
		}
	}
	return out
}

func gets(cs *fake.Clientset, resource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// An owner missing from the cache is read live before anything is deleted.
func TestSyncVerifiesOwnerLive(t *testing.T) {
	ctx := context.Background()
	p := pod("p", "pu", ref("ReplicaSet", "rs", "r1", true))
	t.Run("cache behind a live owner", func(t *testing.T) {
		w := newWorld(t, rs("rs", "r1"), p.DeepCopy())
		w.cache(t, w.pods, p.DeepCopy())
		if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "p"}); err != nil {
			t.Fatal(err)
		}
		if n := gets(w.cs, "replicasets"); n != 1 {
			t.Errorf("live reads of the owner = %d, want 1", n)
		}
		if d := deletes(w.cs, "pods"); len(d) != 0 {
			t.Fatalf("pod deleted though its owner exists: %+v", d)
		}
	})
	t.Run("owner gone", func(t *testing.T) {
		w := newWorld(t, p.DeepCopy())
		w.cache(t, w.pods, p.DeepCopy())
		if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "p"}); err != nil {
			t.Fatal(err)
		}
		d := deletes(w.cs, "pods")
		if len(d) != 1 {
			t.Fatalf("deletes = %+v, want one", d)
		}
		o := d[0].DeleteOptions
		if o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationBackground ||
			o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "pu" {
			t.Fatalf("delete options = %+v, want Background with UID precondition pu", o)
		}
		if _, err := w.cs.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("pod still there: %v", err)
		}
	})
	t.Run("name reused by another owner", func(t *testing.T) {
		w := newWorld(t, rs("rs", "r2"), p.DeepCopy())
		w.cache(t, w.pods, p.DeepCopy())
		w.cache(t, w.rss, rs("rs", "r2"))
		if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "p"}); err != nil {
			t.Fatal(err)
		}
		if len(deletes(w.cs, "pods")) != 1 {
			t.Fatal("pod whose owner's name now holds another UID: want deleted")
		}
	})
	t.Run("unfollowed owner kind is never gone", func(t *testing.T) {
		q := pod("q", "qu", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "w1"})
		w := newWorld(t, q.DeepCopy())
		w.cache(t, w.pods, q)
		if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "q"}); err != nil {
			t.Fatal(err)
		}
		if len(w.cs.Actions()) != 0 {
			t.Fatalf("actions = %v, want none", w.cs.Actions())
		}
	})
}

func TestSyncOrphan(t *testing.T) {
	ctx := context.Background()
	owner := rs("rs", "r1")
	deleting(owner, metav1.FinalizerOrphanDependents)
	p1 := pod("p1", "u1", ref("ReplicaSet", "rs", "r1", true))
	p2 := pod("p2", "u2", ref("ReplicaSet", "rs", "r1", true), ref("ConfigMap", "cm", "c1", false))
	w := newWorld(t, owner.DeepCopy(), p1.DeepCopy(), p2.DeepCopy())
	w.cache(t, w.rss, owner)
	w.cache(t, w.pods, p1, p2)
	if err := w.gc.sync(ctx, objectKey{w.rss.gk, "ns", "rs"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"p1": 0, "p2": 1} {
		got, err := w.cs.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.OwnerReferences) != want {
			t.Errorf("%s owners = %+v, want %d left", name, got.OwnerReferences, want)
		}
	}
	if len(deletes(w.cs, "pods")) != 0 {
		t.Error("orphaned pods must not be deleted")
	}
	got, err := w.cs.AppsV1().ReplicaSets("ns").Get(ctx, "rs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasFinalizer(got, metav1.FinalizerOrphanDependents) {
		t.Errorf("orphan finalizer still on the owner: %v", got.Finalizers)
	}
}

func TestSyncForeground(t *testing.T) {
	ctx := context.Background()
	owner := rs("rs", "r1", ref("Deployment", "d", "d1", true))
	deleting(owner, metav1.FinalizerDeleteDependents)
	blocker := pod("p1", "u1", ref("ReplicaSet", "rs", "r1", true))
	loose := pod("p2", "u2", ref("ReplicaSet", "rs", "r1", false))
	w := newWorld(t, owner.DeepCopy(), blocker.DeepCopy(), loose.DeepCopy())
	w.cache(t, w.rss, owner)
	w.cache(t, w.pods, blocker, loose)
	rsKey := objectKey{w.rss.gk, "ns", "rs"}

	if err := w.gc.sync(ctx, rsKey); err != nil {
		t.Fatal(err)
	}
	if n := w.gc.queue.Len(); n != 2 {
		t.Errorf("queued dependents = %d, want 2", n)
	}
	if got, _ := w.cs.AppsV1().ReplicaSets("ns").Get(ctx, "rs", metav1.GetOptions{}); !hasFinalizer(got, metav1.FinalizerDeleteDependents) {
		t.Fatal("finalizer removed while a blocking dependent exists")
	}
	// Each dependent sees its owner waiting and goes, in background (they
	// have no dependents of their own).
	for _, name := range []string{"p1", "p2"} {
		if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", name}); err != nil {
			t.Fatal(err)
		}
	}
	if d := deletes(w.cs, "pods"); len(d) != 2 || *d[0].DeleteOptions.PropagationPolicy != metav1.DeletePropagationBackground {
		t.Fatalf("pod deletes = %+v", d)
	}
	// The cache catches up with the deletions; the owner's finalizer goes.
	_ = w.pods.indexer.Delete(blocker)
	_ = w.pods.indexer.Delete(loose)
	if err := w.gc.sync(ctx, rsKey); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.cs.AppsV1().ReplicaSets("ns").Get(ctx, "rs", metav1.GetOptions{}); hasFinalizer(got, metav1.FinalizerDeleteDependents) {
		t.Fatalf("finalizer kept with no dependent left: %v", got.Finalizers)
	}
}

// A dependent of a foreground owner that itself has blocking dependents is
// deleted in the foreground, so the wait reaches the bottom of the chain.
func TestSyncForegroundChain(t *testing.T) {
	ctx := context.Background()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", UID: "d1"}}
	deleting(d, metav1.FinalizerDeleteDependents)
	r := rs("rs", "r1", ref("Deployment", "d", "d1", true))
	w := newWorld(t, d.DeepCopy(), r.DeepCopy())
	w.cache(t, w.deps, d)
	w.cache(t, w.rss, r)
	w.cache(t, w.pods, pod("p", "u", ref("ReplicaSet", "rs", "r1", true)))
	if err := w.gc.sync(ctx, objectKey{w.rss.gk, "ns", "rs"}); err != nil {
		t.Fatal(err)
	}
	del := deletes(w.cs, "replicasets")
	if len(del) != 1 || *del[0].DeleteOptions.PropagationPolicy != metav1.DeletePropagationForeground {
		t.Fatalf("replicaset deletes = %+v, want one in Foreground", del)
	}
}

// The member that closes a ring (its owner waits, and so does a dependent
// blocking it) unblocks its reference to the waiting owner, then is
// deleted in the foreground; the owner, no longer blocked, loses its
// finalizer; judged again, the member has nothing left to unblock.
func TestSyncRingUnblocks(t *testing.T) {
	ctx := context.Background()
	p1 := pod("p1", "u1", ref("Pod", "p3", "u3", true))
	deleting(p1, metav1.FinalizerDeleteDependents)
	p2 := pod("p2", "u2", ref("Pod", "p1", "u1", true))
	deleting(p2, metav1.FinalizerDeleteDependents)
	p3 := pod("p3", "u3", ref("Pod", "p2", "u2", true))
	w := newWorld(t, p1.DeepCopy(), p2.DeepCopy(), p3.DeepCopy())
	w.cache(t, w.pods, p1, p2, p3)
	// A deleted pod stays, as one whose kubelet has not finished it (the
	// fake would drop it at once, finalizers or not).
	w.cs.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	p3Key := objectKey{w.pods.gk, "ns", "p3"}

	if err := w.gc.sync(ctx, p3Key); err != nil {
		t.Fatal(err)
	}
	var patches, dels []string
	for _, a := range w.cs.Actions() {
		switch a := a.(type) {
		case clienttesting.PatchActionImpl:
			patches = append(patches, a.Name)
		case clienttesting.DeleteActionImpl:
			dels = append(dels, a.Name+" "+string(*a.DeleteOptions.PropagationPolicy))
		}
	}
	if !slices.Equal(patches, []string{"p3"}) || !slices.Equal(dels, []string{"p3 Foreground"}) {
		t.Fatalf("patches %v, deletes %v; want p3 unblocked then deleted in Foreground", patches, dels)
	}
	live, err := w.cs.CoreV1().Pods("ns").Get(ctx, "p3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := live.OwnerReferences; len(r) != 1 || r[0].UID != "u2" || r[0].BlockOwnerDeletion == nil || *r[0].BlockOwnerDeletion {
		t.Fatalf("p3 owners = %+v, want its reference to p2 kept, unblocked", r)
	}

	// The cache catches up: p2 no longer waits for p3 and loses its
	// finalizer.
	if err := w.pods.indexer.Update(live); err != nil {
		t.Fatal(err)
	}
	if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "p2"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.cs.CoreV1().Pods("ns").Get(ctx, "p2", metav1.GetOptions{}); hasFinalizer(got, metav1.FinalizerDeleteDependents) {
		t.Fatalf("p2 still waits: finalizers %v", got.Finalizers)
	}

	// p3 judged again (say its deletion lost a race): nothing to unblock,
	// no second patch.
	w.cs.ClearActions()
	if err := w.gc.sync(ctx, p3Key); err != nil {
		t.Fatal(err)
	}
	for _, a := range w.cs.Actions() {
		if a.GetVerb() == "patch" {
			t.Fatalf("p3 patched again: %+v", a)
		}
	}
}

// A foreground deletion of an object owning itself is not held by that
// reference.
func TestSyncSelfOwned(t *testing.T) {
	ctx := context.Background()
	p := pod("p", "u", ref("Pod", "p", "u", true))
	deleting(p, metav1.FinalizerDeleteDependents)
	w := newWorld(t, p.DeepCopy())
	w.cache(t, w.pods, p)
	if err := w.gc.sync(ctx, objectKey{w.pods.gk, "ns", "p"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.cs.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); hasFinalizer(got, metav1.FinalizerDeleteDependents) {
		t.Fatalf("self-owned pod still waits on itself: finalizers %v", got.Finalizers)
	}
}
