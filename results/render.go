package results

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

func fmtMS(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.1fs", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// FormatCV is a run-to-run coefficient of variation for a table: percent
// to 0.1, "—" when fewer than two runs give it none.
func FormatCV(cvPct float64, runs int) string {
	if runs < 2 {
		return "—"
	}
	return fmt.Sprintf("%.1f", cvPct)
}

// fmtLatency is fmtMS with its unit.
func fmtLatency(v float64) string {
	s := fmtMS(v)
	if strings.HasSuffix(s, "s") {
		return s
	}
	return s + " ms"
}

// fmtDrops lists each actor's trace drops in name order.
func fmtDrops(r *Run) string {
	names := make([]string, 0, len(r.Drops))
	for n := range r.Drops {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, r.Drops[n])
	}
	if len(parts) == 0 {
		return "none reported"
	}
	return strings.Join(parts, ", ")
}

func documented(s Step) string {
	if s.DocumentedMS == nil {
		return "—"
	}
	return fmt.Sprintf("%s–%s", fmtMS(s.DocumentedMS[0]), fmtMS(s.DocumentedMS[1]))
}

// nodesOf is the population a step's samples come from; runs before v3
// did not split steps by node kind, so theirs are every pod's.
func nodesOf(nodes string) string {
	if nodes == "" {
		return NodesAll
	}
	return nodes
}

// simulatedLabel is what a simulated row shows instead of a verdict: the
// latency profile the hollow runtime played, which is what such a row
// measures.
func simulatedLabel(r *Run) string {
	if p := r.Cluster.Topology.LatencyProfile; p != "" {
		return "simulated (" + p + ")"
	}
	for _, p := range r.Populations {
		if strings.HasPrefix(p.Runtime, "simulated") {
			return p.Runtime
		}
	}
	return "simulated"
}

// verdictCell is a step's verdict, but never faster or slower for a
// simulated step: the documented range is a real runtime's.
func verdictCell(r *Run, s Step) string {
	if s.Simulated {
		return simulatedLabel(r)
	}
	return s.Verdict
}

// nodeOrder is the order of the groups of the step table: ReplicaSet-level
// steps (all) first, as the chain starts there, then each node kind's pods.
var nodeOrder = map[string]int{NodesAll: 0, NodesReal: 1, NodesHollow: 2}

// tableSteps are the steps in the report's order: grouped by population
// (all, real, hollow, any other kind last), chain order within a group,
// the whole run's end to end last.
func tableSteps(r *Run) []Step {
	steps := append([]Step(nil), r.Steps...)
	rank := func(s Step) int {
		if o, ok := nodeOrder[nodesOf(s.Nodes)]; ok {
			return o
		}
		return len(nodeOrder)
	}
	sort.SliceStable(steps, func(i, j int) bool { return rank(steps[i]) < rank(steps[j]) })
	return append(steps, r.EndToEnd)
}

func rows(r *Run) [][]string {
	var out [][]string
	for _, s := range tableSteps(r) {
		out = append(out, []string{s.Step, s.Name, nodesOf(s.Nodes), fmt.Sprint(s.Count), fmtMS(s.P50), fmtMS(s.P90), fmtMS(s.P99), fmtMS(s.Max), documented(s), verdictCell(r, s)})
	}
	return out
}

var header = []any{"step", "transition", "nodes", "n", "p50 ms", "p90 ms", "p99 ms", "max ms", "documented ms", "verdict"}

// disrupted: the run says so, or lists a disruption (runs before v3 only
// listed them).
func disrupted(r *Run) bool { return r.Disrupted || len(r.Disruptions) > 0 }

// Table renders the step table for a terminal.
func Table(w io.Writer, r *Run) error {
	if disrupted(r) {
		fmt.Fprintf(w, "DISRUPTED: %d disruption(s) during the load (listed below); its latencies are not a healthy cluster's\n", len(r.Disruptions))
	}
	if fm := r.FindMax; fm != nil {
		fmt.Fprintln(w, "capacity search (find-max), step by step:")
		if err := termTable(w, findMaxHeader, findMaxRows(fm)); err != nil {
			return err
		}
		fmt.Fprintln(w, findMaxAnswer(fm))
		if fm.Step > 0 {
			fmt.Fprintf(w, "\nstep %d, the answer's, step by step:\n", fm.Step)
		}
	}
	if err := termTable(w, header, rows(r)); err != nil {
		return err
	}
	fmt.Fprintf(w, "throughput: %.1f pods/s to Ready over %d pods; valid: %v\n", r.Throughput.PodsPerS, r.Pods, r.Valid)
	for _, why := range r.Invalid {
		fmt.Fprintln(w, "invalid:", why)
	}
	if len(r.NotObservable) > 0 {
		fmt.Fprintln(w, "not observable on this cluster (only its components see them):", strings.Join(r.NotObservable, ", "))
	} else if len(r.Unavailable) > 0 {
		fmt.Fprintln(w, "unavailable (no actor of this run stamps them):", strings.Join(r.Unavailable, ", "))
	}
	if line := sourcesLine(r); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(r.Populations) > 0 {
		fmt.Fprintln(w, "\npods by node kind (share of ⑦ in each pod's end to end):")
		if err := termTable(w, populationHeader, populationRows(r)); err != nil {
			return err
		}
		for _, line := range shareSentences(r) {
			fmt.Fprintln(w, line)
		}
	}
	if len(r.Negative) > 0 {
		fmt.Fprintf(w, "\nnegative samples (%d), each end stamped before its start:\n", len(r.Negative))
		if err := termTable(w, negativeHeader, negativeRows(r)); err != nil {
			return err
		}
		if len(r.Negative) > maxListed {
			fmt.Fprintf(w, "… %d more in run.json\n", len(r.Negative)-maxListed)
		}
	}
	if len(r.Disruptions) > 0 {
		fmt.Fprintln(w, "\ndisruptions during the load (a healthy run has none; every latency after one is distorted):")
		if err := termTable(w, disruptionHeader, disruptionRows(r)); err != nil {
			return err
		}
	}
	if rows := writesRows(r, 8); rows != nil {
		fmt.Fprintln(w, "\nwrites per pod, busiest 8 resources (all in report.md):")
		if err := termTable(w, writesHeader, rows); err != nil {
			return err
		}
		fmt.Fprintln(w, writesSentence(r))
	}
	if len(r.API) > 0 {
		fmt.Fprintln(w, "\nAPI latency, busiest 8 (all in report.md):")
		if err := termTable(w, apiHeader, apiRows(r, 8)); err != nil {
			return err
		}
		if line := writeTimeSentence(r); line != "" {
			fmt.Fprintln(w, line+" (etcd's requests by resource in report.md)")
		}
	}
	if len(r.Etcd) > 0 {
		fmt.Fprintln(w, "\netcd during the load:")
		if err := termTable(w, etcdHeader, etcdRows(r)); err != nil {
			return err
		}
		if rows := etcdDBRows(r); len(rows) > 0 {
			if err := termTable(w, etcdDBHeader, rows); err != nil {
				return err
			}
		}
	}
	if len(r.Actors) > 0 {
		fmt.Fprintln(w, "\nactors:")
		h, rows := actorTable(r)
		if err := termTable(w, h, rows); err != nil {
			return err
		}
		if line := cpuSentence(r); line != "" {
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

func termTable(w io.Writer, header []any, rows [][]string) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header(header...)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// maxListed bounds the pods a report lists (missing steps, negative
// samples); run.json has them all.
const maxListed = 50

// Markdown is report.md.
func Markdown(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kstep run %s\n\n", r.ID)
	build := ""
	if r.Version != "" {
		build = fmt.Sprintf(", build `%s`", r.Version)
	}
	fmt.Fprintf(&b, "profile `%s`, provider `%s`, runtime `%s`%s, started %s, %.1f s. **valid: %v**\n\n", r.Profile, r.Provider, r.Runtime, build, r.StartedAt, r.DurationS, r.Valid)
	c := r.Cluster
	fmt.Fprintf(&b, "cluster: %d etcd, %d apiservers, %d controller-managers, %d schedulers, %d %s nodes; load: %d objects × %d replicas at %.0f qps\n\n",
		c.Topology.EtcdMembers, c.Topology.APIServers, c.Topology.ControllerManagers, c.Topology.Schedulers, c.Topology.Nodes(), c.NodeKind, c.Objects, c.Replicas, c.QPS)
	if c.Security != "" {
		fmt.Fprintf(&b, "apiserver security: %s\n\n", c.Security)
	}
	if t := c.NotAsUpText(); t != "" {
		fmt.Fprintf(&b, "%s\n\n", t)
	}
	if t := r.HollowEventsText(); t != "" {
		fmt.Fprintf(&b, "%s\n\n", t)
	}
	if r.EndpointsStamp != "" {
		fmt.Fprintf(&b, "step ⑧ endpoints.updated: the %s write listing the pod\n\n", r.EndpointsObject())
	}
	if t := c.Topology.Etcd.Timing(); t != "" {
		fmt.Fprintf(&b, "%s\n\n", t)
	}
	if t := c.Topology.ProcsText(); t != "" {
		fmt.Fprintf(&b, "%s\n\n", t)
	}
	if len(r.Invalid) > 0 || len(r.Negative) > 0 {
		b.WriteString("## Why the run is invalid\n\n")
		for _, why := range r.Invalid {
			fmt.Fprintf(&b, "- %s\n", why)
		}
		b.WriteString("\n")
		if len(r.Negative) > 0 {
			fmt.Fprintf(&b, "Negative samples (%d): each end was stamped before its start, a bug in that step's causal chain.\n\n", len(r.Negative))
			mdTable(&b, negativeHeader, negativeRows(r))
			if len(r.Negative) > maxListed {
				fmt.Fprintf(&b, "\n… %d more in run.json\n", len(r.Negative)-maxListed)
			}
			b.WriteString("\n")
		}
	}
	if disrupted(r) {
		fmt.Fprintf(&b, "## The run was disrupted\n\n%s\n\n", disruptedText)
		if len(r.Disruptions) > 0 {
			mdTable(&b, disruptionHeader, disruptionRows(r))
			b.WriteString("\n")
		} else {
			b.WriteString("run.json lists no disruption.\n\n")
		}
	}
	writeFindMaxMD(&b, r)
	b.WriteString("## Steps\n\n")
	mdTable(&b, header, rows(r))
	fmt.Fprintf(&b, "\n%s Throughput: **%.1f pods/s** to Ready (%d pods, %d events).\n", verdictText, r.Throughput.PodsPerS, r.Pods, r.Events)
	if len(r.Throughput.PerSecond) > 0 {
		fmt.Fprintf(&b, "\nPods Ready per second: %v\n", r.Throughput.PerSecond)
	}
	if len(r.NotObservable) > 0 {
		fmt.Fprintf(&b, "\nNot observable on this cluster (only its components see them, and they do not stamp kstep's tracer; never invented): %s\n", strings.Join(r.NotObservable, ", "))
	} else if len(r.Unavailable) > 0 {
		fmt.Fprintf(&b, "\nUnavailable (no actor of this run stamps them, so not reported): %s\n", strings.Join(r.Unavailable, ", "))
	}
	if line := sourcesLine(r); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	writePopulationsMD(&b, r)
	writeChainsMD(&b, r)
	writeWaterfallsMD(&b, r)
	writeWritesMD(&b, r)
	writeAPIMD(&b, r)
	writeEtcdMD(&b, r)
	writeActorsMD(&b, r)
	fmt.Fprintf(&b, "\nTrace drops: %s", fmtDrops(r))
	if len(r.DropsUnknown) > 0 {
		fmt.Fprintf(&b, "; not reported by: %s", strings.Join(r.DropsUnknown, ", "))
	}
	b.WriteString("\n")
	if len(r.Incomplete) > 0 {
		fmt.Fprintf(&b, "\n## Pods missing steps (%d)\n\n", len(r.Incomplete))
		for i, m := range r.Incomplete {
			if i == maxListed {
				fmt.Fprintf(&b, "- … %d more in run.json\n", len(r.Incomplete)-maxListed)
				break
			}
			fmt.Fprintf(&b, "- %s/%s: %s\n", m.Namespace, m.Name, strings.Join(m.Missing, ", "))
		}
	}
	return b.String()
}

// verdictText explains the verdict column, in every report.
const verdictText = "Verdicts compare p50 with the documented time scales; nodes says which pods the samples come from (all: every pod, and the ReplicaSet-level steps); a simulated step ran on the hollow nodes' simulated runtime, which plays a latency profile, so it gets no verdict."

// disruptedText heads the disruptions of a disrupted run.
const disruptedText = "A leader Lease changed hands or a node left Ready during the load. A healthy run has none: past what the machine sustains, Lease renewals and node heartbeats queue behind the load and a leader or a node is lost, and every latency after one is distorted. compare refuses this run unless forced."

var populationHeader = []any{"nodes", "runtime", "pods", "e2e p50 ms", "e2e p99 ms", "⑦ share p50", "⑦ share p90", "documented ⑦ share"}

func fmtPct(v float64) string { return fmt.Sprintf("%.0f %%", v) }

func documentedShare() string {
	return fmt.Sprintf("%.0f–%.0f %%", DocumentedStep7Share[0], DocumentedStep7Share[1])
}

func populationRows(r *Run) [][]string {
	var out [][]string
	for _, p := range r.Populations {
		p50, p90 := "—", "—"
		if p.Step7SharePct.Count > 0 {
			p50, p90 = fmtPct(p.Step7SharePct.P50), fmtPct(p.Step7SharePct.P90)
		}
		out = append(out, []string{p.Nodes, p.Runtime, fmt.Sprint(p.Pods), fmtMS(p.EndToEnd.P50), fmtMS(p.EndToEnd.P99), p50, p90, documentedShare()})
	}
	return out
}

// simulatedPopulation: its pods ran on the simulated runtime, whose ⑦ is
// whatever its latency profile says.
func simulatedPopulation(p Population) bool {
	return p.Nodes == NodesHollow || strings.HasPrefix(p.Runtime, "simulated")
}

// shareSentences set each population's share of ⑦ beside the documented
// claim in words: where a real runtime's lands, and that a simulated one's
// is not evidence either way.
func shareSentences(r *Run) []string {
	var out []string
	for _, p := range r.Populations {
		sh := p.Step7SharePct
		switch {
		case sh.Count == 0:
			out = append(out, fmt.Sprintf("%s nodes: no pod has both step ⑦ and its end to end, so no share of ⑦.", p.Nodes))
		case simulatedPopulation(p):
			out = append(out, fmt.Sprintf("%s nodes: these pods' step ⑦ is %s, the hollow runtime playing a latency profile, so its share (median %s) is not a runtime's: it is not comparable with the documented %s.",
				p.Nodes, p.Runtime, fmtPct(sh.P50), documentedShare()))
		default:
			where := "within"
			if sh.P50 < DocumentedStep7Share[0] {
				where = "below"
			} else if sh.P50 > DocumentedStep7Share[1] {
				where = "above"
			}
			out = append(out, fmt.Sprintf("%s nodes (%s): the median pod spent %s of its end to end in step ⑦ (the p90 pod %s), %s the documented %s.",
				p.Nodes, p.Runtime, fmtPct(sh.P50), fmtPct(sh.P90), where, documentedShare()))
		}
	}
	return out
}

func writePopulationsMD(b *strings.Builder, r *Run) {
	if len(r.Populations) == 0 {
		return
	}
	b.WriteString("\n## Pods by node kind\n\nEach pod's end to end, and the share of step ⑦ (kubelet noticed → readiness) in it, beside the documented share.\n\n")
	mdTable(b, populationHeader, populationRows(r))
	for _, line := range shareSentences(r) {
		b.WriteString("\n" + line + "\n")
	}
}

// chainRows is how each transition is measured, once per transition (the
// populations of a pod-level step share its stamps).
func chainRows(r *Run) [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, s := range tableSteps(r) {
		k := s.Step + "|" + s.Name + "|" + s.From + "|" + s.To
		if seen[k] || s.From == "" && s.To == "" {
			continue
		}
		seen[k] = true
		chain := s.Chain
		if chain == "" {
			chain = "—"
		}
		out = append(out, []string{s.Step, s.Name, s.From + " → " + s.To, chain})
	}
	return out
}

var chainHeader = []any{"step", "transition", "from → to", "why from precedes to"}

func writeChainsMD(b *strings.Builder, r *Run) {
	rows := chainRows(r)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## How each step is measured\n\nEach step is the time from one stamp (from) to another (to); the chain says why the first causally precedes the second.\n\n")
	mdTable(b, chainHeader, rows)
}

var negativeHeader = []any{"pod", "step", "ms", "stamped by (from → to)"}

func negativeRows(r *Run) [][]string {
	var out [][]string
	for i, n := range r.Negative {
		if i == maxListed {
			break
		}
		out = append(out, []string{n.Namespace + "/" + n.Pod, n.Step + " " + n.Name, fmtSigned(n.MS), n.FromActor + " → " + n.ToActor})
	}
	return out
}

// fmtSigned is fmtMS for a value that may be negative.
func fmtSigned(v float64) string {
	if v < 0 {
		return "−" + fmtMS(-v)
	}
	return fmtMS(v)
}

func strs(a []any) []string {
	out := make([]string, len(a))
	for i, v := range a {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// apiRows is the API latency table, busiest first, at most limit rows
// (0: all).
func apiRows(r *Run, limit int) [][]string {
	var out [][]string
	for i, a := range r.API {
		if limit > 0 && i == limit {
			break
		}
		out = append(out, []string{a.Verb, a.Resource, fmt.Sprint(a.Count), fmt.Sprint(a.Errors), fmtMS(a.MeanMS), fmtMS(a.P50MS), fmtMS(a.P99MS)})
	}
	return out
}

var apiHeader = []any{"verb", "resource", "requests", "errors", "mean ms", "p50 ms", "p99 ms"}

// asSentence is a report line as a sentence: capitalized, with its full stop.
func asSentence(line string) string { return strings.ToUpper(line[:1]) + line[1:] + "." }

// etcdRequestRows is the apiservers' etcd requests table, busiest first.
func etcdRequestRows(r *Run) [][]string {
	var out [][]string
	for _, a := range r.EtcdRequests {
		out = append(out, []string{a.Verb, a.Resource, fmt.Sprint(a.Count), fmtMS(a.MeanMS), fmtMS(a.P50MS), fmtMS(a.P99MS)})
	}
	return out
}

var etcdRequestHeader = []any{"operation", "resource type", "requests", "mean ms", "p50 ms", "p99 ms"}

// etcdRequestIntro says what the etcd requests table is.
const etcdRequestIntro = "Each apiserver's own etcd requests (`etcd_request_duration_seconds`, retries included), by operation and resource type: the part of the API latency above that etcd took. A binding, a status write and a patch are etcd updates; a get is a quorum read (a GET without resourceVersion, a delete, a write whose cached copy was refused)."

func disruptionRows(r *Run) [][]string {
	var out [][]string
	for _, d := range r.Disruptions {
		out = append(out, []string{fmt.Sprintf("+%.1f s", d.AtS), d.Kind, d.Detail})
	}
	return out
}

var disruptionHeader = []any{"at", "kind", "what"}

func etcdRows(r *Run) [][]string {
	var out [][]string
	for _, m := range r.Etcd {
		lead := ""
		if m.Leader {
			lead = "leader"
		}
		out = append(out, []string{m.Name, lead, fmt.Sprint(m.LeaderChanges), fmt.Sprint(m.ProposalsCommitted), fmt.Sprint(m.ProposalsFailed),
			fmt.Sprint(m.HeartbeatFailures), fmt.Sprint(m.SlowApplies), fmt.Sprint(m.Fsyncs), fmtMS(m.FsyncP50MS), fmtMS(m.FsyncP99MS), fmtMS(m.BackendCommitP99MS)})
	}
	return out
}

func etcdDBRows(r *Run) [][]string {
	mib := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	var out [][]string
	for _, m := range r.Etcd {
		if m.DBSizeAfter == 0 {
			continue // an older run, or a member whose metrics lacked the gauges
		}
		out = append(out, []string{m.Name, mib(m.DBSizeBefore), mib(m.DBInUseBefore), mib(m.DBSizeAfter), mib(m.DBInUseAfter),
			fmt.Sprint(m.Keys), fmt.Sprintf("%.0f", m.BytesPerKey)})
	}
	return out
}

var etcdDBHeader = []any{"member", "db before MiB", "in use before MiB", "db after MiB", "in use after MiB", "keys", "bytes/key in use"}

var etcdHeader = []any{"member", "role", "leader changes", "proposals", "failed", "heartbeat failures", "slow applies", "wal fsyncs", "fsync p50 ms", "fsync p99 ms", "commit p99 ms"}

func writeEtcdMD(b *strings.Builder, r *Run) {
	if len(r.Etcd) == 0 {
		return
	}
	b.WriteString("\n## etcd during the load\n\nEach member's own `/metrics`, read before and after the load. Leader changes in a run without faults mean elections under load: the Raft timing is too tight for the machine.\n\n")
	mdTable(b, etcdHeader, etcdRows(r))
	if rows := etcdDBRows(r); len(rows) > 0 {
		b.WriteString("\nEach member's database before and after the load: the file, what its live pages take, and bytes in use per key. A file far larger than in use is fragmented (the apiservers defragment after compacting).\n\n")
		mdTable(b, etcdDBHeader, rows)
	}
}

func mdTable(b *strings.Builder, header []any, rows [][]string) {
	b.WriteString("| " + strings.Join(strs(header), " | ") + " |\n|" + strings.Repeat("---|", len(header)) + "\n")
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

func writeWaterfallsMD(b *strings.Builder, r *Run) {
	if len(r.Waterfalls) == 0 {
		return
	}
	b.WriteString("\n## Waterfall: the median and the p99 pod\n\nms after the client sent the ReplicaSet.\n\n")
	header := []any{"step"}
	for _, w := range r.Waterfalls {
		header = append(header, fmt.Sprintf("%s %s/%s (%s)", w.Label, w.Namespace, w.Name, fmtLatency(w.EndToEnd)))
	}
	var steps []string
	seen := map[string]bool{}
	for _, w := range r.Waterfalls {
		for _, m := range w.Marks {
			if !seen[m.Step] {
				seen[m.Step] = true
				steps = append(steps, m.Step)
			}
		}
	}
	var rows [][]string
	for _, st := range steps {
		row := []string{st}
		for _, w := range r.Waterfalls {
			cell := "—"
			for _, m := range w.Marks {
				if m.Step == st {
					cell = fmtMS(m.AtMS)
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	mdTable(b, header, rows)
}

func writeAPIMD(b *strings.Builder, r *Run) {
	if len(r.API) == 0 {
		return
	}
	b.WriteString("\n## API latency by verb and resource\n\nEvery client's requests, from the apiservers' `/metrics` (quantiles interpolated in histogram buckets).\n\n")
	mdTable(b, apiHeader, apiRows(r, 0))
	if len(r.EtcdRequests) == 0 {
		return
	}
	b.WriteString("\n## etcd requests from the apiservers\n\n" + etcdRequestIntro + "\n\n")
	mdTable(b, etcdRequestHeader, etcdRequestRows(r))
	if line := writeTimeSentence(r); line != "" {
		b.WriteString("\n" + asSentence(line) + "\n")
	}
}

func writeActorsMD(b *strings.Builder, r *Run) {
	if len(r.Actors) == 0 {
		return
	}
	b.WriteString("\n## Actors: CPU and memory\n\n" + cpuIntro + "\n\n")
	h, rows := actorTable(r)
	mdTable(b, h, rows)
	if line := cpuSentence(r); line != "" {
		b.WriteString("\n" + asSentence(line) + "\n")
	}
}

// sourcesLine says which steps the harness stamped and which the cluster
// did, "" when the run records no sources.
func sourcesLine(r *Run) string {
	var harness, cluster []string
	for _, s := range r.Sources {
		switch s.Where {
		case FromHarness:
			harness = append(harness, s.Step)
		case FromCluster:
			cluster = append(cluster, s.Step)
		}
	}
	if len(harness)+len(cluster) == 0 {
		return ""
	}
	line := "stamped by kstep's own requests and watches (harness clock, ns): " + strings.Join(harness, ", ")
	if len(cluster) > 0 {
		line += "; by the cluster's components: " + strings.Join(cluster, ", ")
	}
	if e := r.Cluster.External; e != nil {
		line += fmt.Sprintf("\ncluster: %s (context %s), %s, %d nodes (%d Ready): %s; kinds by %s", e.Server, e.Context, e.Version, e.Nodes, e.Ready, kindsText(e.Kinds), e.KindsBy)
	}
	return line
}

func kindsText(k map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(k)) {
		parts = append(parts, fmt.Sprintf("%d %s", k[name], name))
	}
	return strings.Join(parts, ", ")
}
