// Package replicaset is the ReplicaSet controller: steps ② and ③. It keeps
// the number of active pods matching a ReplicaSet's selector equal to
// spec.replicas, owns those pods through a controller ownerReference
// (adopting orphans that match, releasing pods that no longer match), and
// reports status.
//
// A sync is level-triggered and idempotent: triggered five times, it still
// creates only the missing pods. Expectations stop it from acting on a cache
// that has not yet seen its own creates and deletes. Creates go out in
// slow-start batches (1, 2, 4, ...) so a failing apiserver costs one
// request, not hundreds. On scale-down it deletes unscheduled pods first,
// then pending, then not-ready, then the newest.
//
// The sync is written once, over Owners (owners.go): what it reads and
// writes of the kind it reconciles. New runs it over apps/v1 ReplicaSets
// themselves, with no conversion, and stamps their trace steps
// (rs.observed, pod.create.sent). NewFor runs it over another kind shown
// as ReplicaSets (package replicationcontroller's core/v1
// ReplicationControllers) and stamps nothing.
//
// It writes only pods and its owners' status, only through the apiserver.
// It must not bind pods (the scheduler's job) or touch Deployments.
package replicaset
