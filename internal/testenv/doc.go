// Package testenv is the test harness: it starts real parts for tests (an
// embedded etcd member, in-process apiservers on loopback ports or as
// processes, stand-in kubelets (Nodes), controllers on a Context like the
// manager's, the real kubectl against them) and holds the helpers the
// tests share (Eventually, Consistently, Tier). It owns nothing of the
// running system.
//
// Who may import it: _test.go files, of any package; no other file of a
// kstep package (it imports the apiserver, the controllers and etcd, which
// an actor that linked it would carry). hack/importrules fails when one
// does, and holds the rest of internal/ to what its doc.go files say.
package testenv
