package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/admission"
	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// ResyncPeriod is how often every quota is recounted in full, whatever
// the events (upstream's --resource-quota-sync-period default).
const ResyncPeriod = 5 * time.Minute

// rediscoverAfter spaces the discovery reads made for a quota name whose
// resource is not (yet) served.
const rediscoverAfter = 30 * time.Second

// Controller is the ResourceQuota controller. Its queue's keys are
// namespaces.
type Controller struct {
	client    kubernetes.Interface
	factory   informers.SharedInformerFactory
	quotas    corelisters.ResourceQuotaLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	log       *slog.Logger
	workers   int
	resync    time.Duration
	mu        sync.Mutex
	monitors  map[schema.GroupResource]*monitor
	served    map[schema.GroupResource]schema.GroupVersionResource
	refreshed time.Time
	// stop ends the informers started for new monitors (Run's context).
	stop <-chan struct{}
}

// monitor is the informer of one resource that some quota counts: its
// objects are the usage, its deletes and usage-changing updates release
// it. Pods and ResourceQuotas have one from the start; the others are
// started when a quota first names them.
type monitor struct {
	gr      schema.GroupResource
	indexer cache.Indexer
	synced  cache.InformerSynced
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's pod and ResourceQuota
// informers.
func New(c *controller.Context) controller.Controller {
	podInf := c.PodInformer()
	qInf := c.Informers.Core().V1().ResourceQuotas()
	rc := &Controller{
		client:  c.Client,
		factory: c.Informers,
		quotas:  qInf.Lister(),
		synced:  []cache.InformerSynced{podInf.HasSynced, qInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota"}),
		log:      c.Log.With("controller", "resourcequota"),
		workers:  max(1, c.Options.Workers/8),
		resync:   ResyncPeriod,
		monitors: map[schema.GroupResource]*monitor{},
	}
	_, _ = qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: rc.enqueueObject,
		UpdateFunc: func(_, cur any) {
			// Admission's charges change status.used only: no recount,
			// as upstream (a recount from informers behind the charged
			// creates would hand the charged units out again).
			if q, ok := cur.(*corev1.ResourceQuota); ok && needsSync(q) {
				rc.enqueueObject(cur)
			}
		},
	})
	rc.addMonitor(corev1.Resource("pods"), podInf)
	rc.addMonitor(corev1.Resource("resourcequotas"), qInf.Informer())
	return rc
}

// needsSync: status.hard is not spec.hard, or status.used lacks a name
// the controller counts.
func needsSync(q *corev1.ResourceQuota) bool {
	if !apiequality.Semantic.DeepEqual(q.Status.Hard, q.Spec.Hard) {
		return true
	}
	for k := range q.Spec.Hard {
		if _, ok := q.Status.Used[k]; !ok && admission.Tracked(k) {
			return true
		}
	}
	return false
}

// addMonitor follows inf as the objects of gr: deletes, and updates that
// change what an object uses, enqueue its namespace for a recount.
// Creates do not: admission charged them.
func (rc *Controller) addMonitor(gr schema.GroupResource, inf cache.SharedIndexInformer) *monitor {
	m := &monitor{gr: gr, indexer: inf.GetIndexer(), synced: inf.HasSynced}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(runtime.Object)
			c, ok2 := cur.(runtime.Object)
			if ok1 && ok2 && !apiequality.Semantic.DeepEqual(admission.ObjectUsage(gr, o), admission.ObjectUsage(gr, c)) {
				rc.enqueueIfQuota(cur)
			}
		},
		DeleteFunc: rc.enqueueIfQuota,
	})
	rc.monitors[gr] = m
	return m
}

// Name is the controller's name in the manager.
func (rc *Controller) Name() string { return "resourcequota" }

// Run syncs namespaces until ctx ends, and every namespace with a quota
// each resync period.
func (rc *Controller) Run(ctx context.Context) {
	rc.mu.Lock()
	rc.stop = ctx.Done()
	rc.mu.Unlock()
	go func() {
		t := time.NewTicker(rc.resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				qs, _ := rc.quotas.List(labels.Everything())
				for _, q := range qs {
					rc.queue.Add(q.Namespace)
				}
			}
		}
	}()
	controller.RunWorkers(ctx, rc.queue, rc.workers, rc.synced, rc.sync, rc.log)
}

func (rc *Controller) enqueueObject(obj any) {
	if ns, ok := controller.ObjectNamespace(obj); ok {
		rc.queue.Add(ns)
	}
}

// enqueueIfQuota enqueues the object's namespace when it has a quota:
// objects in namespaces without one cost a lister lookup.
func (rc *Controller) enqueueIfQuota(obj any) {
	ns, ok := controller.ObjectNamespace(obj)
	if !ok {
		return
	}
	if qs, err := rc.quotas.ResourceQuotas(ns).List(labels.Everything()); err == nil && len(qs) > 0 {
		rc.queue.Add(ns)
	}
}

// errNoInformer: a served resource that client-go's informer factory has
// no informer for (a custom resource); its names are left out of
// status.used, and admission counts them from its watch cache.
var errNoInformer = errors.New("no informer")

// monitorFor returns the monitor of gr, starting an informer for it if
// it is served; nil when it is not served (nothing of it exists).
func (rc *Controller) monitorFor(gr schema.GroupResource) (*monitor, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if m := rc.monitors[gr]; m != nil {
		return m, nil
	}
	gvr, ok := rc.served[gr]
	if !ok && time.Since(rc.refreshed) > rediscoverAfter {
		if err := rc.discoverLocked(); err != nil {
			return nil, err
		}
		gvr, ok = rc.served[gr]
	}
	if !ok {
		return nil, nil
	}
	inf, err := rc.factory.ForResource(gvr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gr, errNoInformer)
	}
	m := rc.addMonitor(gr, inf.Informer())
	rc.factory.Start(rc.stop)
	return m, nil
}

// discoverLocked reads the namespaced resources the apiservers serve:
// count/<resource>.<group> covers each, whatever the version.
func (rc *Controller) discoverLocked() error {
	lists, err := rc.client.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discovery: %w", err)
	}
	served := map[schema.GroupResource]schema.GroupVersionResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			served[gv.WithResource(r.Name).GroupResource()] = gv.WithResource(r.Name)
		}
	}
	rc.served, rc.refreshed = served, time.Now()
	return nil
}

// sync recounts every quota in the namespace: status.hard mirrors
// spec.hard, status.used is what the namespace's objects use of every
// tracked name.
func (rc *Controller) sync(ctx context.Context, ns string) error {
	quotas, err := rc.quotas.ResourceQuotas(ns).List(labels.Everything())
	if err != nil || len(quotas) == 0 {
		return err
	}
	counted := map[schema.GroupResource][]runtime.Object{}
	objects := func(gr schema.GroupResource) ([]runtime.Object, error) {
		if objs, ok := counted[gr]; ok {
			return objs, nil
		}
		m, err := rc.monitorFor(gr)
		if err != nil || m == nil {
			return nil, err
		}
		if !cache.WaitForCacheSync(ctx.Done(), m.synced) {
			return nil, ctx.Err()
		}
		items, err := m.indexer.ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			return nil, err
		}
		objs := make([]runtime.Object, 0, len(items))
		for _, o := range items {
			if ro, ok := o.(runtime.Object); ok {
				objs = append(objs, ro)
			}
		}
		counted[gr] = objs
		return objs, nil
	}
	for _, q := range quotas {
		used := corev1.ResourceList{}
		for k := range q.Spec.Hard {
			gr, ok := admission.CountedResource(k)
			if !ok {
				continue
			}
			if _, done := used[k]; done {
				continue
			}
			objs, err := objects(gr)
			if errors.Is(err, errNoInformer) {
				continue
			}
			if err != nil {
				return err
			}
			for name, v := range admission.Usage(gr, admission.Matching(q, gr, objs), q.Spec.Hard) {
				used[name] = v
			}
		}
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
