package garbagecollector

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ownerIndex indexes every followed object by the UIDs of its owners: the
// edges of the graph, kept by the informers themselves.
const ownerIndex = "kstep.dev/gc-owner-uid"

// kind is one resource the collector follows: its cache (the graph's nodes
// of that kind) and the typed client it verifies and writes through.
type kind struct {
	gk         schema.GroupKind
	namespaced bool
	// informer feeds the cache; nil in tests that fill indexer directly.
	informer cache.SharedIndexInformer
	// indexer is the informer's store, indexed by ownerIndex.
	indexer cache.Indexer
	// client returns the typed client of one namespace ("" when
	// cluster-scoped).
	client func(namespace string) objectClient
}

func (k *kind) String() string { return k.gk.String() }

// scope returns the namespace an object of this kind lives in when it is
// referenced from an object in namespace ns.
func (k *kind) scope(ns string) string {
	if k.namespaced {
		return ns
	}
	return ""
}

// cached returns the object of this kind named ns/name from the cache.
func (k *kind) cached(ns, name string) (metav1.Object, bool) {
	key := name
	if k.namespaced {
		key = ns + "/" + name
	}
	obj, ok, err := k.indexer.GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	return m, err == nil
}

// objectClient is what the collector does to one object through the
// apiserver, whatever its type.
type objectClient interface {
	get(ctx context.Context, name string) (metav1.Object, error)
	delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	// patch returns the object as patched.
	patch(ctx context.Context, name string, pt types.PatchType, data []byte) (metav1.Object, error)
}

// typedClient is the part of every client-go typed client the collector
// uses; PodInterface, ReplicaSetInterface, ... all satisfy it.
type typedClient[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

type typed[T metav1.Object] struct{ c typedClient[T] }

func (t typed[T]) get(ctx context.Context, name string) (metav1.Object, error) {
	obj, err := t.c.Get(ctx, name, metav1.GetOptions{}) // no resourceVersion: a quorum read
	if err != nil {
		return nil, err
	}
	return obj, nil
}

func (t typed[T]) delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return t.c.Delete(ctx, name, opts)
}

func (t typed[T]) patch(ctx context.Context, name string, pt types.PatchType, data []byte) (metav1.Object, error) {
	obj, err := t.c.Patch(ctx, name, pt, data, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

func newKind[T metav1.Object](gvk schema.GroupVersionKind, namespaced bool, inf cache.SharedIndexInformer, client func(ns string) typedClient[T]) *kind {
	// New runs before the factory starts. Should this ever fail, the
	// index is missing and every graph lookup errs (graph.dependents):
	// the collector stalls rather than act on a graph without edges.
	_ = inf.AddIndexers(cache.Indexers{ownerIndex: ownerUIDs})
	return &kind{
		gk:         gvk.GroupKind(),
		namespaced: namespaced,
		informer:   inf,
		indexer:    inf.GetIndexer(),
		client:     func(ns string) objectClient { return typed[T]{client(ns)} },
	}
}

// ownerUIDs is the index function of ownerIndex.
func ownerUIDs(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = string(r.UID)
	}
	return out, nil
}

// followedKinds is every resource kstep serves that can own or be owned,
// one row each. Events are left out: they are the busiest resource, nothing
// owns them and they own nothing; an Event deleted with propagationPolicy
// Orphan or Foreground keeps that finalizer.
func followedKinds(cs kubernetes.Interface, f informers.SharedInformerFactory, pods cache.SharedIndexInformer) []*kind {
	core, apps := corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion
	return []*kind{
		newKind(core.WithKind("Pod"), true, pods,
			func(ns string) typedClient[*corev1.Pod] { return cs.CoreV1().Pods(ns) }),
		newKind(apps.WithKind("ReplicaSet"), true, f.Apps().V1().ReplicaSets().Informer(),
			func(ns string) typedClient[*appsv1.ReplicaSet] { return cs.AppsV1().ReplicaSets(ns) }),
		newKind(apps.WithKind("Deployment"), true, f.Apps().V1().Deployments().Informer(),
			func(ns string) typedClient[*appsv1.Deployment] { return cs.AppsV1().Deployments(ns) }),
		newKind(core.WithKind("ReplicationController"), true, f.Core().V1().ReplicationControllers().Informer(),
			func(ns string) typedClient[*corev1.ReplicationController] {
				return cs.CoreV1().ReplicationControllers(ns)
			}),
		newKind(apps.WithKind("DaemonSet"), true, f.Apps().V1().DaemonSets().Informer(),
			func(ns string) typedClient[*appsv1.DaemonSet] { return cs.AppsV1().DaemonSets(ns) }),
		newKind(apps.WithKind("StatefulSet"), true, f.Apps().V1().StatefulSets().Informer(),
			func(ns string) typedClient[*appsv1.StatefulSet] { return cs.AppsV1().StatefulSets(ns) }),
		newKind(apps.WithKind("ControllerRevision"), true, f.Apps().V1().ControllerRevisions().Informer(),
			func(ns string) typedClient[*appsv1.ControllerRevision] { return cs.AppsV1().ControllerRevisions(ns) }),
		newKind(batchv1.SchemeGroupVersion.WithKind("Job"), true, f.Batch().V1().Jobs().Informer(),
			func(ns string) typedClient[*batchv1.Job] { return cs.BatchV1().Jobs(ns) }),
		newKind(batchv1.SchemeGroupVersion.WithKind("CronJob"), true, f.Batch().V1().CronJobs().Informer(),
			func(ns string) typedClient[*batchv1.CronJob] { return cs.BatchV1().CronJobs(ns) }),
		newKind(core.WithKind("PodTemplate"), true, f.Core().V1().PodTemplates().Informer(),
			func(ns string) typedClient[*corev1.PodTemplate] { return cs.CoreV1().PodTemplates(ns) }),
		newKind(core.WithKind("Service"), true, f.Core().V1().Services().Informer(),
			func(ns string) typedClient[*corev1.Service] { return cs.CoreV1().Services(ns) }),
		newKind(core.WithKind("Endpoints"), true, f.Core().V1().Endpoints().Informer(),
			func(ns string) typedClient[*corev1.Endpoints] { return cs.CoreV1().Endpoints(ns) }),
		newKind(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), true, f.Discovery().V1().EndpointSlices().Informer(),
			func(ns string) typedClient[*discoveryv1.EndpointSlice] { return cs.DiscoveryV1().EndpointSlices(ns) }),
		newKind(core.WithKind("ConfigMap"), true, f.Core().V1().ConfigMaps().Informer(),
			func(ns string) typedClient[*corev1.ConfigMap] { return cs.CoreV1().ConfigMaps(ns) }),
		newKind(core.WithKind("Secret"), true, f.Core().V1().Secrets().Informer(),
			func(ns string) typedClient[*corev1.Secret] { return cs.CoreV1().Secrets(ns) }),
		newKind(core.WithKind("ServiceAccount"), true, f.Core().V1().ServiceAccounts().Informer(),
			func(ns string) typedClient[*corev1.ServiceAccount] { return cs.CoreV1().ServiceAccounts(ns) }),
		newKind(coordinationv1.SchemeGroupVersion.WithKind("Lease"), true, f.Coordination().V1().Leases().Informer(),
			func(ns string) typedClient[*coordinationv1.Lease] { return cs.CoordinationV1().Leases(ns) }),
		// Cluster-scoped: owners of namespaced objects (a Node owns its
		// Lease upstream), and deletable with a propagation policy like any
		// object, so their orphan/foregroundDeletion finalizers are ours.
		newKind(core.WithKind("Node"), false, f.Core().V1().Nodes().Informer(),
			func(string) typedClient[*corev1.Node] { return cs.CoreV1().Nodes() }),
		newKind(core.WithKind("Namespace"), false, f.Core().V1().Namespaces().Informer(),
			func(string) typedClient[*corev1.Namespace] { return cs.CoreV1().Namespaces() }),
	}
}
