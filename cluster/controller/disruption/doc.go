// Package disruption is the disruption controller: it keeps every
// PodDisruptionBudget's status (current and desired healthy pods, expected
// pods, disruptions allowed, the DisruptionAllowed condition), as upstream's
// does, so that the apiserver's pods/eviction can answer 201 or 429 from
// it. minAvailable as a number counts the pods the selector matches; a
// percentage, or maxUnavailable, counts from the replicas of the pods'
// controllers (a Deployment's, a ReplicaSet's, a ReplicationController's);
// a budget whose pods cannot be counted allows no disruption. Evictions the
// apiserver recorded in status.disruptedPods keep their pods from counting
// as healthy until the pod is gone or DeletionTimeout has passed.
//
// It reads informers and writes only PodDisruptionBudget status; it must
// not evict or delete pods (the apiserver's eviction does, the budget
// permitting).
package disruption
