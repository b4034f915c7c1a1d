package endpointslice

import (
	"context"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/podendpoint"
	"github.com/kstep-dev/kstep/cluster/trace"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Controller is the EndpointSlice controller. Its queue's keys are Service
// keys (namespace/name).
type Controller struct {
	// pods carries controller.PodsByLabel and PodsByNode, svcIndex
	// controller.ServicesBySelector, as for the Endpoints controller.
	pods     cache.Indexer
	services corelisters.ServiceLister
	svcIndex cache.Indexer
	nodes    corelisters.NodeLister
	w        *writer
	max      int
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	// tracer is nil unless Options.EndpointsStamp gives this controller
	// endpoints.updated.
	tracer  *trace.Tracer
	log     *slog.Logger
	now     func() time.Time
	workers int

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's Service, Pod, Node and
// EndpointSlice informers.
func New(c *controller.Context) controller.Controller {
	svcInf := c.Informers.Core().V1().Services()
	podInf := c.PodInformer()
	nodeInf := c.Informers.Core().V1().Nodes()
	now := c.Now
	if now == nil {
		now = time.Now
	}
	e := &Controller{
		services: svcInf.Lister(),
		pods:     podInf.GetIndexer(),
		svcIndex: svcInf.Informer().GetIndexer(),
		nodes:    nodeInf.Lister(),
		max:      maxPerSlice(c.Options),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpointslice"}),
		recorder: c.Recorder,
		log:      c.Log.With("controller", "endpointslice"),
		now:      now,
		workers:  max(1, c.Options.Workers),
	}
	if c.Options.StampsEndpointSlices() {
		e.tracer = c.Tracer
	}
	var sliceInf cache.SharedIndexInformer
	e.w, sliceInf = newWriter(c, ManagedBy, func(s *discoveryv1.EndpointSlice) {
		if k := serviceKey(s); k != "" {
			e.queue.Add(k)
		}
	})
	e.synced = []cache.InformerSynced{svcInf.Informer().HasSynced, podInf.HasSynced, nodeInf.Informer().HasSynced, sliceInf.HasSynced}
	e.syncHandler = e.sync
	controller.MustIndex(podInf, controller.PodsByLabel, controller.PodsByNode)
	controller.MustIndex(svcInf.Informer(), controller.ServicesBySelector)
	_, _ = svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    e.enqueue,
		UpdateFunc: func(_, cur any) { e.enqueue(cur) },
		DeleteFunc: e.enqueue,
	})
	_, _ = podInf.AddEventHandler(podendpoint.Handlers(e.enqueueServicesOf))
	_, _ = nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok && n.Labels[zoneLabel] != "" {
				e.enqueueServicesOn(n.Name)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.Node), cur.(*corev1.Node)
			if o.Labels[zoneLabel] != c.Labels[zoneLabel] {
				e.enqueueServicesOn(c.Name)
			}
		},
	})
	return e
}

func maxPerSlice(o controller.Options) int {
	if o.MaxEndpointsPerSlice > 0 {
		return o.MaxEndpointsPerSlice
	}
	return DefaultMaxEndpointsPerSlice
}

// Name implements controller.Controller.
func (e *Controller) Name() string { return "endpointslice" }

// Run syncs until ctx ends.
func (e *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, e.queue, e.workers, e.synced, func(ctx context.Context, k string) error { return e.syncHandler(ctx, k) }, e.log)
}

func (e *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		e.queue.Add(key)
	}
}

func (e *Controller) enqueueServicesOf(pod *corev1.Pod) {
	for _, svc := range controller.ServicesSelecting(e.svcIndex, pod) {
		e.queue.Add(svc.Namespace + "/" + svc.Name)
	}
}

// enqueueServicesOn enqueues the Services of the pods on a node whose zone
// changed: their endpoints carry it.
func (e *Controller) enqueueServicesOn(node string) {
	pods, err := controller.PodsOn(e.pods, node)
	if err != nil {
		return
	}
	for _, p := range pods {
		e.enqueueServicesOf(p)
	}
}

// sync makes the slices of one Service hold its pods' endpoints.
func (e *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := e.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return e.w.deleteOrphans(ctx, ns, name)
	}
	if err != nil {
		return err
	}
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
		// Not this controller's: the mirroring controller's, or nobody's.
		return e.w.deleteAll(ctx, ns, name)
	}
	if svc.DeletionTimestamp != nil {
		return nil // going: the garbage collector takes the slices
	}
	pods, err := controller.PodsSelectedBy(e.pods, ns, svc.Spec.Selector)
	if err != nil {
		return err
	}
	have, err := e.w.slicesOf(ns, name)
	if err != nil {
		return err
	}
	want := desiredGroups(svc, pods, e.zoneOf)
	p := reconcile(have, want, sliceTemplate(svc, sliceLabels(svc)), e.max)
	if p.empty() {
		return nil
	}
	wrote := func(*discoveryv1.EndpointSlice) {}
	if e.tracer != nil {
		wrote = e.stamper(have)
	}
	if err := e.w.apply(ctx, p, wrote); err != nil {
		if e.recorder != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) {
			e.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Service %s/%s: %v", ns, name, err)
		}
		return err
	}
	return nil
}

// zoneOf is a node's topology.kubernetes.io/zone ("" when unknown).
func (e *Controller) zoneOf(node string) string {
	n, err := e.nodes.Get(node)
	if err != nil {
		return ""
	}
	return n.Labels[zoneLabel]
}

// stamper returns what stamps endpoints.updated for each pod an
// acknowledged slice write lists as ready that none of have (the slices
// before this sync) did: the pods the write makes reachable.
func (e *Controller) stamper(have []*discoveryv1.EndpointSlice) func(*discoveryv1.EndpointSlice) {
	ready := readyPods(have)
	return func(s *discoveryv1.EndpointSlice) {
		at := e.now()
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			ref := ep.TargetRef
			if ref == nil || ref.UID == "" || !isReady(ep) || ready[ref.UID] {
				continue
			}
			ready[ref.UID] = true
			e.tracer.EmitAt(at, trace.EndpointsUpdated, "Pod", ref.Namespace, ref.Name, ref.UID)
		}
	}
}

func isReady(ep *discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready != nil && *ep.Conditions.Ready
}

// readyPods is the set of pod UIDs the slices list as ready.
func readyPods(ss []*discoveryv1.EndpointSlice) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, s := range ss {
		for i := range s.Endpoints {
			if ep := &s.Endpoints[i]; ep.TargetRef != nil && isReady(ep) {
				out[ep.TargetRef.UID] = true
			}
		}
	}
	return out
}
