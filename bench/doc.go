// Package bench runs a benchmark: it brings a cluster up (any provider of
// cluster/provider's registry; it imports no implementation), runs a load job (package loadgen), tears the
// cluster down, joins every actor's step events by UID and computes per-step
// latency, end to end and throughput, each step beside the seed's documented
// range (package results writes and renders the outcome).
//
// Profiles are built in (quick, nightly, scale) or read from YAML (kind
// BenchProfile: the cluster's provider.Topology plus a LoadJob).
//
// The join (Analyze) is pure: events in, results out, tested on synthetic
// events. It never invents a step: a step no actor of the run stamps is
// reported unavailable; a pod missing a step that some actor of the run does
// stamp makes the run invalid and is listed by name.
package bench
