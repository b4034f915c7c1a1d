// Package results owns a run directory and what is computed from it alone:
//
//	run.json          the run's summary (schema Schema), the only input of
//	                  `kstep report`, `kstep compare` and `kstep history`
//	events.jsonl.gz   every actor's step events, merged and sorted by time
//	steps.csv         one row per step and node kind (nodes, simulated)
//	report.md         the human report; report.html the same with SVG charts
//	metrics.prom      the run's figures in the Prometheus text exposition
//	                  format (export.go), the series Push sends to a
//	                  Pushgateway
//	set.json          in a set directory: its runs (run-01, ...), ReadSet,
//	                  and each step across them (SetRows: median, range,
//	                  run-to-run CV of the runs' p50 and p99)
//	set.md, set.html  the set's report (setreport.go): its runs, its rows
//	                  with their CV, its warm-up
//
// and, over several sets or runs of successive builds (`kstep history`),
//
//	history.md        per step, each set's median p50 and p99 across its
//	                  runs with their range, and each set compared with the
//	                  one before (CompareSets); history.html the same with
//	                  an inline SVG trend chart per step
//
// The reports put each step beside its documented time scale, per node kind
// (ReplicaSet-level steps as all; simulated steps get no verdict), the
// populations and their share of step ⑦ beside the documented 80–95 %, how
// each step is measured (its causal chain), and why a run is invalid or
// disrupted first; the costs per pod (writes by resource, CPU by actor over
// the load, cpu.go); what part of a write's time was etcd's (writes.go
// WriteTime, from the apiservers' etcd requests); and a capacity search's curve and answer (findmax.go:
// its steps, offered against achieved pods/s and p99, as tables, an SVG
// and metrics).
//
// It holds the statistics (percentiles, verdicts against the documented
// ranges, the exact and the large-sample Mann–Whitney U test, the
// Hodges–Lehmann shift and its interval) and the comparison of two sets of
// runs (CompareSets: per-run p50 and p99, between runs, the verdict's p's
// adjusted over every row together by step-down min-P over relabellings of
// the runs, family.go; across the cross
// view, external runs against runs of the outside view, on the rows both
// have, with the rows left out and why); a calibration of one build's
// runs (calibrate.go: each row's run-to-run noise and the smallest shift a
// comparison can see, calibration.json); and change points over a history
// (changepoint.go: E-divisive with a fixed-seed permutation test). It must
// not talk to a cluster or run one (that is package bench); what it knows
// of how a run was produced is what run.json records of it: the provider's
// name and the cluster's shape (cluster/provider's Topology, the type it
// imports for that and nothing else of a provider), compared
// in topologyDiff (compare.go). Push, to a Pushgateway, is its only network
// call.
package results
