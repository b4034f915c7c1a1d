package results

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// HTML is report.html: one self-contained, offline page. Its charts are
// inline SVG: per-step p50–p99 bars beside the documented ranges (log
// scale), the end-to-end CDF, a waterfall of the steps for the median and
// the p99 pod, and pods Ready per second over the run. The tables follow.
func HTML(r *Run) string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString("<!doctype html><meta charset=utf-8><title>kstep run " + esc(r.ID) + "</title>")
	b.WriteString("<style>body{font:14px sans-serif;margin:2em;max-width:1000px}table{border-collapse:collapse;margin-bottom:1em}" +
		"td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}" +
		"svg text{font:11px sans-serif}.bad{color:#b00}</style>")
	b.WriteString("<h1>kstep run " + esc(r.ID) + "</h1>")
	c := r.Cluster
	fmt.Fprintf(&b, "<p>profile <b>%s</b>, provider %s, runtime %s, started %s, %.1f s. valid: <b>%v</b>. %.1f pods/s to Ready over %d pods.</p>",
		esc(r.Profile), esc(r.Provider), esc(r.Runtime), esc(r.StartedAt), r.DurationS, r.Valid, r.Throughput.PodsPerS, r.Pods)
	fmt.Fprintf(&b, "<p>cluster: %d etcd, %d apiservers, %d controller-managers, %d schedulers, %d %s nodes; load: %d objects × %d replicas at %.0f qps</p>",
		c.Topology.EtcdMembers, c.Topology.APIServers, c.Topology.ControllerManagers, c.Topology.Schedulers, c.Topology.Nodes(), esc(c.NodeKind), c.Objects, c.Replicas, c.QPS)
	if c.Security != "" {
		b.WriteString("<p>apiserver security: " + esc(c.Security) + "</p>")
	}
	if t := c.Topology.Etcd.Timing(); t != "" {
		b.WriteString("<p>" + esc(t) + "</p>")
	}
	for _, why := range r.Invalid {
		b.WriteString("<p class=bad>invalid: " + esc(why) + "</p>")
	}
	stepBars(&b, r)
	cdf(&b, r.EndToEnd.SamplesMS)
	waterfallSVG(&b, r.Waterfalls)
	throughputSVG(&b, r.Throughput.PerSecond)

	b.WriteString("<h2>Steps</h2>")
	htmlTable(&b, header, rows(r))
	if len(r.Unavailable) > 0 {
		b.WriteString("<p>Unavailable (no actor of this run stamps them, so not reported): " + esc(strings.Join(r.Unavailable, ", ")) + "</p>")
	}
	if len(r.API) > 0 {
		b.WriteString("<h2>API latency by verb and resource</h2><p>Every client's requests, from the apiservers' /metrics.</p>")
		htmlTable(&b, apiHeader, apiRows(r, 0))
	}
	if len(r.Disruptions) > 0 {
		b.WriteString("<h2 class=bad>Disruptions during the load</h2><p>A healthy run has none; every latency after one is distorted.</p>")
		htmlTable(&b, disruptionHeader, disruptionRows(r))
	}
	if len(r.Etcd) > 0 {
		b.WriteString("<h2>etcd during the load</h2><p>Each member's own /metrics, read before and after the load. Leader changes in a run without faults mean elections under load.</p>")
		htmlTable(&b, etcdHeader, etcdRows(r))
	}
	if len(r.Actors) > 0 {
		b.WriteString("<h2>Actors: CPU and memory</h2>")
		htmlTable(&b, actorHeader, actorRows(r))
	}
	b.WriteString("<p>Trace drops: " + esc(fmtDrops(r)))
	if len(r.DropsUnknown) > 0 {
		b.WriteString("; not reported by: " + esc(strings.Join(r.DropsUnknown, ", ")))
	}
	b.WriteString("</p>")
	if len(r.Incomplete) > 0 {
		fmt.Fprintf(&b, "<h2 class=bad>Pods missing steps (%d)</h2><ul>", len(r.Incomplete))
		for i, m := range r.Incomplete {
			if i == 50 {
				fmt.Fprintf(&b, "<li>… %d more in run.json</li>", len(r.Incomplete)-50)
				break
			}
			b.WriteString("<li>" + esc(m.Namespace+"/"+m.Name+": "+strings.Join(m.Missing, ", ")) + "</li>")
		}
		b.WriteString("</ul>")
	}
	return b.String()
}

func htmlTable(b *strings.Builder, header []any, rows [][]string) {
	b.WriteString("<table><tr>")
	for _, h := range header {
		b.WriteString("<th>" + html.EscapeString(fmt.Sprint(h)) + "</th>")
	}
	b.WriteString("</tr>")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
}

const svgOpen = "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d'>"

// stepBars draws one row per step on a log scale: the documented range in
// grey, p50–p99 in blue, a tick at p50.
func stepBars(b *strings.Builder, r *Run) {
	steps := append(append([]Step(nil), r.Steps...), r.EndToEnd)
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
	b.WriteString("<h2>Steps (log scale; grey: documented range, blue: p50–p99, tick: p50)</h2>")
	fmt.Fprintf(b, svgOpen, left+width+20, h)
	for i, s := range steps {
		y := float64(i*rowH + 5)
		fmt.Fprintf(b, "<text x='0' y='%.0f'>%s %s</text>", y+13, html.EscapeString(s.Step), html.EscapeString(s.Name))
		if s.DocumentedMS != nil {
			fmt.Fprintf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='16' fill='#ddd'/>", x(s.DocumentedMS[0]), y, math.Max(1, x(s.DocumentedMS[1])-x(s.DocumentedMS[0])))
		}
		if s.Count > 0 {
			fmt.Fprintf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='8' fill='#36c'/>", x(s.P50), y+4, math.Max(1, x(s.P99)-x(s.P50)))
			fmt.Fprintf(b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#000'/>", x(s.P50), x(s.P50), y, y+16)
		}
	}
	for d := lo; d <= hi*1.001; d *= 10 {
		fmt.Fprintf(b, "<text x='%.1f' y='%d'>%s</text>", x(d), h-5, fmtMS(d))
	}
	b.WriteString("</svg>")
}

// cdf draws the end-to-end distribution: at most 500 points.
func cdf(b *strings.Builder, samples []float64) {
	if len(samples) == 0 {
		return
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	const left, cw, ch = 40, 600, 300
	mx := math.Max(s[len(s)-1], 1e-9)
	fmt.Fprintf(b, "<h2>End to end CDF (%d pods, 0–%s ms)</h2>", len(s), fmtMS(mx))
	fmt.Fprintf(b, svgOpen, left+cw+20, ch+30)
	fmt.Fprintf(b, "<line x1='%d' y1='5' x2='%d' y2='%d' stroke='#999'/><line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", left, left, ch+5, left, ch+5, left+cw, ch+5)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		y := 5 + ch*(1-q)
		fmt.Fprintf(b, "<text x='0' y='%.1f'>p%g</text><line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#eee'/>", y+4, q*100, left, left+cw, y, y)
	}
	b.WriteString("<polyline fill='none' stroke='#36c' points='")
	step := max(1, len(s)/500)
	for i := 0; i < len(s); i += step {
		fmt.Fprintf(b, "%.1f,%.1f ", left+cw*s[i]/mx, 5+ch*(1-float64(i+1)/float64(len(s))))
	}
	fmt.Fprintf(b, "%d,5'/><text x='%d' y='%d'>%s ms</text></svg>", left+cw, left+cw-40, ch+25, fmtMS(mx))
}

// waterfallSVG draws, for each chosen pod, one bar per step from the
// previous stamp to this one, on a shared linear axis.
func waterfallSVG(b *strings.Builder, ws []Waterfall) {
	if len(ws) == 0 {
		return
	}
	mx := 1e-9
	rowsN := 0
	for _, w := range ws {
		for _, m := range w.Marks {
			mx = math.Max(mx, m.AtMS)
		}
		rowsN += len(w.Marks) + 1
	}
	const left, width, rowH = 200, 650, 16
	x := func(v float64) float64 { return left + width*v/mx }
	h := rowsN*rowH + 30
	b.WriteString("<h2>Waterfall: the median and the p99 pod (ms after the client's send)</h2>")
	fmt.Fprintf(b, svgOpen, left+width+80, h)
	y := 5
	for _, w := range ws {
		fmt.Fprintf(b, "<text x='0' y='%d' font-weight='bold'>%s %s/%s: %s</text>", y+12, html.EscapeString(w.Label), html.EscapeString(w.Namespace), html.EscapeString(w.Name), fmtLatency(w.EndToEnd))
		y += rowH
		prev := 0.0
		for _, m := range w.Marks {
			fmt.Fprintf(b, "<text x='10' y='%d'>%s</text>", y+12, html.EscapeString(m.Step))
			fmt.Fprintf(b, "<rect x='%.1f' y='%d' width='%.1f' height='12' fill='#36c'/>", x(prev), y+2, math.Max(1, x(m.AtMS)-x(prev)))
			fmt.Fprintf(b, "<text x='%.1f' y='%d'>%s</text>", x(m.AtMS)+4, y+12, fmtMS(m.AtMS))
			prev = math.Max(prev, m.AtMS)
			y += rowH
		}
	}
	fmt.Fprintf(b, "<text x='%d' y='%d'>0</text><text x='%d' y='%d'>%s ms</text></svg>", left, h-5, left+width-30, h-5, fmtMS(mx))
}

// throughputSVG draws pods Ready in each second of the run.
func throughputSVG(b *strings.Builder, perSecond []int) {
	if len(perSecond) == 0 {
		return
	}
	peak := 1
	for _, n := range perSecond {
		peak = max(peak, n)
	}
	const left, width, ch = 40, 650, 200
	bw := float64(width) / float64(len(perSecond))
	b.WriteString("<h2>Throughput over time (pods Ready per second)</h2>")
	fmt.Fprintf(b, svgOpen, left+width+20, ch+30)
	for i, n := range perSecond {
		bh := float64(ch) * float64(n) / float64(peak)
		fmt.Fprintf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#36c'><title>second %d: %d pods</title></rect>", left+float64(i)*bw, 5+float64(ch)-bh, math.Max(0.5, bw-1), bh, i, n)
	}
	fmt.Fprintf(b, "<text x='0' y='15'>%d</text><text x='0' y='%d'>0</text><text x='%d' y='%d'>0 s</text><text x='%d' y='%d'>%d s</text></svg>",
		peak, ch+5, left, ch+25, left+width-30, ch+25, len(perSecond))
}
