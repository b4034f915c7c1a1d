package podendpoint

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Handlers are the pod event handlers of a controller that lists pods as
// endpoints: enqueue gets every pod whose event may change what it
// contributes (a new or deleted pod; on an update the old and the new pod
// when the labels changed, which may change the Services selecting it, else
// the new pod when Changed says so).
func Handlers(enqueue func(*corev1.Pod)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				enqueue(pod)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.Pod), cur.(*corev1.Pod)
			if o.ResourceVersion == c.ResourceVersion {
				return
			}
			if !labels.Equals(o.Labels, c.Labels) {
				enqueue(o)
				enqueue(c)
				return
			}
			if Changed(o, c) {
				enqueue(c)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				enqueue(pod)
			}
		},
	}
}
