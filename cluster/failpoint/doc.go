// Package failpoint names the failpoints an apiserver started with
// --enable-failpoints serves (testing only: they exist to prove that the
// chaos engine's checkers fail when the apiserver breaks what they check),
// and is the client that arms them: the names and the HTTP protocol live
// here, between the apiserver that implements them
// (cluster/apiserver/failpoints.go) and the chaos engine that arms them,
// so that neither imports the other.
//
// It owns: Path, the failpoints' names, their bounds, and Client.
// It must not know how a failpoint is implemented (the watch caches, the
// watch streams): that is cluster/apiserver's; it imports no kstep package.
package failpoint
