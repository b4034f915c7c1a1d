// Package chaos is kstep's chaos engine: it brings a cluster up through any
// provider (process, docker, auto: the registry of cluster/provider), runs a background load (a loadgen job plus its own write probe
// and watchers; or, when a fault names the client, the load as kstep load
// processes: load.go), injects the faults of a Scenario at their offsets —
// kill, stop, pause, restart, partition, isolate, link (delay, loss,
// blackhole, bandwidth, resets through the link proxies inside the
// actors), fill (etcd's space quota filled through the apiservers, then
// recovered: fill.go), and the API-level actions made of API requests
// only (api.go: drain a node through policy/v1 Eviction and uncordon it,
// delete a Node object, delete a Lease holder's pod; and on the load's
// own objects, delete its pods at a rate and scale its ReplicaSets or
// Deployments through their scale subresource and back) that run on every
// provider and are all that external (a cluster kstep does not run)
// takes: there the others are refused before anything starts
// (CheckExternal), the API-level ones need AllowDisruption except those
// on the load kstep created, and the checks
// that need etcd say they are not observable — aimed at roles resolved at the moment of injection (the etcd
// leader, the controller-manager leader from its Lease, one hollow
// kubelet through its actor's control, the client, ...), and measures
// each fault's detection, recovery and the longest wait of any probe
// request. Each detection and recovery carries its resolution (the 100 ms
// poll of the etcd leader and the Leases, the probe's write period; 0 for
// an event's own stamp), and a figure below it is reported as
// "< resolution (X ms)", not as a time. Afterwards it checks the invariants the seed's failure table
// promises (no acknowledged write lost, no ReplicaSet over its replicas,
// no pod bound twice, etcd members' hashes equal, convergence, the load's
// objects exactly, running pods unaffected on real nodes), and the
// correctness of what clients see at the API: linearizability of
// consistent GETs, consistent LISTs (the watch cache) and compare-and-set
// updates by porcupine (linearizable.go, its workload linworkload.go), and
// the six watch guarantees of etcd's robustness tests at the Kubernetes
// watch (watchguarantees.go: the throughout-watchers, their resumptions,
// the beat), and kstep's own watch-idle (a watcher without bookmarks of a
// set quieter than the apiservers' stall timeout is never cut outside a
// fault) — and evaluates a Gate, whose verdict is kstep chaos's exit
// code. The failpoint action arms a failpoint of apiservers started with
// --enable-failpoints (testing only: the negative controls).
//
// Shape: the schedule (schedule.go), the analysis of what the observers
// recorded (analyze.go) and the invariant checkers (invariants.go) are pure
// functions of recorded histories and an injected clock, tested on
// constructed inputs; goroutines live only in Run and the observers it
// starts (observe.go). Every request to etcd goes through one type,
// etcdClient (etcd.go: the leader's poll and the targets' resolution, the
// members' hashes, the replay of the history, a fill's recovery); nothing
// else in the package holds an etcd client. etcd's history for the checks
// is replayed at the end (etcdhistory.go, over etcdClient): the
// apiservers' compaction is held during a run, and the engine's own (a
// fill's recovery) keeps the history it drops.
// The report renderers (report.go) write chaos.json,
// chaos.md and chaos.html into a run directory.
//
// It owns: scenarios and their built-in set (scenarios/*.yaml), gates,
// target resolution, measurements, invariants, the chaos report section.
// It must never import the actors' packages (cluster/apiserver,
// cluster/etcd, cluster/storage, cluster/controller/...,
// cluster/scheduler/..., cluster/kubelet/... but its client hollowctl),
// not even through another package, nor a concrete provider, nor bench or
// results. It reaches the cluster only through a cluster/provider.Provider
// (a process inside an actor through Provider.Signal, never /proc),
// kubeconfigs, client-go, etcd's client (etcd.go, and
// cluster/etcdadmin's NOSPACE recovery over it), and the HTTP controls
// actors serve themselves, whose names and clients live with their
// mechanism: cluster/netfault's links, cluster/failpoint's failpoints,
// cluster/kubelet/hollowctl's kubelets. It shares with bench and kstep
// load the permission preflight (package preflight; its own Needs,
// needs.go, adds the scenario's accesses) and reads traces with
// cluster/trace's reader.
package chaos
