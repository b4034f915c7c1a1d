package apiserver

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// cacheStamps returns the watch cache's Observe hook for r: it stamps the
// watch-cache steps (trace.RSCached, PodCached, PodBoundCached,
// PodReadyCached) when this apiserver's etcd watch delivers the change, so
// each watcher's receipt is measured from a stamp that causally precedes it
// (the writer's own acknowledgement does not: etcd notifies watchers first).
// nil for resources no step concerns, and when the apiserver traces nothing
// (then the fan-out path does not even read the clock).
func (s *Server) cacheStamps(r *resource) func(time.Time, *storage.Entry, *storage.Entry) {
	t := s.tracer
	if t == nil {
		return nil
	}
	switch {
	case r.gvr.Group == "apps" && r.gvr.Resource == "replicasets":
		return func(at time.Time, prev, cur *storage.Entry) {
			if prev != nil || cur == nil {
				return
			}
			if rs, ok := cur.Object().(*appsv1.ReplicaSet); ok {
				t.EmitAt(at, trace.RSCached, "ReplicaSet", rs.Namespace, rs.Name, rs.UID)
			}
		}
	case r.gvr.Group == "" && r.gvr.Resource == "pods":
		return func(at time.Time, prev, cur *storage.Entry) {
			if cur == nil {
				return
			}
			pod, ok := cur.Object().(*corev1.Pod)
			if !ok {
				return
			}
			if prev == nil {
				t.EmitAt(at, trace.PodCached, "Pod", pod.Namespace, pod.Name, pod.UID)
			}
			// The replaced version's node is in its attributes; it is
			// decoded (if compacted) only when the pod has just turned Ready.
			if pod.Spec.NodeName != "" && (prev == nil || prev.Attrs.Fields.Get("spec.nodeName") == "") {
				t.EmitAt(at, trace.PodBoundCached, "Pod", pod.Namespace, pod.Name, pod.UID)
			}
			if podReady(pod) {
				if old, _ := prevObject(prev).(*corev1.Pod); old == nil || !podReady(old) {
					t.EmitAt(at, trace.PodReadyCached, "Pod", pod.Namespace, pod.Name, pod.UID)
				}
			}
		}
	}
	return nil
}

func prevObject(e *storage.Entry) runtime.Object {
	if e == nil {
		return nil
	}
	return e.Object()
}

func podReady(p *corev1.Pod) bool {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
