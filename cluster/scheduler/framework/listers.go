package framework

import (
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// WorkloadListers read the objects that select or own pods — what
// upstream's default topology spread constraints derive a pod's selector
// from. The scheduler fills them once its informers have synced, before
// the first cycle; a nil lister is a kind the apiserver does not serve.
type WorkloadListers struct {
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister
}
