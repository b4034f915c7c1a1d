// Package deployment is the Deployment controller: it turns a Deployment
// into ReplicaSets, one per pod template, and moves replicas from the old
// ones to the new one by the Deployment's strategy.
//
// Owns: Deployment → ReplicaSets. It creates the ReplicaSet of the current
// template (named <deployment>-<pod-template-hash>, the hash label added to
// its selector and template, a controller ownerReference with
// blockOwnerDeletion), adopts matching orphan ReplicaSets and releases its
// own that stop matching, sets their spec.replicas and the annotations
// kubectl reads (revision, revision-history, desired-replicas,
// max-replicas), deletes old empty ones beyond revisionHistoryLimit, and
// writes the Deployment's status and revision annotation.
//
//   - RollingUpdate: never more than replicas+maxSurge pods asked for, and
//     a new pod only once the pods it replaces are terminating; old pods
//     removed only while more than replicas-maxUnavailable are available
//     (unavailable old pods first, then oldest ReplicaSet first).
//   - Recreate: old ReplicaSets to zero, wait until their pods are gone,
//     then the new one to replicas.
//   - Paused, or replicas changed mid-rollout: every active ReplicaSet is
//     resized in proportion; no rollout step.
//   - Status: counts from the ReplicaSets' status; Available and
//     Progressing conditions with upstream's reasons, so `kubectl rollout
//     status` completes and a missed progressDeadlineSeconds is reported.
//     `kubectl rollout undo` (client-side in kubectl 1.32: it patches the
//     template back) makes the old ReplicaSet new again under a new
//     revision.
//
// It is level-triggered: every sync recomputes from the informer caches,
// writes the difference through the apiserver with the resourceVersion it
// read, and a 409 from a stale cache requeues the Deployment.
//
// Must not touch: pods (the ReplicaSet controller creates and deletes them;
// this package only reads them from its cache), etcd (only the apiserver
// is spoken to), and objects of other controllers — ReplicaSets it does
// not control, other owners' children, Deployment spec (users own it).
package deployment
