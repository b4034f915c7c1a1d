package resourcequota

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kstep-dev/kstep/cluster/apiserver/admission"
	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller is the ResourceQuota controller. Its queue's keys are
// namespaces.
type Controller struct {
	client  kubernetes.Interface
	quotas  corelisters.ResourceQuotaLister
	pods    cache.Indexer
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
	workers int
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's pod and ResourceQuota
// informers.
func New(c *controller.Context) controller.Controller {
	podInf := c.PodInformer()
	qInf := c.Informers.Core().V1().ResourceQuotas()
	rc := &Controller{
		client: c.Client,
		quotas: qInf.Lister(),
		pods:   podInf.GetIndexer(),
		synced: []cache.InformerSynced{podInf.HasSynced, qInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota"}),
		log:     c.Log.With("controller", "resourcequota"),
		workers: max(1, c.Options.Workers/8),
	}
	_, _ = qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    rc.enqueueObject,
		UpdateFunc: func(_, cur any) { rc.enqueueObject(cur) },
	})
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    rc.enqueuePod,
		UpdateFunc: func(_, cur any) { rc.enqueuePod(cur) },
		DeleteFunc: rc.enqueuePod,
	})
	return rc
}

// Name is the controller's name in the manager.
func (rc *Controller) Name() string { return "resourcequota" }

// Run syncs namespaces until ctx ends.
func (rc *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, rc.queue, rc.workers, rc.synced, rc.sync, rc.log)
}

func (rc *Controller) enqueueObject(obj any) {
	if ns, ok := controller.ObjectNamespace(obj); ok {
		rc.queue.Add(ns)
	}
}

// enqueuePod enqueues the pod's namespace when it has a quota: pods in
// namespaces without one cost a lister lookup.
func (rc *Controller) enqueuePod(obj any) {
	ns, ok := controller.ObjectNamespace(obj)
	if !ok {
		return
	}
	if qs, err := rc.quotas.ResourceQuotas(ns).List(labels.Everything()); err == nil && len(qs) > 0 {
		rc.queue.Add(ns)
	}
}

// sync sets status.hard and status.used of every quota in the namespace.
func (rc *Controller) sync(ctx context.Context, ns string) error {
	quotas, err := rc.quotas.ResourceQuotas(ns).List(labels.Everything())
	if err != nil || len(quotas) == 0 {
		return err
	}
	objs, err := rc.pods.ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		return err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	for _, q := range quotas {
		used := admission.Usage(pods, q.Spec.Hard)
		if apiequality.Semantic.DeepEqual(q.Status.Hard, q.Spec.Hard) && apiequality.Semantic.DeepEqual(q.Status.Used, used) {
			continue
		}
		cp := q.DeepCopy()
		cp.Status.Hard, cp.Status.Used = q.Spec.Hard.DeepCopy(), used
		if _, err := rc.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("quota %s/%s status: %w", ns, q.Name, err)
		}
	}
	return nil
}
