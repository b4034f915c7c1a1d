package garbagecollector

import (
	"context"
	"log/slog"
	"slices"

	"github.com/kstep-dev/kstep/cluster/controller"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller is the garbage collector.
type Controller struct {
	graph   *graph
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[objectKey]
	log     *slog.Logger
	workers int

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key objectKey) error
}

var _ controller.Controller = &Controller{}

// New builds the collector on the context's informers: one per followed
// kind (kinds.go), each indexed by owner UID.
func New(c *controller.Context) controller.Controller {
	gc := &Controller{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[objectKey](),
			workqueue.TypedRateLimitingQueueConfig[objectKey]{Name: "garbagecollector"}),
		log:     c.Log.With("controller", "garbagecollector"),
		workers: max(1, c.Options.Workers),
	}
	gc.syncHandler = gc.sync
	kinds := followedKinds(c.Client, c.Informers, c.PodInformer())
	gc.graph = newGraph(kinds)
	for _, k := range kinds {
		_, _ = k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { gc.onAdd(k, obj) },
			UpdateFunc: func(old, cur any) { gc.onUpdate(k, old, cur) },
			DeleteFunc: func(obj any) { gc.onDelete(k, obj) },
		})
		gc.synced = append(gc.synced, k.informer.HasSynced)
	}
	return gc
}

// Name implements controller.Controller.
func (gc *Controller) Name() string { return "garbagecollector" }

// Run collects until ctx ends.
func (gc *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, gc.queue, gc.workers, gc.synced, func(ctx context.Context, k objectKey) error { return gc.syncHandler(ctx, k) }, gc.log)
}

// The handlers only turn events into keys. An object is looked at when it
// could need the collector: it has owners, or it is being deleted (it may
// hold one of the collector's finalizers). A deleted object's owners are
// looked at (one may wait for it in the foreground) and so are its
// dependents (their owner may now be gone).

func (gc *Controller) enqueue(k *kind, m metav1.Object) {
	gc.queue.Add(objectKey{gk: k.gk, namespace: m.GetNamespace(), name: m.GetName()})
}

func (gc *Controller) enqueueOwners(m metav1.Object) {
	for _, r := range m.GetOwnerReferences() {
		if key, ok := gc.graph.ownerKey(m.GetNamespace(), r); ok {
			gc.queue.Add(key)
		}
	}
}

func (gc *Controller) enqueueDependents(m metav1.Object) {
	deps, _ := gc.graph.dependents(m.GetUID())
	for _, d := range deps {
		gc.queue.Add(d.key())
	}
}

func (gc *Controller) onAdd(k *kind, obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if len(m.GetOwnerReferences()) > 0 || m.GetDeletionTimestamp() != nil {
		gc.enqueue(k, m)
	}
}

func (gc *Controller) onUpdate(k *kind, old, cur any) {
	o, err1 := meta.Accessor(old)
	c, err2 := meta.Accessor(cur)
	if err1 != nil || err2 != nil || o.GetResourceVersion() == c.GetResourceVersion() {
		return
	}
	replaced := o.GetUID() != c.GetUID()
	refsChanged := replaced || !equality.Semantic.DeepEqual(o.GetOwnerReferences(), c.GetOwnerReferences())
	deletion := (o.GetDeletionTimestamp() == nil) != (c.GetDeletionTimestamp() == nil) ||
		!slices.Equal(o.GetFinalizers(), c.GetFinalizers())
	// A Namespace waits for its spec.finalizers before the collector
	// removes its finalizer (finalizerRemovable): any write to an object
	// holding one of the collector's finalizers is looked at.
	held := c.GetDeletionTimestamp() != nil &&
		(hasFinalizer(c, metav1.FinalizerOrphanDependents) || hasFinalizer(c, metav1.FinalizerDeleteDependents))
	if refsChanged || deletion || held {
		gc.enqueue(k, c)
	}
	if refsChanged {
		// An owner waiting in the foreground may have lost a dependent.
		gc.enqueueOwners(o)
		gc.enqueueOwners(c)
	}
	if replaced {
		gc.enqueueDependents(o)
	}
}

func (gc *Controller) onDelete(_ *kind, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	gc.enqueueOwners(m)
	gc.enqueueDependents(m)
}
