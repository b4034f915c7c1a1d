package results

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// HTML is report.html: one self-contained, offline page. Its charts are
// inline SVG: per-step p50–p99 bars beside the documented time scales (log
// scale), the end-to-end CDF (log time axis, a curve per node kind), a
// waterfall of the steps for the median and the p99 pod, and pods Ready per
// second over the run. The tables follow.
func HTML(r *Run) string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString("<!doctype html><meta charset=utf-8><title>kstep run " + esc(r.ID) + "</title>")
	b.WriteString(htmlStyle)
	b.WriteString("<h1>kstep run " + esc(r.ID) + "</h1>")
	c := r.Cluster
	build := ""
	if r.Version != "" {
		build = ", build " + esc(r.Version)
	}
	fmt.Fprintf(&b, "<p>profile <b>%s</b>, provider %s, runtime %s%s, started %s, %.1f s. valid: <b>%v</b>. %.1f pods/s to Ready over %d pods.</p>",
		esc(r.Profile), esc(r.Provider), esc(r.Runtime), build, esc(r.StartedAt), r.DurationS, r.Valid, r.Throughput.PodsPerS, r.Pods)
	fmt.Fprintf(&b, "<p>cluster: %d etcd, %d apiservers, %d controller-managers, %d schedulers, %d %s nodes; load: %d objects × %d replicas at %.0f qps</p>",
		c.Topology.EtcdMembers, c.Topology.APIServers, c.Topology.ControllerManagers, c.Topology.Schedulers, c.Topology.Nodes(), esc(c.NodeKind), c.Objects, c.Replicas, c.QPS)
	if c.Security != "" {
		b.WriteString("<p>apiserver security: " + esc(c.Security) + "</p>")
	}
	if t := c.NotAsUpText(); t != "" {
		b.WriteString("<p>" + esc(t) + "</p>")
	}
	if t := r.HollowEventsText(); t != "" {
		b.WriteString("<p>" + esc(t) + "</p>")
	}
	if r.EndpointsStamp != "" {
		b.WriteString("<p>step ⑧ endpoints.updated: the " + esc(r.EndpointsObject()) + " write listing the pod</p>")
	}
	if t := c.Topology.Etcd.Timing(); t != "" {
		b.WriteString("<p>" + esc(t) + "</p>")
	}
	if t := c.Topology.ProcsText(); t != "" {
		b.WriteString("<p>" + esc(t) + "</p>")
	}
	for _, why := range r.Invalid {
		b.WriteString("<p class=bad>invalid: " + esc(why) + "</p>")
	}
	if len(r.Negative) > 0 {
		fmt.Fprintf(&b, "<p class=bad>invalid: negative samples (%d): each end was stamped before its start, a bug in that step's causal chain.</p>", len(r.Negative))
		htmlTable(&b, negativeHeader, negativeRows(r))
		if len(r.Negative) > maxListed {
			fmt.Fprintf(&b, "<p>… %d more in run.json</p>", len(r.Negative)-maxListed)
		}
	}
	if disrupted(r) {
		b.WriteString("<h2 class=bad>The run was disrupted</h2><p>" + esc(disruptedText) + "</p>")
		if len(r.Disruptions) > 0 {
			htmlTable(&b, disruptionHeader, disruptionRows(r))
		} else {
			b.WriteString("<p>run.json lists no disruption.</p>")
		}
	}
	writeFindMaxHTML(&b, r)
	stepBars(&b, r)
	cdf(&b, e2eCurves(r))
	waterfallSVG(&b, r.Waterfalls)
	throughputSVG(&b, r.Throughput.PerSecond)

	b.WriteString("<h2>Steps</h2>")
	htmlTable(&b, header, rows(r))
	b.WriteString("<p>" + esc(verdictText) + "</p>")
	if len(r.NotObservable) > 0 {
		b.WriteString("<p>Not observable on this cluster (only its components see them, and they do not stamp kstep's tracer; never invented): " + esc(strings.Join(r.NotObservable, ", ")) + "</p>")
	} else if len(r.Unavailable) > 0 {
		b.WriteString("<p>Unavailable (no actor of this run stamps them, so not reported): " + esc(strings.Join(r.Unavailable, ", ")) + "</p>")
	}
	if line := sourcesLine(r); line != "" {
		b.WriteString("<p>" + esc(line) + "</p>")
	}
	if len(r.Populations) > 0 {
		b.WriteString("<h2>Pods by node kind</h2><p>Each pod's end to end, and the share of step ⑦ (kubelet noticed → readiness) in it, beside the documented share.</p>")
		htmlTable(&b, populationHeader, populationRows(r))
		for _, line := range shareSentences(r) {
			b.WriteString("<p>" + esc(line) + "</p>")
		}
	}
	if cr := chainRows(r); len(cr) > 0 {
		b.WriteString("<h2>How each step is measured</h2><p>Each step is the time from one stamp (from) to another (to); the chain says why the first causally precedes the second.</p>")
		htmlTable(&b, chainHeader, cr)
	}
	if rows := writesRows(r, 0); rows != nil {
		b.WriteString("<h2>Writes per pod</h2><p>" + esc(strings.ReplaceAll(writesIntro, "`", "")) + "</p>")
		if t := r.HollowEventsText(); t != "" {
			b.WriteString("<p>" + esc(t) + "</p>")
		}
		htmlTable(&b, writesHeader, rows)
		b.WriteString("<p>" + esc(writesSentence(r)) + "</p>")
	}
	if len(r.API) > 0 {
		b.WriteString("<h2>API latency by verb and resource</h2><p>Every client's requests, from the apiservers' /metrics.</p>")
		htmlTable(&b, apiHeader, apiRows(r, 0))
	}
	if len(r.EtcdRequests) > 0 {
		b.WriteString("<h2>etcd requests from the apiservers</h2><p>" + esc(strings.ReplaceAll(etcdRequestIntro, "`", "")) + "</p>")
		htmlTable(&b, etcdRequestHeader, etcdRequestRows(r))
		if line := writeTimeSentence(r); line != "" {
			b.WriteString("<p>" + esc(asSentence(line)) + "</p>")
		}
	}
	if len(r.Etcd) > 0 {
		b.WriteString("<h2>etcd during the load</h2><p>Each member's own /metrics, read before and after the load. Leader changes in a run without faults mean elections under load.</p>")
		htmlTable(&b, etcdHeader, etcdRows(r))
		if rows := etcdDBRows(r); len(rows) > 0 {
			b.WriteString("<p>Each member's database before and after the load: the file, what its live pages take, bytes in use per key.</p>")
			htmlTable(&b, etcdDBHeader, rows)
		}
	}
	if len(r.Actors) > 0 {
		b.WriteString("<h2>Actors: CPU and memory</h2><p>" + esc(cpuIntro) + "</p>")
		h, rows := actorTable(r)
		htmlTable(&b, h, rows)
		if line := cpuSentence(r); line != "" {
			b.WriteString("<p>" + esc(line) + "</p>")
		}
	}
	b.WriteString("<p>Trace drops: " + esc(fmtDrops(r)))
	if len(r.DropsUnknown) > 0 {
		b.WriteString("; not reported by: " + esc(strings.Join(r.DropsUnknown, ", ")))
	}
	b.WriteString("</p>")
	if len(r.Incomplete) > 0 {
		fmt.Fprintf(&b, "<h2 class=bad>Pods missing steps (%d)</h2><ul>", len(r.Incomplete))
		for i, m := range r.Incomplete {
			if i == maxListed {
				fmt.Fprintf(&b, "<li>… %d more in run.json</li>", len(r.Incomplete)-maxListed)
				break
			}
			b.WriteString("<li>" + esc(m.Namespace+"/"+m.Name+": "+strings.Join(m.Missing, ", ")) + "</li>")
		}
		b.WriteString("</ul>")
	}
	return b.String()
}

// htmlStyle is every report page's stylesheet, inline (the pages are
// offline).
const htmlStyle = "<style>body{font:14px sans-serif;margin:2em;max-width:1000px}table{border-collapse:collapse;margin-bottom:1em}" +
	"td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}" +
	"svg text{font:11px sans-serif}.bad{color:#b00}</style>"

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

// palette colours the curves of one chart, in order.
var palette = []string{"#36c", "#d62", "#393", "#939", "#c90"}

// decadeLabel names 10^e ms: "0.1 ms", "1 ms", "100 ms", "1 s", "10 s".
func decadeLabel(e int) string {
	if e >= 3 {
		return fmt.Sprintf("%g s", math.Pow(10, float64(e-3)))
	}
	return fmt.Sprintf("%g ms", math.Pow(10, float64(e)))
}

// logAxis maps milliseconds onto [left, left+width] by decades, from 10^lo
// to 10^hi ms; values below the axis (zero and negative ones too) sit at
// its minimum.
type logAxis struct {
	lo, hi      int
	left, width float64
}

// newLogAxis spans the decades around the positive values in vs, at most
// maxDecades of them (the largest values kept): a decade per 50 px still
// reads.
func newLogAxis(vs []float64, left, width float64, maxDecades int) logAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	a := logAxis{lo: 0, hi: 1, left: left, width: width}
	if !math.IsInf(lo, 1) {
		a.lo, a.hi = int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	}
	if a.hi <= a.lo {
		a.hi = a.lo + 1
	}
	if a.hi-a.lo > maxDecades {
		a.lo = a.hi - maxDecades
	}
	return a
}

func (a logAxis) x(v float64) float64 {
	floor := math.Pow(10, float64(a.lo))
	v = math.Max(v, floor)
	return a.left + a.width*math.Log10(v/floor)/float64(a.hi-a.lo)
}

// ticks draws each decade's label at y, and a grid line from y0 to y1
// when y1 > y0.
func (a logAxis) ticks(b *strings.Builder, y, y0, y1 float64) {
	for e := a.lo; e <= a.hi; e++ {
		x := a.x(math.Pow(10, float64(e)))
		if y1 > y0 {
			fmt.Fprintf(b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#eee'/>", x, x, y0, y1)
		}
		fmt.Fprintf(b, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>", x, y, decadeLabel(e))
	}
}

// stepBars draws one row per step on a log scale: the documented time
// scale in grey, p50–p99 in blue (orange when simulated), a tick at p50.
func stepBars(b *strings.Builder, r *Run) {
	steps := tableSteps(r)
	vs := []float64{0.01}
	for _, s := range steps {
		vs = append(vs, s.Max)
		if s.DocumentedMS != nil {
			vs = append(vs, s.DocumentedMS[1])
		}
	}
	const left, width, rowH = 360, 580, 22
	a := newLogAxis(vs, left, width, 8)
	h := rowH*len(steps) + 30
	b.WriteString("<h2>Steps (log scale; grey: documented time scale, blue: p50–p99, orange: simulated, tick: p50)</h2>")
	fmt.Fprintf(b, svgOpen, left+width+30, h)
	a.ticks(b, float64(h-5), 0, float64(h-18))
	for i, s := range steps {
		y := float64(i*rowH + 5)
		label := s.Step + " " + s.Name + " [" + nodesOf(s.Nodes) + "]"
		if s.Simulated {
			label += " " + simulatedLabel(r)
		}
		fmt.Fprintf(b, "<text x='0' y='%.0f'>%s</text>", y+13, html.EscapeString(label))
		if s.DocumentedMS != nil {
			fmt.Fprintf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='16' fill='#ddd'/>", a.x(s.DocumentedMS[0]), y, math.Max(1, a.x(s.DocumentedMS[1])-a.x(s.DocumentedMS[0])))
		}
		if s.Count > 0 {
			fill := "#36c"
			if s.Simulated {
				fill = "#e93"
			}
			fmt.Fprintf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='8' fill='%s'/>", a.x(s.P50), y+4, math.Max(1, a.x(s.P99)-a.x(s.P50)), fill)
			fmt.Fprintf(b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#000'/>", a.x(s.P50), a.x(s.P50), y, y+16)
		}
	}
	b.WriteString("</svg>")
}

// plural is "1 pod", "2 pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// curve is one distribution of a chart.
type curve struct {
	label   string
	samples []float64
}

// e2eCurves are the end-to-end distributions to draw: one per node kind
// when there are several (a real and a simulated runtime differ by orders
// of magnitude), else the whole run's.
func e2eCurves(r *Run) []curve {
	var cs []curve
	for _, p := range r.Populations {
		if len(p.EndToEnd.SamplesMS) > 0 {
			cs = append(cs, curve{fmt.Sprintf("%s (%s), %s", p.Nodes, p.Runtime, plural(len(p.EndToEnd.SamplesMS), "pod")), p.EndToEnd.SamplesMS})
		}
	}
	if len(cs) > 1 {
		return cs
	}
	if len(r.EndToEnd.SamplesMS) > 0 {
		return []curve{{"all pods", r.EndToEnd.SamplesMS}}
	}
	return cs
}

// cdf draws the end-to-end distributions on a log time axis (a few huge
// samples would squeeze a linear one's curve against its left edge): at
// most 500 points a curve.
func cdf(b *strings.Builder, cs []curve) {
	if len(cs) == 0 {
		return
	}
	var all []float64
	nonPositive := 0
	for _, c := range cs {
		all = append(all, c.samples...)
		for _, v := range c.samples {
			if v <= 0 {
				nonPositive++
			}
		}
	}
	const left, cw, ch, top = 40, 600, 300, 5
	a := newLogAxis(all, left, cw, 7)
	legendH := 16 * len(cs)
	fmt.Fprintf(b, "<h2>End to end CDF (%s, log time axis)</h2>", plural(len(all), "pod"))
	if nonPositive > 0 {
		fmt.Fprintf(b, "<p>%d sample(s) ≤ 0 ms drawn at the axis minimum (%s).</p>", nonPositive, decadeLabel(a.lo))
	}
	fmt.Fprintf(b, svgOpen, left+cw+20, ch+35+legendH)
	fmt.Fprintf(b, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/><line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", left, top, left, ch+top, left, ch+top, left+cw, ch+top)
	a.ticks(b, ch+top+15, top, ch+top)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		y := top + ch*(1-q)
		fmt.Fprintf(b, "<text x='0' y='%.1f'>p%g</text><line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#eee'/>", y+4, q*100, left, left+cw, y, y)
	}
	for ci, c := range cs {
		s := append([]float64(nil), c.samples...)
		sort.Float64s(s)
		colour := palette[ci%len(palette)]
		// A step function: flat until a sample, up by its share there (a
		// run of few pods is a staircase, not a point).
		fmt.Fprintf(b, "<polyline fill='none' stroke='%s' points='%d,%d", colour, left, top+ch)
		step := max(1, len(s)/500)
		y := float64(top + ch)
		for i := 0; i < len(s); i += step {
			if i+step >= len(s) {
				i = len(s) - 1
			}
			x := a.x(s[i])
			ny := top + ch*(1-float64(i+1)/float64(len(s)))
			fmt.Fprintf(b, " %.1f,%.1f %.1f,%.1f", x, y, x, ny)
			y = ny
		}
		fmt.Fprintf(b, " %d,%d'/>", left+cw, top)
		ly := ch + top + 30 + 16*ci
		fmt.Fprintf(b, "<rect x='%d' y='%d' width='12' height='3' fill='%s'/><text x='%d' y='%d'>%s: p50 %s, max %s</text>",
			left, ly-4, colour, left+18, ly, html.EscapeString(c.label), fmtLatency(Summarize(s).P50), fmtLatency(s[len(s)-1]))
	}
	b.WriteString("</svg>")
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
