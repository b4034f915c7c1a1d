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
//
// It holds the statistics (percentiles, verdicts against the documented
// ranges, the Mann–Whitney U test) and the comparison of two runs. It must not
// talk to a cluster or know how a run was produced (that is package bench);
// Push, to a Pushgateway, is its only network call.
package results
