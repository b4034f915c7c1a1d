// Package statefulset is the StatefulSet controller (apps/v1): pods with
// stable names <set>-<ordinal> for the ordinals [start, start+replicas).
// With OrderedReady pod management a pod is created only once every lower
// ordinal is Running and Ready, and on scale-down the highest ordinal goes
// first, one at a time, each only while the others are Ready; with
// Parallel all are created or deleted at once. Pods carry
// statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
// controller-revision-hash (a hash of the template), hostname = their name
// and subdomain = spec.serviceName. A failed or succeeded pod is deleted
// and recreated under its name. RollingUpdate replaces, from the highest
// ordinal down to spec.updateStrategy.rollingUpdate.partition, one pod of
// an older template at a time while every pod is Ready; OnDelete leaves
// them. Status reports replicas, ready, available, current and updated
// counts and the current and update revisions.
//
// Unlike upstream, no ControllerRevisions are written (revisions are the
// template hash), and volumeClaimTemplates get no PersistentVolumeClaims:
// kstep serves no storage API.
//
// It writes only pods and StatefulSets' status, only through the
// apiserver. It must not bind pods or touch other controllers' objects.
package statefulset
