package results

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"
)

// A run's figures in the Prometheus data model: metrics.prom in the text
// exposition format, and the same series pushed to a Pushgateway.
//
// Every series of metrics.prom carries the run's profile and provider:
// they are what tells one benchmark's series from another's, the grouping
// key of a push. What changes from build to build (the run's id, the kstep
// version, the runtime) is on one series, kstep_run_info, joined in with
// group_left, so a new version does not start a new series for every figure.
//
// Figures of one finished run are gauges, not counters, as for any batch
// job: a push replaces the last run's values, so they are not monotonic and
// rate() means nothing over them. Latency distributions are summaries
// (quantiles 0.5, 0.9, 0.99 and 1 for the max, as go_gc_duration_seconds
// does); a summary's _sum is NaN where run.json keeps the quantiles but not
// the samples, and its quantiles are NaN when it has no sample.

// Job is the Pushgateway job of every push.
const Job = "kstep"

// PushTimeout bounds one push: a gateway that does not answer must not hold
// up the end of a benchmark.
const PushTimeout = 30 * time.Second

// GroupingKey is r's Pushgateway grouping key beside job="kstep", and the
// labels every series of metrics.prom carries: a run replaces the last one
// of its profile on its provider and leaves the others alone. The run's id
// is not part of it: every run would then stay in the gateway forever, and
// Prometheus keeps the history anyway.
func GroupingKey(r *Run) prometheus.Labels {
	return prometheus.Labels{"profile": r.Profile, "provider": r.Provider}
}

// Metrics writes r's figures in the Prometheus text exposition format.
func Metrics(w io.Writer, r *Run) error {
	reg, err := registry(r, true)
	if err != nil {
		return err
	}
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("metrics: %s: %w", mf.GetName(), err)
		}
	}
	return nil
}

func writeMetrics(path string, r *Run) error {
	var b bytes.Buffer
	if err := Metrics(&b, r); err != nil {
		return fmt.Errorf("metrics.prom: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("metrics.prom: %w", err)
	}
	return nil
}

// Push replaces the metrics of r's group (job "kstep", r's profile and
// provider: GroupingKey) on the Pushgateway at url with the series of
// metrics.prom, within PushTimeout. The gateway adds the grouping labels to
// every series, so the pushed ones do not carry them.
func Push(ctx context.Context, url string, r *Run) error {
	reg, err := registry(r, false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, PushTimeout)
	defer cancel()
	p := push.New(url, Job).Gatherer(reg).Client(&http.Client{Timeout: PushTimeout})
	key := GroupingKey(r)
	for _, name := range slices.Sorted(maps.Keys(key)) {
		p = p.Grouping(name, key[name])
	}
	// PUT (Push, not Add): a step or an API row the last run had and this
	// one lacks must not linger beside this run's series.
	if err := p.PushContext(ctx); err != nil {
		return &pushError{url: url, err: err}
	}
	return nil
}

// pushError names the gateway. The push library's error holds the request's
// URL and, when the gateway answered, its status code and body; the body
// ends in a newline, trimmed here.
type pushError struct {
	url string
	err error
}

func (e *pushError) Error() string {
	return "push to pushgateway " + e.url + ": " + strings.TrimSpace(e.err.Error())
}

func (e *pushError) Unwrap() error { return e.err }

// registry holds r's metrics; identity puts the profile and provider on
// every series (a push leaves them to the grouping key). Its Gather fails
// on two series of the same name and labels, which would otherwise make
// the exposition ambiguous.
func registry(r *Run, identity bool) (*prometheus.Registry, error) {
	var constLabels prometheus.Labels
	if identity {
		constLabels = GroupingKey(r)
	}
	b := &builder{constLabels: constLabels}
	b.run(r)
	if b.err != nil {
		return nil, fmt.Errorf("metrics: %w", b.err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(b); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return reg, nil
}

// builder gathers const metrics; it is the Collector of the registry. The
// first error (a label value that is not UTF-8, say) stops it.
type builder struct {
	constLabels prometheus.Labels
	descs       []*prometheus.Desc
	metrics     []prometheus.Metric
	err         error
}

func (b *builder) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range b.descs {
		ch <- d
	}
}

func (b *builder) Collect(ch chan<- prometheus.Metric) {
	for _, m := range b.metrics {
		ch <- m
	}
}

func (b *builder) desc(name, help string, labels ...string) *prometheus.Desc {
	d := prometheus.NewDesc(name, help, labels, b.constLabels)
	b.descs = append(b.descs, d)
	return d
}

func (b *builder) add(m prometheus.Metric, err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
	if err == nil {
		b.metrics = append(b.metrics, m)
	}
}

func (b *builder) gauge(d *prometheus.Desc, v float64, labels ...string) {
	b.add(prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...))
}

// summary adds a distribution in run.json's unit: div converts it to the
// base unit (perMS for ms to seconds, perPercent for a ratio): a division
// rounds once, where a product with 1e-3 (not exact in binary) rounds
// twice. sumKnown says whether sum is the samples' (in the same unit);
// without, _sum is NaN.
func (b *builder) summary(d *prometheus.Desc, s Summary, div float64, sum float64, sumKnown bool, labels ...string) {
	q := map[float64]float64{0.5: s.P50, 0.9: s.P90, 0.99: s.P99, 1: s.Max}
	b.quantiles(d, uint64(max(s.Count, 0)), q, div, sum, sumKnown, labels...)
}

func (b *builder) quantiles(d *prometheus.Desc, count uint64, q map[float64]float64, div float64, sum float64, sumKnown bool, labels ...string) {
	for k, v := range q {
		// Summarize reports 0 for an empty distribution; Prometheus's
		// summaries say NaN: there is no quantile of nothing.
		if count == 0 {
			q[k] = math.NaN()
		} else {
			q[k] = v / div
		}
	}
	switch {
	case count == 0:
		sum = 0
	case !sumKnown:
		sum = math.NaN()
	default:
		sum /= div
	}
	b.add(prometheus.NewConstSummary(d, count, sum, q, labels...))
}

// stepSum is the sum of a step's samples in ms, when run.json kept them all.
func stepSum(s Step) (float64, bool) {
	if len(s.SamplesMS) != s.Count {
		return 0, false
	}
	var sum float64
	for _, v := range s.SamplesMS {
		sum += v
	}
	return sum, true
}

// nodes is a step's population; run.json v2 wrote none (all pods).
func nodes(n string) string {
	if n == "" {
		return NodesAll
	}
	return n
}

func boolValue(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// verdicts are the states of kstep_step_verdict: every one is exposed, 1
// for the step's verdict and 0 for the others, so that a query for
// slower steps finds a 0, not nothing, where a step is not slower.
var verdicts = []string{Faster, Within, Slower, NA, "simulated"}

// Divisors to base units.
const (
	perMS      = 1e3 // ms in a second
	perPercent = 1e2 // percent in a ratio of 1
)

// run adds every figure of r.
func (b *builder) run(r *Run) {
	info := b.desc("kstep_run_info", "The run: its id (the run directory), the kstep version that ran it and what ran the pods (hollow or real). Always 1.",
		"id", "version", "runtime")
	b.gauge(info, 1, r.ID, r.Version, r.Runtime)
	if t, err := time.Parse(time.RFC3339, r.StartedAt); err == nil {
		b.gauge(b.desc("kstep_run_start_time_seconds", "When the run started, in seconds since the Unix epoch."),
			float64(t.UnixNano())/1e9)
	}
	b.gauge(b.desc("kstep_run_duration_seconds", "How long the run took, from its start to the cluster's teardown."), r.DurationS)
	b.gauge(b.desc("kstep_run_valid", "1 when the run is valid (every pod carries every step its actors stamp, no negative sample, ...), 0 otherwise; report.md says why."),
		boolValue(r.Valid))
	b.gauge(b.desc("kstep_run_disrupted", "1 when a leader Lease changed hands or a node left Ready during the load: its latencies are not those of a healthy cluster."),
		boolValue(r.Disrupted))
	if len(r.Disruptions) > 0 {
		byKind := map[string]int{}
		for _, d := range r.Disruptions {
			byKind[d.Kind]++
		}
		d := b.desc("kstep_run_disruptions", "Disruptions seen during the load, by kind (leader: a Lease changed hands; node: a node left Ready).", "kind")
		for _, k := range slices.Sorted(maps.Keys(byKind)) {
			b.gauge(d, float64(byKind[k]), k)
		}
	}
	b.gauge(b.desc("kstep_run_incomplete_pods", "Pods missing a step that the run's actors stamp; above 0 makes the run invalid."), float64(len(r.Incomplete)))
	b.gauge(b.desc("kstep_run_negative_samples", "Samples whose end was stamped before their start (a bug in a causal chain); above 0 makes the run invalid."), float64(len(r.Negative)))

	top := r.Cluster.Topology
	cn := b.desc("kstep_cluster_nodes", "Nodes of the measured cluster, by kind: real (containerd) or hollow (simulated runtime).", "nodes")
	b.gauge(cn, float64(top.RealNodes), NodesReal)
	b.gauge(cn, float64(top.HollowNodes), NodesHollow)

	b.gauge(b.desc("kstep_pods", "Pods of the load the run observed."), float64(r.Pods))
	b.gauge(b.desc("kstep_trace_events", "Step events the actors recorded, merged."), float64(r.Events))
	b.gauge(b.desc("kstep_throughput_pods_per_second", "Ready pods over the time from the first client send to the last pod Ready."), r.Throughput.PodsPerS)
	if len(r.Drops) > 0 {
		d := b.desc("kstep_trace_dropped_events", "Trace events an actor lost during the run; absent for an actor that does not report its drops.", "actor")
		for _, a := range slices.Sorted(maps.Keys(r.Drops)) {
			b.gauge(d, float64(r.Drops[a]), a)
		}
	}

	b.steps(r)

	if fm := r.FindMax; fm != nil {
		b.gauge(b.desc("kstep_findmax_pods_per_second", "A capacity search's answer: the pods/s achieved at the highest offered rate that held the SLO (0: none held it)."), fm.PodsPerS)
		b.gauge(b.desc("kstep_findmax_offered_pods_per_second", "A capacity search's highest offered rate that held the SLO."), fm.OfferedPodsPerS)
		bracketed := 0.0
		if fm.Bracketed {
			bracketed = 1
		}
		b.gauge(b.desc("kstep_findmax_bracketed", "1 when the search found a rate that broke the SLO above the answer (the answer is the capacity, not a lower bound)."), bracketed)
		offered := b.desc("kstep_findmax_step_offered_pods_per_second", "A search step's offered rate.", "step")
		achieved := b.desc("kstep_findmax_step_achieved_pods_per_second", "A search step's pods Ready over the time from its first send to its last pod Ready.", "step")
		p99 := b.desc("kstep_findmax_step_p99_seconds", "A search step's p99 of the SLO's latency.", "step")
		held := b.desc("kstep_findmax_step_held", "1 when the search step held the SLO.", "step")
		for _, st := range fm.Steps {
			step := fmt.Sprint(st.Step)
			b.gauge(offered, st.OfferedPodsPerS, step)
			b.gauge(achieved, st.AchievedPodsPerS, step)
			b.gauge(p99, st.P99MS/1000, step)
			h := 0.0
			if st.Held {
				h = 1
			}
			b.gauge(held, h, step)
		}
	}

	if len(r.API) > 0 {
		lat := b.desc("kstep_api_request_duration_seconds", "Apiserver request latency during the load by verb and resource (group/resource/subresource, core group empty), summed over every apiserver and every client; quantiles interpolated within the histogram's buckets.",
			"verb", "resource")
		errs := b.desc("kstep_api_request_errors", "Apiserver requests answered 5xx or 429 during the load, by verb and resource.", "verb", "resource")
		for _, a := range r.API {
			// The mean is the histogram's sum over its count: the sum is
			// known exactly.
			b.quantiles(lat, a.Count, map[float64]float64{0.5: a.P50MS, 0.99: a.P99MS}, perMS, a.MeanMS*float64(a.Count), true, a.Verb, a.Resource)
			b.gauge(errs, float64(a.Errors), a.Verb, a.Resource)
		}
	}
	if len(r.EtcdRequests) > 0 {
		lat := b.desc("kstep_apiserver_etcd_request_duration_seconds", "The apiservers' own etcd requests by operation and resource type (the key's /registry/<type>/ segment), retries included, summed over every apiserver; quantiles interpolated within the histogram's buckets.",
			"operation", "type")
		for _, a := range r.EtcdRequests {
			b.quantiles(lat, a.Count, map[float64]float64{0.5: a.P50MS, 0.99: a.P99MS}, perMS, a.MeanMS*float64(a.Count), true, a.Verb, a.Resource)
		}
	}

	if len(r.Actors) > 0 {
		cpu := b.desc("kstep_actor_cpu_seconds", "CPU time (user + system) an actor's processes used over the run.", "actor")
		rss := b.desc("kstep_actor_peak_resident_memory_bytes", "Peak resident memory of an actor's processes over the run.", "actor")
		for _, a := range r.Actors {
			b.gauge(cpu, a.CPUSeconds, a.Actor)
			// run.json has MiB of a byte count: back to whole bytes.
			b.gauge(rss, math.Round(a.PeakRSSMB*(1<<20)), a.Actor)
		}
		if _, ok := r.LoadCPU(); ok {
			load := b.desc("kstep_actor_load_cpu_seconds", "CPU time (user + system) an actor's processes used during the load alone.", "actor")
			for _, a := range r.Actors {
				b.gauge(load, a.LoadCPUSeconds, a.Actor)
			}
			if ms, ok := r.CPUMsPerPod(); ok {
				per := b.desc("kstep_cluster_cpu_per_pod_seconds", "The whole cluster's CPU time (core-seconds) during the load divided by the run's pods.")
				b.gauge(per, ms/1000)
			}
		}
	}

	b.etcd(r)
}

// steps adds the step latencies, the end to end and the populations.
func (b *builder) steps(r *Run) {
	lat := b.desc("kstep_step_latency_seconds", "Latency of one step (transition) of a pod's path, over the pods of one node kind (all, real or hollow); quantile 1 is the max.",
		"step", "transition", "nodes")
	doc := b.desc("kstep_step_documented_latency_seconds", "The documented time scale of a step's p50, its lower and upper bound.",
		"step", "transition", "nodes", "bound")
	verdict := b.desc("kstep_step_verdict", "A step's p50 against its documented range: 1 for the step's verdict (faster, within, slower, n/a, simulated), 0 for the others.",
		"step", "transition", "nodes", "verdict")
	sim := b.desc("kstep_step_simulated", "1 when the step ran on the hollow nodes' simulated runtime: it measures the latency profile, not a runtime.",
		"step", "transition", "nodes")
	for _, s := range r.Steps {
		n := nodes(s.Nodes)
		sum, ok := stepSum(s)
		b.summary(lat, s.Summary, perMS, sum, ok, s.Step, s.Name, n)
		if s.DocumentedMS != nil {
			b.gauge(doc, s.DocumentedMS[0]/perMS, s.Step, s.Name, n, "lower")
			b.gauge(doc, s.DocumentedMS[1]/perMS, s.Step, s.Name, n, "upper")
		}
		if s.Verdict != "" {
			states := verdicts
			if !slices.Contains(states, s.Verdict) {
				states = append(append([]string(nil), verdicts...), s.Verdict)
			}
			for _, v := range states {
				b.gauge(verdict, boolValue(v == s.Verdict), s.Step, s.Name, n, v)
			}
		}
		b.gauge(sim, boolValue(s.Simulated), s.Step, s.Name, n)
	}

	e2e := b.desc("kstep_end_to_end_latency_seconds", "End to end latency of a pod, client sent the ReplicaSet to pod Ready observed, over the pods of one node kind (all, real or hollow); quantile 1 is the max.",
		"nodes")
	sum, ok := stepSum(r.EndToEnd)
	b.summary(e2e, r.EndToEnd.Summary, perMS, sum, ok, nodes(r.EndToEnd.Nodes))
	if len(r.Populations) == 0 {
		return
	}
	pods := b.desc("kstep_population_pods", "Pods of one node kind (real or hollow).", "nodes")
	info := b.desc("kstep_population_info", "What ran a node kind's pods: containerd, or the simulated runtime and its latency profile. Always 1.", "nodes", "runtime")
	share := b.desc("kstep_population_step7_share_ratio", "Each pod's share of step ⑦ (kubelet noticed to readiness) in its end to end, over the pods of one node kind; documented 0.80–0.95. Quantile 1 is the max; _sum is NaN (run.json keeps no samples of it).",
		"nodes")
	for _, p := range r.Populations {
		n := nodes(p.Nodes)
		b.gauge(pods, float64(p.Pods), n)
		b.gauge(info, 1, n, p.Runtime)
		sum, ok := stepSum(p.EndToEnd)
		b.summary(e2e, p.EndToEnd.Summary, perMS, sum, ok, n)
		b.summary(share, p.Step7SharePct, perPercent, 0, false, n)
	}
}

// etcd adds each member's figures over the load.
func (b *builder) etcd(r *Run) {
	if len(r.Etcd) == 0 {
		return
	}
	const m = "member"
	leader := b.desc("kstep_etcd_leader", "1 for the etcd member that led when the load ended.", m)
	changes := b.desc("kstep_etcd_leader_changes", "Leader changes an etcd member saw during the load; above 0 without faults means elections under load.", m)
	committed := b.desc("kstep_etcd_proposals_committed", "Raft proposals an etcd member committed during the load.", m)
	failed := b.desc("kstep_etcd_proposals_failed", "Raft proposals that failed on an etcd member during the load.", m)
	heartbeats := b.desc("kstep_etcd_heartbeat_send_failures", "Heartbeats an etcd member failed to send during the load.", m)
	slow := b.desc("kstep_etcd_slow_applies", "Applies that took over 100 ms on an etcd member during the load.", m)
	fsync := b.desc("kstep_etcd_wal_fsync_duration_seconds", "WAL fsync latency of an etcd member during the load (_count: the fsyncs; _sum is NaN, run.json keeps quantiles only).", m)
	commit := b.desc("kstep_etcd_backend_commit_duration_p99_seconds", "p99 of an etcd member's backend commit latency during the load.", m)
	for _, e := range r.Etcd {
		b.gauge(leader, boolValue(e.Leader), e.Name)
		b.gauge(changes, float64(e.LeaderChanges), e.Name)
		b.gauge(committed, float64(e.ProposalsCommitted), e.Name)
		b.gauge(failed, float64(e.ProposalsFailed), e.Name)
		b.gauge(heartbeats, float64(e.HeartbeatFailures), e.Name)
		b.gauge(slow, float64(e.SlowApplies), e.Name)
		b.quantiles(fsync, e.Fsyncs, map[float64]float64{0.5: e.FsyncP50MS, 0.99: e.FsyncP99MS}, perMS, 0, false, e.Name)
		b.gauge(commit, e.BackendCommitP99MS/perMS, e.Name)
	}
}
