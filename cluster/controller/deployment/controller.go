package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// Name is the controller's name in the manager's registry.
const Name = "deployment"

// maxRetries is how often a failing key is retried with backoff (5 ms
// doubling: the last wait is ~80 s) before it waits for its next event.
const maxRetries = 15

var deploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Controller is the Deployment controller.
//
// Guarantees:
//   - a key is synced by one worker at a time (the workqueue's); a sync
//     reads only the informer caches and writes only through the apiserver;
//   - every update carries the resourceVersion it was computed from (and
//     adoption, release and deletion the object's UID), so a decision made
//     on a stale cache fails with 409 and is retried on a fresher one
//     instead of being applied;
//   - handlers do nothing but resolve an event to a Deployment key.
type Controller struct {
	client    kubernetes.Interface
	dLister   appslisters.DeploymentLister
	rsLister  appslisters.ReplicaSetLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	recorder  record.EventRecorder
	log       *slog.Logger
	now       func() time.Time
	workers   int

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error
}

var _ controller.Controller = &Controller{}

// New builds the controller and registers its informers (Deployments,
// ReplicaSets, Pods) and handlers on the context's factory; the manager
// starts the factory.
func New(c *controller.Context) controller.Controller {
	dInf := c.Informers.Apps().V1().Deployments()
	rsInf := c.Informers.Apps().V1().ReplicaSets()
	podInf := c.PodInformer()
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	dc := &Controller{
		client:    c.Client,
		dLister:   dInf.Lister(),
		rsLister:  rsInf.Lister(),
		podLister: corelisters.NewPodLister(podInf.GetIndexer()),
		synced:    []cache.InformerSynced{dInf.Informer().HasSynced, rsInf.Informer().HasSynced, podInf.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
		recorder: c.Recorder,
		log:      log.With("controller", Name),
		now:      now,
		workers:  max(1, c.Options.Workers),
	}
	dc.syncHandler = dc.sync
	_, _ = dInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    dc.enqueue,
		UpdateFunc: func(_, cur any) { dc.enqueue(cur) },
		DeleteFunc: dc.enqueue,
	})
	_, _ = rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    dc.addReplicaSet,
		UpdateFunc: dc.updateReplicaSet,
		DeleteFunc: dc.deleteReplicaSet,
	})
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: dc.updatePod,
		DeleteFunc: dc.deletePod,
	})
	return dc
}

// Name implements controller.Controller.
func (dc *Controller) Name() string { return Name }

// Run waits for the caches, then syncs with Options.Workers workers until
// ctx ends; it returns once every worker has stopped.
func (dc *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer dc.queue.ShutDown()
	dc.log.Info("starting", "workers", dc.workers)
	if !cache.WaitForCacheSync(ctx.Done(), dc.synced...) {
		return
	}
	var wg sync.WaitGroup
	for range dc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for dc.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	dc.queue.ShutDown()
	wg.Wait()
	dc.log.Info("stopped")
}

func (dc *Controller) processNext(ctx context.Context) bool {
	key, quit := dc.queue.Get()
	if quit {
		return false
	}
	defer dc.queue.Done(key)
	err := dc.syncHandler(ctx, key)
	switch {
	case err == nil, apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		dc.queue.Forget(key)
	case ctx.Err() != nil:
	case dc.queue.NumRequeues(key) < maxRetries:
		level := slog.LevelInfo
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			level = slog.LevelDebug // a stale cache, retried on a fresher one
		}
		dc.log.Log(ctx, level, "sync failed, requeued", "key", key, "err", err)
		dc.queue.AddRateLimited(key)
	default:
		dc.log.Error("sync failed, dropped until the next event", "key", key, "err", err)
		dc.queue.Forget(key)
	}
	return true
}

// event records an Event on obj when a recorder is configured.
func (dc *Controller) event(obj runtime.Object, typ, reason, format string, args ...any) {
	if dc.recorder != nil {
		dc.recorder.Eventf(obj, typ, reason, format, args...)
	}
}

// errorf wraps err with what failed, keeping it inspectable by apierrors.
func errorf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}
