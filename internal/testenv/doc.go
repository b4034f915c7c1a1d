// Package testenv starts real parts for tests: an embedded etcd member,
// in-process apiservers on loopback ports (or as processes), stand-in
// kubelets (Nodes), controllers on a Context like the manager's, and the
// real kubectl against them (Kubectl). It owns nothing of the running
// system and must never be imported by non-test code paths of the actors.
package testenv
