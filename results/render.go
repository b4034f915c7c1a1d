package results

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
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
	t := tablewriter.NewWriter(w)
	t.Header(header...)
	for _, row := range rows(r) {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "throughput: %.1f pods/s to Ready over %d pods; valid: %v\n", r.Throughput.PodsPerS, r.Pods, r.Valid)
	for _, why := range r.Invalid {
		fmt.Fprintln(w, "invalid:", why)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintln(w, "unavailable (no actor of this run stamps them):", strings.Join(r.Unavailable, ", "))
	}
	return nil
}

// Markdown is report.md.
func Markdown(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kstep run %s\n\n", r.ID)
	fmt.Fprintf(&b, "profile `%s`, provider `%s`, runtime `%s`, started %s, %.1f s. **valid: %v**\n\n", r.Profile, r.Provider, r.Runtime, r.StartedAt, r.DurationS, r.Valid)
	c := r.Cluster
	fmt.Fprintf(&b, "cluster: %d etcd, %d apiservers, %d controller-managers, %d schedulers, %d %s nodes; load: %d objects × %d replicas at %.0f qps\n\n",
		c.EtcdMembers, c.APIServers, c.ControllerManagers, c.Schedulers, c.Nodes, c.NodeKind, c.Objects, c.Replicas, c.QPS)
	if len(r.Invalid) > 0 {
		b.WriteString("## Why the run is invalid\n\n")
		for _, why := range r.Invalid {
			fmt.Fprintf(&b, "- %s\n", why)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Steps\n\n| " + strings.Join(strs(header), " | ") + " |\n|" + strings.Repeat("---|", len(header)) + "\n")
	for _, row := range rows(r) {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	fmt.Fprintf(&b, "\nVerdicts compare p50 with the seed's documented range. Throughput: **%.1f pods/s** to Ready (%d pods, %d events).\n", r.Throughput.PodsPerS, r.Pods, r.Events)
	if len(r.Throughput.PerSecond) > 0 {
		fmt.Fprintf(&b, "\nPods Ready per second: %v\n", r.Throughput.PerSecond)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintf(&b, "\nUnavailable (no actor of this run stamps them, so not reported): %s\n", strings.Join(r.Unavailable, ", "))
	}
	fmt.Fprintf(&b, "\nTrace drops: %v", r.Drops)
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

// HTML is report.html: self-contained, one log-scale bar per step (p50 to
// p99 beside the documented range) and the end-to-end CDF.
func HTML(r *Run) string {
	var b strings.Builder
	b.WriteString("<!doctype html><meta charset=utf-8><title>kstep run " + html.EscapeString(r.ID) + "</title>")
	b.WriteString("<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}</style>")
	b.WriteString("<h1>kstep run " + html.EscapeString(r.ID) + "</h1>")
	fmt.Fprintf(&b, "<p>profile %s, provider %s, runtime %s, valid: <b>%v</b>, %.1f pods/s</p>", html.EscapeString(r.Profile), html.EscapeString(r.Provider), html.EscapeString(r.Runtime), r.Valid, r.Throughput.PodsPerS)
	for _, why := range r.Invalid {
		b.WriteString("<p style=color:#b00>invalid: " + html.EscapeString(why) + "</p>")
	}
	steps := append(append([]Step(nil), r.Steps...), r.EndToEnd)
	// Log scale from 0.01 ms to the largest value.
	hi := 1.0
	for _, s := range steps {
		hi = math.Max(hi, s.Max)
		if s.DocumentedMS != nil {
			hi = math.Max(hi, s.DocumentedMS[1])
		}
	}
	const lo, left, width, rowH = 0.01, 330, 600, 22
	x := func(v float64) float64 {
		v = math.Max(v, lo)
		return left + width*math.Log10(v/lo)/math.Log10(hi/lo)
	}
	h := rowH*len(steps) + 30
	fmt.Fprintf(&b, "<h2>Steps (log scale; grey: documented range, blue: p50–p99, tick: p50)</h2><svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d'>", left+width+20, h)
	for i, s := range steps {
		y := float64(i*rowH + 5)
		fmt.Fprintf(&b, "<text x='0' y='%.0f' font-size='12'>%s %s</text>", y+13, html.EscapeString(s.Step), html.EscapeString(s.Name))
		if s.DocumentedMS != nil {
			fmt.Fprintf(&b, "<rect x='%.1f' y='%.1f' width='%.1f' height='16' fill='#ddd'/>", x(s.DocumentedMS[0]), y, math.Max(1, x(s.DocumentedMS[1])-x(s.DocumentedMS[0])))
		}
		if s.Count > 0 {
			fmt.Fprintf(&b, "<rect x='%.1f' y='%.1f' width='%.1f' height='8' fill='#36c'/>", x(s.P50), y+4, math.Max(1, x(s.P99)-x(s.P50)))
			fmt.Fprintf(&b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#000'/>", x(s.P50), x(s.P50), y, y+16)
		}
	}
	for d := lo; d <= hi*1.001; d *= 10 {
		fmt.Fprintf(&b, "<text x='%.1f' y='%d' font-size='10'>%s</text>", x(d), h-5, fmtMS(d))
	}
	b.WriteString("</svg>")
	if e := r.EndToEnd.SamplesMS; len(e) > 0 {
		s := append([]float64(nil), e...)
		sort.Float64s(s)
		const cw, ch = 600, 300
		mx := math.Max(s[len(s)-1], 1e-9)
		fmt.Fprintf(&b, "<h2>End to end CDF (0–%s ms)</h2><svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d'><polyline fill='none' stroke='#36c' points='", fmtMS(mx), cw+10, ch+10)
		step := max(1, len(s)/500)
		for i := 0; i < len(s); i += step {
			fmt.Fprintf(&b, "%.1f,%.1f ", 5+cw*s[i]/mx, 5+ch*(1-float64(i+1)/float64(len(s))))
		}
		fmt.Fprintf(&b, "%.1f,5'/></svg>", 5+float64(cw))
	}
	b.WriteString("<h2>Table</h2><table><tr>")
	for _, hd := range header {
		b.WriteString("<th>" + html.EscapeString(fmt.Sprint(hd)) + "</th>")
	}
	b.WriteString("</tr>")
	for _, row := range rows(r) {
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}
