// Package testenv starts real parts for tests: an embedded etcd member and
// in-process apiservers on loopback ports. It owns nothing of the running
// system and must never be imported by non-test code paths of the actors.
package testenv
