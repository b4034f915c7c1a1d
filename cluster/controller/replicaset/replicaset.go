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
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// BurstReplicas caps the creates or deletes of one sync; the rest wait for
// the next sync, after the watch has confirmed these.
const BurstReplicas = 500

// Controller is the ReplicaSet controller, or another kind's run by the
// same code (NewFor).
type Controller struct {
	name   string
	client kubernetes.Interface
	// owners is the kind reconciled; ownerKind and ownerAPIVersion are its
	// Kind(), as ownerReferences spell it.
	owners                     Owners
	ownerKind, ownerAPIVersion string
	// written: the owners as this controller last wrote them, when the
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
	// tracer stamps a ReplicaSet's steps (rs.observed, pod.create.sent);
	// nil for any other kind, whose objects are no step of a report.
	tracer  *trace.Tracer
	log     *slog.Logger
	now     func() time.Time
	workers int
	// noExpectations: the failpoint (Options.NoExpectations) is on.
	noExpectations bool

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, key string) error

	seenMu sync.Mutex
	seen   map[string]bool // RS UIDs already stamped rs.observed
}

var _ controller.Controller = &Controller{}

// New builds the ReplicaSet controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	rsInf := c.Informers.Apps().V1().ReplicaSets().Informer()
	return build(c, "replicaset", replicaSets{inf: rsInf, client: c.Client}, c.Tracer)
}

// NewFor builds a controller named name that runs the ReplicaSet
// controller's sync over another kind of owner. It stamps no trace steps.
func NewFor(c *controller.Context, name string, owners Owners) *Controller {
	return build(c, name, owners, nil)
}

func build(c *controller.Context, name string, owners Owners, tracer *trace.Tracer) *Controller {
	inf := owners.Informer()
	// With the slow-watch failpoint on, every pod event reaches this cache
	// late; expectations must keep the controller from acting on it.
	podInf := c.PodInformer()
	gvk := owners.Kind()
	r := &Controller{
		name:            name,
		client:          c.Client,
		owners:          owners,
		ownerKind:       gvk.Kind,
		ownerAPIVersion: gvk.GroupVersion().String(),
		written:         controller.NewWriteCache(inf, false),
		pods:            corelisters.NewPodLister(podInf.GetIndexer()),
		podIndex:        podInf.GetIndexer(),
		synced:          []cache.InformerSynced{inf.HasSynced, podInf.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
		exp:      controller.NewExpectations(c.Options.ExpectationsTTL, c.Now),
		dels:     newDeletions(),
		recorder: c.Recorder,
		tracer:   tracer,
		log:      c.Log.With("controller", name),
		now:      c.Now,
		workers:  max(1, c.Options.Workers),
		seen:     map[string]bool{},
	}
	r.syncHandler = r.sync
	controller.MustIndex(podInf, controller.PodsByController)
	r.noExpectations = c.Options.NoExpectations // the failpoint that breaks it on purpose
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
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
func (r *Controller) Name() string { return r.name }

// Run syncs until ctx ends.
func (r *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, r.queue, r.workers, r.synced, func(ctx context.Context, k string) error { return r.syncHandler(ctx, k) }, r.log)
}

func keyOf(obj any) (string, bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key, err == nil
}

// addRS stamps rs.observed on a ReplicaSet's first sight; objects of
// other kinds are only enqueued.
func (r *Controller) addRS(obj any) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok || r.tracer == nil {
		r.enqueueRS(obj)
		return
	}
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

// ownerRS returns the key of the owner (of this controller's kind) that
// controls pod, if any.
func (r *Controller) ownerRS(pod *corev1.Pod) (string, bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != r.ownerKind || ref.APIVersion != r.ownerAPIVersion {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}

// enqueueForOrphan enqueues every owner whose selector matches an orphan
// pod, so one of them adopts it.
func (r *Controller) enqueueForOrphan(pod *corev1.Pod) {
	_ = cache.ListAllByNamespace(r.owners.Informer().GetIndexer(), pod.Namespace, labels.Everything(), func(obj any) {
		rs := r.owners.ReplicaSet(obj)
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			return
		}
		r.enqueueRS(obj)
	})
}

func (r *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		r.deletePod(pod) // a restarted controller sees a pod mid-deletion
		return
	}
	if key, ok := r.ownerRS(pod); ok {
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
			if key, ok := r.ownerRS(o); ok {
				r.queue.Add(key)
			}
		}
		return
	}
	oldKey, oldOwned := r.ownerRS(o)
	curKey, curOwned := r.ownerRS(c)
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
	key, ok := r.ownerRS(pod)
	if !ok {
		return
	}
	if r.dels.observe(key, string(pod.UID)) {
		r.exp.Observed(key, 0, 1)
	}
	r.queue.Add(key)
}
