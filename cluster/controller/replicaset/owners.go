package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Owners is the kind of object a Controller reconciles, seen as
// ReplicaSets: what the one sync algorithm needs to read and write of it.
// New reconciles apps/v1 ReplicaSets as they are (no conversion); NewFor
// reconciles any kind of the same shape through its own Owners, as
// upstream's pkg/controller/replication runs the ReplicaSet manager over
// adapters that convert ReplicationControllers.
//
// The contract: every method is safe for concurrent use; ReplicaSet is
// called once per sync and per owner an orphan pod's event looks at, so
// its cost is the kind's own (the ReplicaSet kind's is a type assertion).
type Owners interface {
	// Kind is the owners' apiVersion and kind, as the controller
	// ownerReference of their pods names them.
	Kind() schema.GroupVersionKind
	// Informer is the owners' shared informer. The controller keys its
	// objects (namespace/name), reads them through ReplicaSet, and keeps
	// its own writes over its store (controller.WriteCache).
	Informer() cache.SharedIndexInformer
	// ReplicaSet returns an object of Informer's store, or one UpdateStatus
	// returned, as a ReplicaSet. The result may share the object's maps and
	// slices: like every cached object, it is read-only.
	ReplicaSet(obj any) *appsv1.ReplicaSet
	// Get reads the owner from the apiserver, not from the cache: the
	// quorum read that makes adoption safe.
	Get(ctx context.Context, namespace, name string) (metav1.Object, error)
	// UpdateStatus writes st as rs's status through the /status
	// subresource, with rs's resourceVersion as precondition, and returns
	// the object the apiserver stored; nil, and no request, when the
	// owner's own status fields already say st.
	UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (runtime.Object, error)
	// EventObject is what the controller's Events about rs are recorded
	// on: the owner as its kind, so `kubectl describe` shows them.
	EventObject(rs *appsv1.ReplicaSet) runtime.Object
}

var rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// replicaSets is the Owners of apps/v1 ReplicaSets: the objects are
// already ReplicaSets, and nothing is converted.
type replicaSets struct {
	inf    cache.SharedIndexInformer
	client kubernetes.Interface
}

var _ Owners = replicaSets{}

func (replicaSets) Kind() schema.GroupVersionKind         { return rsKind }
func (s replicaSets) Informer() cache.SharedIndexInformer { return s.inf }
func (replicaSets) ReplicaSet(obj any) *appsv1.ReplicaSet { return obj.(*appsv1.ReplicaSet) }

func (s replicaSets) Get(ctx context.Context, namespace, name string) (metav1.Object, error) {
	rs, err := s.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// UpdateStatus writes unconditionally: the controller has compared st
// with rs.Status already, which for a ReplicaSet is the owner's own.
func (s replicaSets) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (runtime.Object, error) {
	cp := rs.DeepCopy()
	cp.Status = st
	got, err := s.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return got, nil
}

func (replicaSets) EventObject(rs *appsv1.ReplicaSet) runtime.Object { return rs }
