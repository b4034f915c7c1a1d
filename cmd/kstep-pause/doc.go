// Command kstep-pause is the program of kstep's pause image: the process that
// holds a pod sandbox's namespaces. It does nothing but wait: it exits 0 on
// SIGTERM or SIGINT and, as PID 1 of the pod's PID namespace (when the pod
// shares one), reaps the zombies that orphaned processes leave behind.
//
// It is a static Go binary (CGO_ENABLED=0) so the image needs no libc.
//
// It imports nothing of kstep and must not: cluster/images wraps the built
// binary (bin/kstep-pause, from make build) into an image as it is.
package main
