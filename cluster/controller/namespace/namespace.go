package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Rechecks of a namespace whose content is still going (pods in their
// grace period, objects held by finalizers) back off from RecheckMin to
// RecheckMax: quick for the common case of instant deletions, patient
// with a 30 s grace period.
const (
	RecheckMin = 50 * time.Millisecond
	RecheckMax = 5 * time.Second
)

// errContentRemains: the namespace is not empty yet; not a failure.
var errContentRemains = errors.New("content remains")

// Controller is the namespace controller.
type Controller struct {
	client     kubernetes.Interface
	namespaces corelisters.NamespaceLister
	synced     cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	contents   []content
	log        *slog.Logger
	workers    int

	// finalizeUnserved is set once the apiserver answered PUT
	// namespaces/<n>/finalize with a 404 for the path itself: from then on
	// the finalizer is removed with an update of the namespace.
	finalizeUnserved atomic.Bool

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, name string) error
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's namespace informer.
func New(c *controller.Context) controller.Controller {
	inf := c.Informers.Core().V1().Namespaces()
	nc := &Controller{
		client:     c.Client,
		namespaces: inf.Lister(),
		synced:     inf.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](RecheckMin, RecheckMax),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace"}),
		contents: contents(),
		log:      c.Log.With("controller", "namespace"),
		workers:  max(1, c.Options.Workers),
	}
	nc.syncHandler = nc.sync
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    nc.enqueue,
		UpdateFunc: func(_, cur any) { nc.enqueue(cur) },
	})
	return nc
}

// Name implements controller.Controller.
func (nc *Controller) Name() string { return "namespace" }

func (nc *Controller) enqueue(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
		nc.queue.Add(ns.Name)
	}
}

// Run empties namespaces until ctx ends.
func (nc *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer nc.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), nc.synced) {
		return
	}
	nc.warnUncovered()
	var wg sync.WaitGroup
	for range nc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for nc.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	nc.queue.ShutDown()
	wg.Wait()
}

// warnUncovered says, once, which served namespaced resources a namespace
// would leave behind.
func (nc *Controller) warnUncovered() {
	served, err := nc.client.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(served) == 0 {
		nc.log.Debug("discovery failed; not checking which resources are emptied", "err", err)
		return
	}
	if missing := uncovered(served, nc.contents); len(missing) > 0 {
		nc.log.Warn("namespaced resources this controller does not delete; terminating namespaces leave them behind", "resources", missing)
	}
}

func (nc *Controller) processNext(ctx context.Context) bool {
	name, quit := nc.queue.Get()
	if quit {
		return false
	}
	defer nc.queue.Done(name)
	err := nc.syncHandler(ctx, name)
	switch {
	case err == nil:
		nc.queue.Forget(name)
	case ctx.Err() != nil:
	case errors.Is(err, errContentRemains):
		nc.log.Debug("namespace not empty yet", "namespace", name, "remaining", err)
		nc.queue.AddRateLimited(name)
	default:
		nc.log.Debug("sync failed, requeued", "namespace", name, "err", err)
		nc.queue.AddRateLimited(name)
	}
	return true
}

// sync empties a terminating namespace and, once nothing is left, removes
// its `kubernetes` finalizer. It never writes the namespace otherwise: the
// phase is the apiserver's (Terminating from the delete on), and a write to
// a terminating namespace can delete it on the spot (see doc.go).
func (nc *Controller) sync(ctx context.Context, name string) error {
	ns, err := nc.namespaces.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}
	remaining, err := nc.empty(ctx, name)
	if err != nil {
		return err
	}
	if len(remaining) > 0 {
		return fmt.Errorf("%w: %s", errContentRemains, strings.Join(remaining, ", "))
	}
	return nc.finalize(ctx, ns)
}

// empty deletes everything in the namespace through the API and reports
// what is still there ("pods=3"): objects whose deletion has begun but not
// ended. The watch cache answers first; a resource it shows empty is
// confirmed with a consistent list, so the verdict "empty", and only it,
// never rests on a lagging cache. Only a pass that finds every resource
// empty lets sync finalize.
func (nc *Controller) empty(ctx context.Context, ns string) ([]string, error) {
	var remaining []string
	for _, r := range nc.contents {
		c := r.client(nc.client, ns)
		total, live, err := c.count(ctx, false)
		if err == nil && total == 0 {
			total, live, err = c.count(ctx, true)
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", r.gr, ns, err)
		}
		if live > 0 {
			if err := c.deleteAll(ctx); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("deleting %s in %s: %w", r.gr, ns, err)
			}
			// Deleted at once, or marked: the next pass tells which.
		}
		if total > 0 {
			remaining = append(remaining, fmt.Sprintf("%s=%d", r.gr, total))
		}
	}
	return remaining, nil
}

// finalize removes the `kubernetes` finalizer from the namespace's spec,
// through namespaces/<n>/finalize as upstream, or, where the apiserver does
// not serve that subresource, through an update of the namespace.
func (nc *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	fin := ns.DeepCopy()
	fin.Spec.Finalizers = slices.DeleteFunc(fin.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	if !nc.finalizeUnserved.Load() {
		_, err := nc.client.CoreV1().Namespaces().Finalize(ctx, fin, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return nil
		case unservedPath(err):
			nc.finalizeUnserved.Store(true)
			nc.log.Warn("the apiserver does not serve namespaces/finalize; removing the finalizer with an update of the namespace", "namespace", ns.Name)
		case apierrors.IsNotFound(err):
			return nil
		default:
			return fmt.Errorf("finalizing namespace %s: %w", ns.Name, err)
		}
	}
	_, err := nc.client.CoreV1().Namespaces().Update(ctx, fin, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalizing namespace %s by update: %w", ns.Name, err)
	}
	return nil
}

// unservedPath tells a 404 for the request's path (no such resource or
// subresource: the Status names no object) from a 404 for the object.
func unservedPath(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d == nil || d.Name == ""
}
