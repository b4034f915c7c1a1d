// Package defaultpreemption is the DefaultPreemption PostFilter, after
// upstream's: when no node fits a pod, it looks for the node where
// removing the fewest, least important pods of lower priority makes room
// (respecting PodDisruptionBudgets where a choice exists), marks those
// victims with the DisruptionTarget condition, deletes them gracefully,
// records Preempted Events and upstream's preemption metrics, and
// nominates the node: the scheduler writes status.nominatedNodeName and
// keeps the room for the pod in its nominator until the pod is bound.
//
// It owns the choice of victims and the writes that evict them (pods/status
// and pod deletion, through the Handle's client); it must not touch the
// scheduler's queue or cache (the nominator is reached through the Handle),
// etcd, or any other actor.
package defaultpreemption
