package job

import (
	"context"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	batchv1 "k8s.io/api/batch/v1"
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
	q := controller.NewOwnerQueue(c, "job", jobKind, jobInf, podInf)
	j := &Controller{
		client:   c.Client,
		jobs:     controller.NewWriteCache(jobInf, false),
		jobInf:   jobInf,
		podIndex: podInf.GetIndexer(),
		synced:   []cache.InformerSynced{jobInf.HasSynced, podInf.HasSynced},
		queue:    q,
		exp:      q.Exp,
		recorder: c.Recorder,
		log:      c.Log.With("controller", "job"),
		now:      c.Now,
		workers:  max(1, c.Options.Workers/4),
	}
	return j
}

// Name implements controller.Controller.
func (j *Controller) Name() string { return "job" }

// Run syncs until ctx ends.
func (j *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, j.queue, j.workers, j.synced, j.sync, j.log)
}
