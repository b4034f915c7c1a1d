package rootcacertpublisher

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

const (
	// Name is the ConfigMap every namespace gets; DataKey its one key.
	Name    = "kube-root-ca.crt"
	DataKey = "ca.crt"
	// descriptionAnnotation and description are upstream's.
	descriptionAnnotation = "kubernetes.io/description"
	description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Controller is the root CA publisher.
type Controller struct {
	client     kubernetes.Interface
	namespaces corelisters.NamespaceLister
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	log        *slog.Logger
	workers    int
	rootCA     string
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's namespace and ConfigMap
// informers (the garbage collector follows ConfigMaps too: one cache). The
// queue's keys are namespace names.
func New(c *controller.Context) controller.Controller {
	nsInf := c.Informers.Core().V1().Namespaces()
	cmInf := c.Informers.Core().V1().ConfigMaps()
	p := &Controller{
		client:     c.Client,
		namespaces: nsInf.Lister(),
		configMaps: cmInf.Lister(),
		synced:     []cache.InformerSynced{nsInf.Informer().HasSynced, cmInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "rootcacertpublisher"}),
		log:     c.Log.With("controller", "rootcacertpublisher"),
		workers: max(1, c.Options.Workers/4),
		rootCA:  string(c.RootCA),
	}
	_, _ = nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.enqueueNamespace,
		UpdateFunc: func(_, cur any) { p.enqueueNamespace(cur) },
	})
	_, _ = cmInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, cur any) { p.enqueueConfigMap(cur) },
		DeleteFunc: p.enqueueConfigMap,
	})
	return p
}

// Name implements controller.Controller.
func (p *Controller) Name() string { return "rootcacertpublisher" }

func (p *Controller) enqueueNamespace(obj any) {
	if name, ok := controller.NamespaceOf(obj); ok {
		p.queue.Add(name)
	}
}

func (p *Controller) enqueueConfigMap(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == Name {
		p.queue.Add(cm.Namespace)
	}
}

// Run publishes until ctx ends.
func (p *Controller) Run(ctx context.Context) {
	if p.rootCA == "" {
		p.log.Warn("no root CA (no --root-ca-file and no CA in the kubeconfig): kube-root-ca.crt is not published")
		<-ctx.Done()
		p.queue.ShutDown()
		return
	}
	controller.RunWorkers(ctx, p.queue, p.workers, p.synced, p.sync, p.log)
}

// sync makes one active namespace's kube-root-ca.crt hold the root CA.
func (p *Controller) sync(ctx context.Context, namespace string) error {
	if active, err := controller.NamespaceActive(p.namespaces, namespace); !active {
		return err
	}
	cm, err := p.configMaps.ConfigMaps(namespace).Get(Name)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: namespace,
			Annotations: map[string]string{descriptionAnnotation: description}},
			Data: map[string]string{DataKey: p.rootCA}}
		_, err = p.client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	case err != nil:
		return err
	case cm.Data[DataKey] == p.rootCA && len(cm.Data) == 1 && len(cm.BinaryData) == 0 && cm.Annotations[descriptionAnnotation] == description:
		return nil
	default:
		cm = cm.DeepCopy()
		cm.Data, cm.BinaryData = map[string]string{DataKey: p.rootCA}, nil
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[descriptionAnnotation] = description
		_, err = p.client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	switch {
	case err == nil:
		return nil
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		return err // the cache is behind: requeued, looked at again
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		// The namespace is gone or terminating; its update event brings it
		// back if not.
		return nil
	default:
		return fmt.Errorf("publishing %s/%s: %w", namespace, Name, err)
	}
}
