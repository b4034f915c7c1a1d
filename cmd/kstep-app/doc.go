// Command kstep-app is the program of kstep's workload image
// (registry.kstep.local/app): a static Go HTTP server for pods to run.
//
//	/healthz  200 always (liveness)
//	/readyz   503 until $START_DELAY has passed since start, then 200 (readiness)
//	/         "hello from <hostname>" and the image version; each request
//	          is logged to stderr
//
// Environment: PORT (default 8080), START_DELAY (a Go duration, default 0),
// KSTEP_APP_VERSION (set by the image: v1, v2).
//
// With an argument it runs a mode instead, for kubectl exec (the image holds
// no other program): `version` prints "kstep-app <version>", `echo` copies
// stdin to stdout until EOF, `exit N` exits with code N; an unknown mode
// exits 2. On SIGTERM or SIGINT it stops
// accepting connections, lets requests in flight finish, and exits 0.
//
// It imports nothing of kstep and must not: cluster/images wraps the built
// binary (bin/kstep-app, from make build) into an image as it is.
package main
