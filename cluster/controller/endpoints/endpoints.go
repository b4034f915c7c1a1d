package endpoints

import (
	"context"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/podendpoint"
	"github.com/kstep-dev/kstep/cluster/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Controller is the Endpoints controller. Its queue's keys are Service
// keys (namespace/name), which are also the Endpoints' keys.
type Controller struct {
	client kubernetes.Interface
	// pods and services carry controller.PodsByLabel and
	// controller.ServicesBySelector: a sync reads the pods its Service
	// selects, a pod event finds the Services selecting it, neither scans
	// the namespace.
	pods      cache.Indexer
	services  corelisters.ServiceLister
	svcIndex  cache.Indexer
	endpoints corelisters.EndpointsLister
	// written: the Endpoints as this controller last created or updated
	// them, when the informer has not caught up yet (sync reads through it).
	written  *controller.WriteCache
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	tracer   *trace.Tracer
	log      *slog.Logger
	now      func() time.Time
	workers  int

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's Service, Pod and Endpoints
// informers.
func New(c *controller.Context) controller.Controller {
	svcInf := c.Informers.Core().V1().Services()
	podInf := c.PodInformer()
	epInf := c.Informers.Core().V1().Endpoints()
	now := c.Now
	if now == nil {
		now = time.Now
	}
	tracer := c.Tracer
	if c.Options.StampsEndpointSlices() {
		tracer = nil // the EndpointSlice controller stamps endpoints.updated
	}
	e := &Controller{
		client:    c.Client,
		services:  svcInf.Lister(),
		pods:      podInf.GetIndexer(),
		svcIndex:  svcInf.Informer().GetIndexer(),
		endpoints: epInf.Lister(),
		written:   controller.NewWriteCache(epInf.Informer(), true),
		synced:    []cache.InformerSynced{svcInf.Informer().HasSynced, podInf.HasSynced, epInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoints"}),
		recorder: c.Recorder,
		tracer:   tracer,
		log:      c.Log.With("controller", "endpoints"),
		now:      now,
		workers:  max(1, c.Options.Workers),
	}
	e.syncHandler = e.sync
	controller.MustIndex(podInf, controller.PodsByLabel)
	controller.MustIndex(svcInf.Informer(), controller.ServicesBySelector)
	_, _ = svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    e.enqueue,
		UpdateFunc: func(_, cur any) { e.enqueue(cur) },
		DeleteFunc: e.enqueue,
	})
	_, _ = podInf.AddEventHandler(podendpoint.Handlers(e.enqueueServicesOf))
	// An Endpoints object changed or deleted by anyone else is put back;
	// one left over from a Service deleted while no controller ran is
	// found at start (its add) and removed.
	_, _ = epInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    e.enqueue,
		UpdateFunc: func(_, cur any) { e.enqueue(cur) },
		DeleteFunc: e.enqueue,
	})
	return e
}

// Name implements controller.Controller.
func (e *Controller) Name() string { return "endpoints" }

// Run syncs until ctx ends.
func (e *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, e.queue, e.workers, e.synced, func(ctx context.Context, k string) error { return e.syncHandler(ctx, k) }, e.log)
}

func (e *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		e.queue.Add(key)
	}
}

// enqueueServicesOf enqueues every Service in the pod's namespace whose
// selector matches the pod.
func (e *Controller) enqueueServicesOf(pod *corev1.Pod) {
	for _, svc := range controller.ServicesSelecting(e.svcIndex, pod) {
		e.queue.Add(svc.Namespace + "/" + svc.Name)
	}
}
