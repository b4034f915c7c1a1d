// Package garbagecollector is the garbage collector: it carries out
// ownerReferences. An object whose owners are all gone is deleted; an owner
// deleted with propagationPolicy Foreground waits (foregroundDeletion
// finalizer) until the dependents that block it are gone; an owner deleted
// with Orphan (orphan finalizer) lets its dependents go free first.
//
// Ownership may go round in a ring (a owned by c, b by a, c by b): deleted
// in the foreground, each member would wait for the next forever. The
// member that would close the ring (its owner waits, and so does one of
// its blocking dependents) first sets blockOwnerDeletion false on its
// references to its waiting owners, as upstream does, so the waits form a
// chain again and end. An object's reference to itself never blocks.
//
// The graph is the followed kinds' informer caches (kinds.go: pods,
// replicasets, deployments, replicationcontrollers, services, endpoints,
// endpointslices, configmaps, secrets, serviceaccounts, leases, nodes,
// namespaces), each indexed by owner UID;
// the collector keeps no state beside them. Handlers turn events into keys
// of one workqueue; a sync reads the caches and decides with pure functions
// (verdict.go). A cache can lag, so an owner is declared gone only after a
// live GET by name finds nothing or another UID; a dependent is judged
// again on a live read of itself before anything is written, and deleted
// with UID and resourceVersion preconditions, so a reference cut or added
// meanwhile is a 409 and a fresh look. Owners of kinds it does not follow
// are never declared gone.
//
// It owns: deleting dependents (propagationPolicy Background, or Foreground
// when they are blocked on themselves), removing ownerReferences from
// dependents (strategic merge patch by UID), setting blockOwnerDeletion
// false on them (never true), and removing the orphan and
// foregroundDeletion finalizers. It writes only through the apiserver.
// It must not touch any other field or finalizer, nor create anything, nor
// decide what owns what: ownerReferences are set by their writers.
package garbagecollector
