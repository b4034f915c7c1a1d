package results

import (
	"fmt"
	"io"
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

func rows(r *Run) [][]string {
	var out [][]string
	for _, s := range append(append([]Step(nil), r.Steps...), r.EndToEnd) {
		out = append(out, []string{s.Step, s.Name, fmt.Sprint(s.Count), fmtMS(s.P50), fmtMS(s.P90), fmtMS(s.P99), fmtMS(s.Max), documented(s), s.Verdict})
	}
	return out
}

var header = []any{"step", "transition", "n", "p50 ms", "p90 ms", "p99 ms", "max ms", "documented ms", "verdict"}

// Table renders the step table for a terminal.
func Table(w io.Writer, r *Run) error {
	if err := termTable(w, header, rows(r)); err != nil {
		return err
	}
	fmt.Fprintf(w, "throughput: %.1f pods/s to Ready over %d pods; valid: %v\n", r.Throughput.PodsPerS, r.Pods, r.Valid)
	for _, why := range r.Invalid {
		fmt.Fprintln(w, "invalid:", why)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintln(w, "unavailable (no actor of this run stamps them):", strings.Join(r.Unavailable, ", "))
	}
	if len(r.Disruptions) > 0 {
		fmt.Fprintln(w, "\ndisruptions during the load (a healthy run has none; every latency after one is distorted):")
		if err := termTable(w, disruptionHeader, disruptionRows(r)); err != nil {
			return err
		}
	}
	if len(r.API) > 0 {
		fmt.Fprintln(w, "\nAPI latency, busiest 8 (all in report.md):")
		if err := termTable(w, apiHeader, apiRows(r, 8)); err != nil {
			return err
		}
	}
	if len(r.Etcd) > 0 {
		fmt.Fprintln(w, "\netcd during the load:")
		if err := termTable(w, etcdHeader, etcdRows(r)); err != nil {
			return err
		}
	}
	if len(r.Actors) > 0 {
		fmt.Fprintln(w, "\nactors:")
		if err := termTable(w, actorHeader, actorRows(r)); err != nil {
			return err
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

// Markdown is report.md.
func Markdown(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kstep run %s\n\n", r.ID)
	fmt.Fprintf(&b, "profile `%s`, provider `%s`, runtime `%s`, started %s, %.1f s. **valid: %v**\n\n", r.Profile, r.Provider, r.Runtime, r.StartedAt, r.DurationS, r.Valid)
	c := r.Cluster
	fmt.Fprintf(&b, "cluster: %d etcd, %d apiservers, %d controller-managers, %d schedulers, %d %s nodes; load: %d objects × %d replicas at %.0f qps\n\n",
		c.Topology.EtcdMembers, c.Topology.APIServers, c.Topology.ControllerManagers, c.Topology.Schedulers, c.Topology.Nodes(), c.NodeKind, c.Objects, c.Replicas, c.QPS)
	if c.Security != "" {
		fmt.Fprintf(&b, "apiserver security: %s\n\n", c.Security)
	}
	if t := c.Topology.Etcd.Timing(); t != "" {
		fmt.Fprintf(&b, "%s\n\n", t)
	}
	if len(r.Invalid) > 0 {
		b.WriteString("## Why the run is invalid\n\n")
		for _, why := range r.Invalid {
			fmt.Fprintf(&b, "- %s\n", why)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Steps\n\n")
	mdTable(&b, header, rows(r))
	fmt.Fprintf(&b, "\nVerdicts compare p50 with the seed's documented range. Throughput: **%.1f pods/s** to Ready (%d pods, %d events).\n", r.Throughput.PodsPerS, r.Pods, r.Events)
	if len(r.Throughput.PerSecond) > 0 {
		fmt.Fprintf(&b, "\nPods Ready per second: %v\n", r.Throughput.PerSecond)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintf(&b, "\nUnavailable (no actor of this run stamps them, so not reported): %s\n", strings.Join(r.Unavailable, ", "))
	}
	writeWaterfallsMD(&b, r)
	writeAPIMD(&b, r)
	writeDisruptionsMD(&b, r)
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
			if i == 50 {
				fmt.Fprintf(&b, "- … %d more in run.json\n", len(r.Incomplete)-50)
				break
			}
			fmt.Fprintf(&b, "- %s/%s: %s\n", m.Namespace, m.Name, strings.Join(m.Missing, ", "))
		}
	}
	return b.String()
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

func actorRows(r *Run) [][]string {
	var out [][]string
	for _, a := range r.Actors {
		out = append(out, []string{a.Actor, fmt.Sprintf("%.2f", a.CPUSeconds), fmt.Sprintf("%.1f", a.PeakRSSMB)})
	}
	return out
}

var actorHeader = []any{"actor", "cpu s", "peak rss MiB"}

func disruptionRows(r *Run) [][]string {
	var out [][]string
	for _, d := range r.Disruptions {
		out = append(out, []string{fmt.Sprintf("+%.1f s", d.AtS), d.Kind, d.Detail})
	}
	return out
}

var disruptionHeader = []any{"at", "kind", "what"}

func writeDisruptionsMD(b *strings.Builder, r *Run) {
	if len(r.Disruptions) == 0 {
		return
	}
	b.WriteString("\n## Disruptions during the load\n\nA healthy run has none. Past what the machine sustains, Lease renewals and node heartbeats queue behind the load and a leader or a node is lost; every latency after one is distorted.\n\n")
	mdTable(b, disruptionHeader, disruptionRows(r))
}

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

var etcdHeader = []any{"member", "role", "leader changes", "proposals", "failed", "heartbeat failures", "slow applies", "wal fsyncs", "fsync p50 ms", "fsync p99 ms", "commit p99 ms"}

func writeEtcdMD(b *strings.Builder, r *Run) {
	if len(r.Etcd) == 0 {
		return
	}
	b.WriteString("\n## etcd during the load\n\nEach member's own `/metrics`, read before and after the load. Leader changes in a run without faults mean elections under load: the Raft timing is too tight for the machine.\n\n")
	mdTable(b, etcdHeader, etcdRows(r))
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
}

func writeActorsMD(b *strings.Builder, r *Run) {
	if len(r.Actors) == 0 {
		return
	}
	b.WriteString("\n## Actors: CPU and memory\n\n")
	mdTable(b, actorHeader, actorRows(r))
}
