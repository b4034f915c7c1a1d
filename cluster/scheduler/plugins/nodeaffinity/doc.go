// Package nodeaffinity is the NodeAffinity plugin: filter nodes by the pod's
// spec.nodeSelector and required node affinity, and score them by the
// weights of the preferred node affinity terms they match.
//
// It owns the matching; it must not keep state across cycles or touch the
// apiserver.
package nodeaffinity
