// Package docker is the provider that runs every actor of a cluster in its
// own container on a private Docker network, through testcontainers-go:
// each etcd member, apiserver, controller-manager, scheduler, the
// hollow-nodes actor, the image registry and each real node (containerd +
// runc + CNI + kubelet, nested). Faults are real: Stop kills or stops a
// container (sampling its usage from the Docker API first), Pause freezes
// it (docker pause), Signal reaches a process inside it (a node's
// containerd or kubelet, through `kstep signal` exec'd in the container),
// Partition cuts an etcd member off its peers (the etcd-peer links inside the
// members) or disconnects a whole actor from the cluster's network.
//
// It owns:
//
//   - the two images, built locally from the binaries of make build and
//     never pulled: kstep/control-plane (FROM scratch + kstep and the image
//     programs the registry serves) and kstep/node (FROM scratch + kstep,
//     containerd, its runc shim, runc and the CNI plugins), each tagged by a
//     content hash of what goes in, so an unchanged build is a lookup;
//   - the cluster's Docker resources, all labelled dev.kstep.*: one bridge
//     network, one container per actor (named kstep-<cluster>-<actor>,
//     reached on the network by its actor name), one volume per etcd
//     member and per node (etcd data, containerd's root), the nodes' pod
//     cgroups (/kstep-<cluster>/<node> in the host's hierarchy), and the
//     sweep that removes what a dead kstep left behind;
//   - the state directory's docker.json (actors, containers, host ports;
//     how kstep down and the chaos engine find the cluster), logs/ (each
//     container's stdout and stderr, written straight to
//     <state>/logs/<actor>.log through KSTEP_LOG_FILE), kubeconfigs/ (each
//     actor's, addressed by container name) and kubeconfig (the host's,
//     addressed by the ports published on 127.0.0.1).
//
// Every actor comes from provider.Plan (the same command lines, PKI,
// TLS, RBAC and node identities as the process provider, with container
// addresses: addressing in plan.go), booted and stopped in provider.Boot's
// and provider.Shutdown's order, so an actor behaves the same in both. Of
// the state directory's pki/ and kubeconfigs/, a container gets only the
// files its own flags name (provider.Component.Files), each bind-mounted
// read-only at its path; logs/ and the host's TraceDir are bind-mounted at
// the same paths.
//
// It must not import the actors' packages: its contract with them is the
// kstep command line and their health endpoints. It needs a local Docker
// daemon (bind mounts of the state directory), never pulls an image, and
// disables Ryuk (TESTCONTAINERS_RYUK_DISABLED=true) before its first
// testcontainers call.
package docker
