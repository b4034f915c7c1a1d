// Package controller holds what every controller of the controller-manager
// shares: the Context they are built from, the Controller contract, the
// expectations that keep a stale cache from causing double creation, the
// workers every Run uses (RunWorkers), the OwnerQueue of the controllers
// whose objects control pods (Job, DaemonSet, StatefulSet), and the pod
// helpers they read (PodReady, PodAvailable, ComputeHash).
//
// Controllers are level-triggered and idempotent: event handlers only turn
// an event into a key on a rate-limited workqueue; a sync reads the informer
// caches, compares desired with actual, and writes the difference through
// the apiserver. A missed event delays, never corrupts. Controllers never
// talk to each other, to etcd, or to any actor but the apiserver.
//
// The controllers themselves live in subpackages (replicaset,
// replicationcontroller, deployment, endpoints, endpointslice,
// nodelifecycle, garbagecollector, namespace, serviceaccount,
// rootcacertpublisher, resourcequota, disruption, job, daemonset,
// statefulset); podendpoint is what the Endpoints and EndpointSlice
// controllers share; the manager subpackage runs them under leader
// election.
package controller
