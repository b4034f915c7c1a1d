package kubelet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/nodeports"
)

// admit is the kubelet's admission of a pod it has not run yet, as
// upstream's predicate admit handler: the pod's host ports must be free
// among the pods this kubelet admitted and that are not finished. A pod
// that already ran here (a restarted kubelet adopting it) is admitted as
// is. Admission and the record of the admitted ports happen under k.mu,
// so of two pods racing for one port exactly one is admitted. ok false
// comes with upstream's reason and message.
func (k *Kubelet) admit(w *podWorker, pod *corev1.Pod) (reason, message string, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w.admitted {
		return "", "", true
	}
	ports := framework.HostPorts(pod)
	if len(ports) > 0 && pod.Status.StartTime == nil {
		used := framework.HostPortInfo{}
		for _, o := range k.workers {
			if o == w {
				continue
			}
			for _, p := range o.hostPorts {
				used.Add(p.HostIP, string(p.Protocol), p.HostPort)
			}
		}
		if !framework.PortsFit(ports, used) {
			// Upstream's PredicateFailureError: reason the predicate's
			// name, message "Predicate <name> failed: <reason>".
			return nodeports.Name, fmt.Sprintf("Predicate %s failed: %s", nodeports.Name, nodeports.ErrReason), false
		}
	}
	w.admitted, w.hostPorts = true, ports
	return "", "", true
}

// release gives up the host ports of a pod that finished.
func (k *Kubelet) release(w *podWorker) {
	k.mu.Lock()
	w.hostPorts = nil
	k.mu.Unlock()
}

// reject fails a pod admission refused, as upstream's rejectPod: a
// Warning Event with the reason, and phase Failed with the reason and
// "Pod was rejected: <message>". Nothing of it ever runs.
func (k *Kubelet) reject(w *podWorker, pod *corev1.Pod, reason, message string) {
	if !w.rejected {
		k.event(pod, corev1.EventTypeWarning, reason, message)
		k.log.Info("pod rejected", "pod", w.key, "reason", reason)
	}
	w.rejected = true
	k.status.set(pod, corev1.PodStatus{
		Phase: corev1.PodFailed, Reason: reason, Message: "Pod was rejected: " + message,
		QOSClass: pod.Status.QOSClass, Conditions: pod.Status.Conditions,
	})
}
