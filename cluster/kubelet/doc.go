// Package kubelet is kstep's node agent (steps ⑥ to ⑧): it registers its
// Node, keeps the node's Lease and status, watches the pods bound to it,
// drives a container runtime over CRI to run them, probes them, and writes
// their status back to the apiserver.
//
// The shape, one concern per file:
//
//   - node.go: registration (capacity, labels, taints, addresses,
//     nodeInfo), the Lease in kube-node-lease renewed every
//     LeaseRenewInterval (2 s), node status every StatusUpdateFrequency
//     (10 s) and at once when readiness changes; Ready=True once the
//     runtime answers Version and Status. Each periodic loop (Lease,
//     status check, relist) runs at its own phase in its period, the node
//     name's hash, so hundreds of hollow kubelets started together do not
//     renew in one burst.
//   - podworkers.go: the pod source (one informer per kubelet, field
//     selector spec.nodeName=<node>) and one worker goroutine per pod:
//     syncs of one pod are serialized; wakes (pod events, relist changes,
//     probe results) coalesce.
//   - relist.go: the PLEG. Every RelistPeriod (1 s) two CRI list calls;
//     pods whose sandboxes or containers changed are woken. The first
//     relist adopts what a previous kubelet left running and finds orphans.
//   - admit.go: admission before a pod's first sync, as upstream's
//     predicate admit handler for host ports: a pod whose host port (with
//     the scheduler's NodePorts rules) another admitted, unfinished pod
//     holds is Failed, reason NodePorts, "Pod was rejected: ..." and a
//     Warning Event, and never runs. Of two racing pods the first synced
//     wins (upstream orders by creation time).
//   - sync.go: the pod sync. RunPodSandbox → PodSandboxStatus (IP) →
//     PullImage per policy → CreateContainer → StartContainer; restart per
//     restartPolicy with crash-loop backoff (backoff.go); liveness and
//     startup failures kill; deletion stops containers with the grace
//     period, stops and removes sandboxes, then deletes the pod with grace
//     0 and a UID precondition. Never a second sandbox for a pod with a
//     ready one: the sync reads the runtime before it acts, and removes
//     extra ready sandboxes if it ever finds them.
//   - criconfig.go: pod spec → CRI configs (metadata, hostname, log
//     directory, DNS, port mappings, labels, security contexts with
//     seccomp, resources → cgroup settings, env with the downward API,
//     ConfigMap and Secret refs, emptyDir and hostPath mounts).
//   - status.go: the pod status as a pure function of the runtime state,
//     probe verdicts and waiting reasons; statuswriter.go patches
//     pods/status off the sync path, only when it changed. The "being
//     created" status a sync sets before RunPodSandbox is provisional: it
//     waits up to ProvisionalStatusDelay (100 ms) for the sync's outcome,
//     so a quick sync (a hollow or warm node) writes one status, not two
//     in a row. A container the sync started has its first startup and
//     readiness probes run in that sync when they are due at once
//     (prober.Manager.ProbeNow), so its status carries their verdict.
//   - serving.go: what the kubelet's HTTPS server (subpackage server:
//     /containerLogs, /exec, /attach, /portForward, /stats/summary, /pods,
//     /healthz) reads: the node's client and runtime, its pods from the
//     informer, a container's current or previous instance and log path.
//     Config.ServerPort (default 10250) is the server's port, published
//     in status.daemonEndpoints; Config.LogReader (default os.Open) opens
//     log files, a hollow node's simruntime answering with simulated ones.
//
// Steps stamped (cluster/trace): pod.observed.kubelet when the informer
// first delivers a pod no kubelet has started; pod.sandbox.ready after
// RunPodSandbox and its status; pod.image.pulled once every container's
// image is present; pod.container.started once every container has been
// started; pod.probe.ready when the pod first turns Ready; and
// pod.status.persisted when the write that first reports Ready is
// acknowledged. A restarted kubelet does not stamp pods it adopts.
//
// Choices where kstep differs from upstream, each a flag of kstep kubelet:
// crash-loop and image-pull backoff default to upstream's 10 s doubling to
// 5 min; a failed sync is retried after 500 ms doubling to 10 s (upstream:
// about 10 s); init containers, ephemeral containers, projected, configMap
// and secret volumes are not supported (a pod mounting them waits in
// CreateContainerConfigError on a real node; hollow nodes ignore volumes).
// Probes run per container and kind in the prober subpackage; gRPC probes
// fail as unsupported.
//
// The runtime is reached only through cri.Client, built on the generated
// CRI gRPC client interfaces: containerd over its unix socket on a real
// node, simruntime in process on a hollow one (NewHollow).
//
// It owns its node's Node and Lease objects and the status of pods bound to
// it. It must not touch etcd, other nodes, unbound pods' specs, or any
// actor but the apiserver and its own runtime.
package kubelet
