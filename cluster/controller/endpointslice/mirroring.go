package endpointslice

import (
	"context"
	"log/slog"

	"github.com/kstep-dev/kstep/cluster/controller"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Mirroring is the EndpointSlice mirroring controller: the Endpoints that
// users write for Services without a selector, mirrored into slices. Its
// queue's keys are Service keys, which are also the Endpoints' keys.
type Mirroring struct {
	services  corelisters.ServiceLister
	endpoints corelisters.EndpointsLister
	w         *writer
	max       int
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	log       *slog.Logger
	workers   int

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error
}

var _ controller.Controller = &Mirroring{}

// NewMirroring builds the controller on the context's Service, Endpoints
// and EndpointSlice informers.
func NewMirroring(c *controller.Context) controller.Controller {
	svcInf := c.Informers.Core().V1().Services()
	epInf := c.Informers.Core().V1().Endpoints()
	m := &Mirroring{
		services:  svcInf.Lister(),
		endpoints: epInf.Lister(),
		max:       maxPerSlice(c.Options),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpointslicemirroring"}),
		log:     c.Log.With("controller", "endpointslicemirroring"),
		workers: max(1, c.Options.Workers/8),
	}
	var sliceInf cache.SharedIndexInformer
	m.w, sliceInf = newWriter(c, MirroringManagedBy, func(s *discoveryv1.EndpointSlice) {
		if k := serviceKey(s); k != "" {
			m.queue.Add(k)
		}
	})
	m.synced = []cache.InformerSynced{svcInf.Informer().HasSynced, epInf.Informer().HasSynced, sliceInf.HasSynced}
	m.syncHandler = m.sync
	// Only selectorless Services concern it: a Service with a selector is
	// enqueued too, so that a selector added deletes what was mirrored.
	handlers := cache.ResourceEventHandlerFuncs{
		AddFunc:    m.enqueue,
		UpdateFunc: func(_, cur any) { m.enqueue(cur) },
		DeleteFunc: m.enqueue,
	}
	_, _ = svcInf.Informer().AddEventHandler(handlers)
	_, _ = epInf.Informer().AddEventHandler(handlers)
	return m
}

// Name implements controller.Controller.
func (m *Mirroring) Name() string { return "endpointslicemirroring" }

// Run syncs until ctx ends.
func (m *Mirroring) Run(ctx context.Context) {
	controller.RunWorkers(ctx, m.queue, m.workers, m.synced, func(ctx context.Context, k string) error { return m.syncHandler(ctx, k) }, m.log)
}

func (m *Mirroring) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		m.queue.Add(key)
	}
}

// sync makes the mirrored slices of one Service say what its Endpoints
// say: none when the Service is gone or has a selector, when the Endpoints
// is gone or asks not to be mirrored.
func (m *Mirroring) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := m.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return m.w.deleteOrphans(ctx, ns, name)
	}
	if err != nil {
		return err
	}
	if len(svc.Spec.Selector) > 0 {
		return m.w.deleteAll(ctx, ns, name) // the EndpointSlice controller's
	}
	if svc.DeletionTimestamp != nil {
		return nil
	}
	ep, err := m.endpoints.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && ep.Labels[LabelSkipMirror] == "true") {
		return m.w.deleteAll(ctx, ns, name)
	}
	if err != nil {
		return err
	}
	have, err := m.w.slicesOf(ns, name)
	if err != nil {
		return err
	}
	p := reconcile(have, mirroredGroups(ep), sliceTemplate(svc, mirroredLabels(ep)), m.max)
	if p.empty() {
		return nil
	}
	return m.w.apply(ctx, p, func(*discoveryv1.EndpointSlice) {})
}
