package replicaset

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// BurstReplicas caps the creates or deletes of one sync; the rest wait for
// the next sync, after the watch has confirmed these.
const BurstReplicas = 500

var rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// Controller is the ReplicaSet controller.
type Controller struct {
	client   kubernetes.Interface
	rsLister appslisters.ReplicaSetLister
	// written: the ReplicaSets as this controller last wrote them, when the
	// informer has not caught up yet (sync reads through it).
	written *controller.WriteCache
	pods    corelisters.PodLister
	// podIndex has controller.PodsByController: a sync reads the pods its
	// ReplicaSet controls and the namespace's orphans, not every pod.
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	exp      *controller.Expectations
	dels     *deletions
	recorder record.EventRecorder
	tracer   *trace.Tracer
	log      *slog.Logger
	now      func() time.Time
	workers  int
	// noExpectations: the failpoint (Options.NoExpectations) is on.
	noExpectations bool

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error

	seenMu sync.Mutex
	seen   map[string]bool // RS UIDs already stamped rs.observed
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	rsInf := c.Informers.Apps().V1().ReplicaSets()
	// With the slow-watch failpoint on, every pod event reaches this cache
	// late; expectations must keep the controller from acting on it.
	podInf := c.PodInformer()
	r := &Controller{
		client:   c.Client,
		rsLister: rsInf.Lister(),
		written:  controller.NewWriteCache(rsInf.Informer(), false),
		pods:     corelisters.NewPodLister(podInf.GetIndexer()),
		podIndex: podInf.GetIndexer(),
		synced:   []cache.InformerSynced{rsInf.Informer().HasSynced, podInf.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset"}),
		exp:      controller.NewExpectations(c.Options.ExpectationsTTL, c.Now),
		dels:     newDeletions(),
		recorder: c.Recorder,
		tracer:   c.Tracer,
		log:      c.Log.With("controller", "replicaset"),
		now:      c.Now,
		workers:  max(1, c.Options.Workers),
		seen:     map[string]bool{},
	}
	r.syncHandler = r.sync
	controller.MustIndex(podInf, controller.PodsByController)
	r.noExpectations = c.Options.NoExpectations // the failpoint that breaks it on purpose
	_, _ = rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.addRS,
		UpdateFunc: func(_, cur any) { r.enqueueRS(cur) },
		DeleteFunc: r.deleteRS,
	})
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.addPod,
		UpdateFunc: r.updatePod,
		DeleteFunc: r.deletePod,
	})
	return r
}

// Name implements controller.Controller.
func (r *Controller) Name() string { return "replicaset" }

// Run syncs until ctx ends.
func (r *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, r.queue, r.workers, r.synced, func(ctx context.Context, k string) error { return r.syncHandler(ctx, k) }, r.log)
}

func keyOf(obj any) (string, bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key, err == nil
}

func (r *Controller) addRS(obj any) {
	rs := obj.(*appsv1.ReplicaSet)
	r.seenMu.Lock()
	first := !r.seen[string(rs.UID)]
	r.seen[string(rs.UID)] = true
	r.seenMu.Unlock()
	if first {
		r.tracer.Emit(trace.RSObserved, "ReplicaSet", rs.Namespace, rs.Name, rs.UID)
	}
	r.enqueueRS(obj)
}

func (r *Controller) enqueueRS(obj any) {
	if key, ok := keyOf(obj); ok {
		r.queue.Add(key)
	}
}

func (r *Controller) deleteRS(obj any) {
	key, ok := keyOf(obj)
	if !ok {
		return
	}
	r.exp.Forget(key)
	r.dels.forget(key)
	if rs, ok := obj.(*appsv1.ReplicaSet); ok {
		r.seenMu.Lock()
		delete(r.seen, string(rs.UID))
		r.seenMu.Unlock()
	}
	r.queue.Add(key)
}

// ownerRS returns the key of the ReplicaSet that controls pod, if any.
func ownerRS(pod *corev1.Pod) (string, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != rsKind.Kind || ref.APIVersion != rsKind.GroupVersion().String() {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}

// rsForOrphan enqueues every ReplicaSet whose selector matches an orphan
// pod, so one of them adopts it.
func (r *Controller) enqueueForOrphan(pod *corev1.Pod) {
	list, err := r.rsLister.ReplicaSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, rs := range list {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		r.enqueueRS(rs)
	}
}

func (r *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		r.deletePod(pod) // a restarted controller sees a pod mid-deletion
		return
	}
	if key, ok := ownerRS(pod); ok {
		r.exp.Observed(key, 1, 0)
		r.queue.Add(key)
		return
	}
	r.enqueueForOrphan(pod)
}

func (r *Controller) updatePod(old, cur any) {
	o, c := old.(*corev1.Pod), cur.(*corev1.Pod)
	if o.ResourceVersion == c.ResourceVersion {
		return // a resync
	}
	if c.DeletionTimestamp != nil {
		// Graceful deletion: for counting, the pod is already gone.
		r.deletePod(c)
		if ok, _ := labelsChanged(o, c); ok {
			if key, ok := ownerRS(o); ok {
				r.queue.Add(key)
			}
		}
		return
	}
	oldKey, oldOwned := ownerRS(o)
	curKey, curOwned := ownerRS(c)
	if oldOwned && (!curOwned || oldKey != curKey) {
		r.queue.Add(oldKey)
	}
	if curOwned {
		r.queue.Add(curKey)
		return
	}
	if changed, _ := labelsChanged(o, c); changed || oldOwned {
		r.enqueueForOrphan(c)
	}
}

func labelsChanged(o, c *corev1.Pod) (bool, error) {
	return !labels.Equals(o.Labels, c.Labels), nil
}

func (r *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	key, ok := ownerRS(pod)
	if !ok {
		return
	}
	if r.dels.observe(key, string(pod.UID)) {
		r.exp.Observed(key, 0, 1)
	}
	r.queue.Add(key)
}
