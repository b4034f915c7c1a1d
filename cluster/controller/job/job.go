package job

import (
	"context"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// burst caps the pods one sync creates or deletes; the rest wait for the
// next sync, after the watch has confirmed these.
const burst = 500

var jobKind = batchv1.SchemeGroupVersion.WithKind("Job")

// Controller is the Job controller.
type Controller struct {
	client   kubernetes.Interface
	jobs     *controller.WriteCache
	jobInf   cache.SharedIndexInformer
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	exp      *controller.Expectations
	recorder record.EventRecorder
	log      *slog.Logger
	now      func() time.Time
	workers  int
}

var _ controller.Controller = &Controller{}

// New builds the Job controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	jobInf := c.Informers.Batch().V1().Jobs().Informer()
	podInf := c.PodInformer()
	controller.MustIndex(podInf, controller.PodsByController)
	j := &Controller{
		client:   c.Client,
		jobs:     controller.NewWriteCache(jobInf, false),
		jobInf:   jobInf,
		podIndex: podInf.GetIndexer(),
		synced:   []cache.InformerSynced{jobInf.HasSynced, podInf.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "job"}),
		exp:      controller.NewExpectations(c.Options.ExpectationsTTL, c.Now),
		recorder: c.Recorder,
		log:      c.Log.With("controller", "job"),
		now:      c.Now,
		workers:  max(1, c.Options.Workers/4),
	}
	_, _ = jobInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    j.enqueue,
		UpdateFunc: func(_, cur any) { j.enqueue(cur) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				j.exp.Forget(key)
			}
		},
	})
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, ok := ownerKey(obj); ok {
				j.exp.Observed(key, 1, 0)
				j.queue.Add(key)
			}
		},
		UpdateFunc: func(old, cur any) {
			if o, c := old.(*corev1.Pod), cur.(*corev1.Pod); o.ResourceVersion == c.ResourceVersion {
				return
			}
			if key, ok := ownerKey(cur); ok {
				j.queue.Add(key)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if key, ok := ownerKey(obj); ok {
				j.queue.Add(key)
			}
		},
	})
	return j
}

// Name implements controller.Controller.
func (j *Controller) Name() string { return "job" }

// Run syncs until ctx ends.
func (j *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, j.queue, j.workers, j.synced, j.sync, j.log)
}

func (j *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		j.queue.Add(key)
	}
}

// ownerKey is the key of the Job that controls pod, if one does.
func ownerKey(obj any) (string, bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return "", false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != jobKind.Kind || ref.APIVersion != jobKind.GroupVersion().String() {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}
