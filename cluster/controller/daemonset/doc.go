// Package daemonset is the DaemonSet controller (apps/v1): one pod of the
// DaemonSet's template on every node that should run it. A node should
// when it matches the template's nodeSelector and required node affinity
// and the pod tolerates its NoSchedule and NoExecute taints. Pods are
// created already pinned, as upstream's: a required node affinity on the
// node's metadata.name (the scheduler binds them), with the DaemonSet
// tolerations upstream adds (not-ready, unreachable, disk, memory and PID
// pressure, unschedulable). A node that should not run the pod loses it; a
// node with two keeps the oldest; a failed pod is deleted and replaced.
//
// Pods are labelled controller-revision-hash with a hash of the template:
// with the RollingUpdate strategy, pods of an older template are deleted
// while at most maxUnavailable of the desired pods are unavailable (and
// recreated from the new template); OnDelete leaves them. Status counts
// desired, current, misscheduled, ready, available and updated pods.
// Unlike upstream, no ControllerRevisions are written (no `kubectl
// rollout undo` for DaemonSets) and maxSurge is not honoured (the
// default, 0, is).
//
// It writes only pods and DaemonSets' status, only through the
// apiserver. It must not bind pods (the scheduler does) or touch nodes.
package daemonset
