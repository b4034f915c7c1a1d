package deployment

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Counting and ordering ReplicaSets. Every function here tolerates nil
// entries (a Deployment may have no new ReplicaSet yet) and nil
// spec.replicas (the apiserver defaults it to 1, as upstream).

func rsReplicas(rs *appsv1.ReplicaSet) int32 { return ptr.Deref(rs.Spec.Replicas, 1) }

func dReplicas(d *appsv1.Deployment) int32 { return ptr.Deref(d.Spec.Replicas, 1) }

// specReplicas sums spec.replicas: the pods the ReplicaSets are asked for.
func specReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

// actualReplicas sums status.replicas: the active pods they report.
func actualReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.Replicas
		}
	}
	return n
}

func readyReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.ReadyReplicas
		}
	}
	return n
}

func availableReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.AvailableReplicas
		}
	}
	return n
}

// terminatingReplicas sums status.terminatingReplicas, nil when no
// ReplicaSet reports it (a ReplicaSet controller without the field).
func terminatingReplicas(rss []*appsv1.ReplicaSet) *int32 {
	var n *int32
	for _, rs := range rss {
		if rs != nil && rs.Status.TerminatingReplicas != nil {
			n = ptr.To(ptr.Deref(n, 0) + *rs.Status.TerminatingReplicas)
		}
	}
	return n
}

// activePods counts, per ReplicaSet UID, the pods that still run or will
// run: not finished and not being deleted. It is what the ReplicaSet
// controller calls active.
type activePods map[types.UID]int32

func countActive(pods map[types.UID][]*corev1.Pod) activePods {
	out := activePods{}
	for uid, list := range pods {
		for _, p := range list {
			if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				out[uid]++
			}
		}
	}
	return out
}

// committedPods is how many active pods rs may have at this moment: what
// it is asked for, what its controller last reported, and what our pod
// cache still shows, whichever is largest. A ReplicaSet just scaled down
// still runs its old pods until its controller has deleted them; counting
// them keeps a rollout from creating new pods before the old ones are on
// their way out (see newRSReplicas).
func committedPods(rs *appsv1.ReplicaSet, active activePods) int32 {
	return max(rsReplicas(rs), rs.Status.Replicas, active[rs.UID])
}

// filterActive keeps ReplicaSets asked for at least one pod.
func filterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// olderFirst orders by creation, name breaking ties (creation timestamps
// have one-second resolution).
func olderFirst(a, b *appsv1.ReplicaSet) bool {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.Name < b.Name
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

func sortOldestFirst(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool { return olderFirst(rss[i], rss[j]) })
}

// sortBySizeOlder: larger first, older first among equals (who loses pods
// first when scaling down).
func sortBySizeOlder(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		if rsReplicas(rss[i]) == rsReplicas(rss[j]) {
			return olderFirst(rss[i], rss[j])
		}
		return rsReplicas(rss[i]) > rsReplicas(rss[j])
	})
}

// sortBySizeNewer: larger first, newer first among equals (who gains pods
// first when scaling up).
func sortBySizeNewer(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		if rsReplicas(rss[i]) == rsReplicas(rss[j]) {
			return olderFirst(rss[j], rss[i])
		}
		return rsReplicas(rss[i]) > rsReplicas(rss[j])
	})
}

// sortByRevision: lowest revision first, older first among equals.
func sortByRevision(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		ri, _ := revision(rss[i])
		rj, _ := revision(rss[j])
		if ri == rj {
			return olderFirst(rss[i], rss[j])
		}
		return ri < rj
	})
}
