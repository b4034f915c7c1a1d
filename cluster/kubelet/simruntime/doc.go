// Package simruntime is a hollow node's container runtime: CRI's
// RuntimeService and ImageService (runtimeapi.RuntimeServiceServer and
// ImageServiceServer) implemented in memory, driven by the unchanged
// kubelet through cri.InProcess.
//
// Behaviour comes from a small Config (YAML or JSON, or the built-in
// profiles zero, realistic and flaky):
//
//	latency:                      # per CRI method; "*" for the rest
//	  RunPodSandbox: {dist: lognormal, median: 335ms, sigma: 0.25}
//	  PullImage:     {dist: uniform, min: 200ms, max: 2s}
//	  "*":           {dist: fixed, value: 1ms}
//	failures:                     # fraction of calls failing (Unavailable)
//	  StartContainer: 0.02
//	startDelay: {dist: fixed, value: 500ms}   # until probes pass
//	seed: 1
//
// Pod IPs come from the node's range (NodeCIDR: a /24 of 240.0.0.0/4,
// reserved and routed nowhere); the range's first host address is the
// node's. A started container's HTTP, TCP and exec probes pass once its
// start delay is over (the container's START_DELAY environment variable,
// which the real workload image also honours, overrides the model). More
// environment variables model an application's misbehaviour:
// SIM_EXIT_AFTER (it exits by itself, with SIM_EXIT_CODE, default 0) and
// SIM_UNHEALTHY_AFTER (its probes fail from then on). A Job's container
// (its pod labelled batch.kubernetes.io/job-name, as the Job controller
// labels them) does its work and exits 0 after the Config's jobDuration
// (DefaultJobDuration, 2 s, when unset) unless SIM_EXIT_AFTER says
// otherwise. An image tagged "missing" cannot be pulled.
//
// Stats (ListContainerStats, ListPodSandboxStats) are simulated: a running
// container's cpu is a steady 30–70 % of its request (10m without one),
// capped by its limit, its cumulative usage growing from its start; its
// memory working set ramps up to 40 % of its limit (16 MiB and a little
// per millicore without one). OpenLog renders a container's log in CRI
// format from what its model did (started, image, listening, failing
// health, exit), stamped with when; the kubelet reads it as the log file.
// Exec, Attach and PortForward answer Unimplemented ("hollow node:
// containers run no processes").
//
// Like containerd it refuses a second sandbox of the same pod and attempt,
// and containers of images not pulled; calls are counted (Calls) and
// sandboxes counted by state (Sandboxes) for tests.
//
// The labels and annotations in its answers are the runtime's own maps,
// copied from the request that made the sandbox or container and never
// changed after: callers only read them (the kubelet does). A hundred
// hollow nodes relist every second, and copying them per item per relist
// took 3 % of the hollow nodes' CPU at 10,000 pods (pprof).
//
// It owns its in-memory state only. It must not reach the network, the
// apiserver, or the host.
package simruntime
