// Package results owns a run directory and what is computed from it alone:
//
//	run.json          the run's summary (schema Schema), the only input of
//	                  `kstep report` and `kstep compare`
//	events.jsonl.gz   every actor's step events, merged and sorted by time
//	steps.csv         one row per step
//	report.md         the human report; report.html the same with SVG charts
//	metrics.prom      the run's figures in the Prometheus text exposition
//	                  format (export.go), the series Push sends to a
//	                  Pushgateway
//	set.json          in a set directory: its runs (run-01, ...), ReadSet
//
// It holds the statistics (percentiles, verdicts against the documented
// ranges, the exact and the large-sample Mann–Whitney U test, the
// Hodges–Lehmann shift and its interval) and the comparison of two sets of
// runs (CompareSets: per-run p50 and p99, between runs). It must not talk to
// a cluster or know how a run was produced (that is package bench); Push, to
// a Pushgateway, is its only network call.
package results
