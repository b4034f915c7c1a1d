// Package replicationcontroller is the ReplicationController controller:
// it keeps the pods of core/v1 ReplicationControllers as the ReplicaSet
// controller keeps a ReplicaSet's, because it is the ReplicaSet
// controller. Like upstream's pkg/controller/replication, it runs
// cluster/controller/replicaset's one sync algorithm (replicaset.NewFor)
// over an Owners that shows each ReplicationController as a ReplicaSet
// (conversion.go): its selector map becomes matchLabels, its status is
// written back as a ReplicationController's through /status, its Events
// are recorded on the ReplicationController, and its pods' controller
// ownerReference is {apiVersion: v1, kind: ReplicationController,
// controller: true, blockOwnerDeletion: true}.
//
// Everything else is the ReplicaSet controller's: expectations,
// slow-start creates, adoption and release, the scale-down order, the
// ReplicaFailure condition. Unlike the ReplicaSet controller, it stamps no
// trace steps (rs.observed, pod.create.sent): the steps of a report are a
// ReplicaSet's.
//
// It writes only pods and ReplicationController status, only through the
// apiserver. It owns no sync logic of its own: a change to how replicas are
// kept belongs in package replicaset, where both kinds get it.
package replicationcontroller
