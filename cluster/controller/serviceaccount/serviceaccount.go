package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// DefaultName is the ServiceAccount every namespace has.
const DefaultName = "default"

// Controller is the ServiceAccount controller.
type Controller struct {
	client     kubernetes.Interface
	namespaces corelisters.NamespaceLister
	accounts   corelisters.ServiceAccountLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	log        *slog.Logger
	workers    int
	// names are the ServiceAccounts ensured in every namespace.
	names []string

	// syncHandler is a field so tests can wrap it.
	syncHandler func(ctx context.Context, namespace string) error
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's namespace and ServiceAccount
// informers. The queue's keys are namespace names.
func New(c *controller.Context) controller.Controller {
	nsInf := c.Informers.Core().V1().Namespaces()
	saInf := c.Informers.Core().V1().ServiceAccounts()
	sc := &Controller{
		client:     c.Client,
		namespaces: nsInf.Lister(),
		accounts:   saInf.Lister(),
		synced:     []cache.InformerSynced{nsInf.Informer().HasSynced, saInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "serviceaccount"}),
		log:     c.Log.With("controller", "serviceaccount"),
		workers: max(1, c.Options.Workers),
		names:   []string{DefaultName},
	}
	sc.syncHandler = sc.sync
	_, _ = nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sc.enqueueNamespace,
		UpdateFunc: func(_, cur any) { sc.enqueueNamespace(cur) },
	})
	_, _ = saInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: sc.deleteAccount,
	})
	return sc
}

// Name implements controller.Controller.
func (sc *Controller) Name() string { return "serviceaccount" }

func (sc *Controller) enqueueNamespace(obj any) {
	if name, ok := controller.NamespaceOf(obj); ok {
		sc.queue.Add(name)
	}
}

func (sc *Controller) deleteAccount(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if sa, ok := obj.(*corev1.ServiceAccount); ok {
		sc.queue.Add(sa.Namespace)
	}
}

// Run ensures ServiceAccounts until ctx ends.
func (sc *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, sc.queue, sc.workers, sc.synced, func(ctx context.Context, k string) error { return sc.syncHandler(ctx, k) }, sc.log)
}

// sync creates the missing ServiceAccounts of one active namespace.
func (sc *Controller) sync(ctx context.Context, namespace string) error {
	if active, err := controller.NamespaceActive(sc.namespaces, namespace); !active {
		return err
	}
	for _, name := range sc.names {
		if _, err := sc.accounts.ServiceAccounts(namespace).Get(name); err == nil {
			continue
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		_, err := sc.client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
		switch {
		case err == nil:
			sc.log.Debug("created service account", "namespace", namespace, "name", name)
		case apierrors.IsAlreadyExists(err):
			// The cache is behind a create (ours or someone's).
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
			// The namespace is gone or terminating (the apiserver refuses
			// content in it); its update event brings it back if not.
			sc.log.Debug("not creating service account", "namespace", namespace, "name", name, "err", err)
		default:
			return fmt.Errorf("creating service account %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}
