// Package bench runs a benchmark: it brings a cluster up (any provider of
// cluster/provider's registry; it imports no implementation), runs a load
// job (package loadgen), tears the cluster down, joins every actor's step
// events by UID and computes per-step latency, end to end and throughput,
// each step beside its documented time scale (package results writes and
// renders the outcome). RunSet repeats a run N times, each on a fresh
// cluster, into a set directory (what `kstep compare` judges); RunAB runs
// two sets, each side's clusters on its own kstep binary, interleaved in
// ABOrder (A B B A ...), for `kstep bench --ab`.
//
// ClusterSpec is the one place the cluster of a run is decided: the
// profile's Topology plus the flags a bench run adds (one endpoints writer
// when the profile asks for it, upstream's lease timing for leader
// election and the nodes' heartbeat (ApplyLeaseTiming, which `kstep up`
// also applies),
// --endpoints-stamp, the hollow kubelets' Events explicit), with no real
// node the machine cannot run. Run starts it;
// `kstep up --profile` starts the same cluster, so that a run through
// --provider external against it measures what a process run of the
// profile measures (compare's cross view). NotAsUp lists every setting in
// which that cluster differs from the one `kstep up` starts with its
// defaults (run.json's cluster.not_as_up, the report's header).
//
// With the external provider (a cluster kstep does not run, external.go)
// it records the cluster (version, nodes and their kinds), asks the
// apiserver whether the credentials may do all the run does (package
// preflight: a *preflight.PermissionError names what they may not), labels all the job creates
// with provider.RunLabel for the provider to remove, and measures the
// steps visible from outside from the load generator's own watches
// (loadgen.Options.Outside); the steps only a component sees are reported
// not observable on this cluster. The same preflight is what `kstep
// load --provider external` and kstep chaos ask before theirs. run.json's outside_view
// records whether the outside view was taken (always on external, the
// profile's outsideView elsewhere): what compare's cross view needs.
//
// With Options.FindMax the run is a capacity search (findmax.go) instead
// of the profile's one job: on the one cluster, the profile's object is
// offered step after step at a rising rate (×Factor), each step a job of its
// own that deletes its pods at the end, then bisection between the highest
// rate that held the SLO and the lowest that broke it. Each step is judged
// from its own load generator trace (traces/loadgen-fmNN.jsonl) through the
// outside view, so the search means the same on every provider; the run's
// step table is the answer's step, its costs per pod over every step's pods.
// The search's core (search) is pure and tested on synthetic capacities.
//
// Each run brackets its load with the provider's Usage, so the actors
// table has every actor's CPU over the load alone: the cost of a pod by
// actor.
//
// At the end of the load it reads every apiserver's /metrics
// (apimetrics.go): the request histograms by verb and resource (run.json
// api) and the apiservers' own etcd request histograms by operation and
// resource type (etcd_requests), merged over the apiservers; the report
// splits a write's time between them.
//
// Profiles are built in (quick, nightly, scale, light, saturation) or read from YAML (kind
// BenchProfile: the cluster's provider.Topology, a LoadJob, a repeat count,
// and endpointsStamp: which controller stamps step ⑧'s endpoints.updated,
// passed to every controller-manager as --endpoints-stamp and recorded in
// run.json).
//
// A run's rows may leave out the start of its load (Input.WarmUp, a
// profile's warmUp, --warm-up-objects/--warm-up-duration): the first
// objects sent, whose pods still count for validity and throughput;
// run.json's warm_up records it.
//
// The join (Analyze) is pure: events in, results out, tested on synthetic
// events. Every transition is measured between two stamps of which the first
// causally precedes the second (each row's Chain says why); a watcher's
// receipt starts from its own apiserver's watch-cache stamp, since etcd
// notifies watchers before it answers the writer. A negative sample is a
// broken chain and makes the run invalid, naming the pod. Pod-level steps
// are split by node kind (real containerd, hollow), and step ⑦ on hollow
// nodes is marked simulated. It never invents a step: a step no actor of
// the run stamps is reported unavailable; a pod missing a step that some
// actor of the run does stamp makes the run invalid and is listed by name.
package bench
