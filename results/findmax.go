package results

import (
	"fmt"
	"html"
	"math"
	"strings"
)

var findMaxHeader = []any{"step", "phase", "offered pods/s", "achieved pods/s", "control plane p50 ms", "control plane p99 ms", "e2e p99 ms", "ready", "disruptions", "SLO"}

// findMaxRows is the capacity search's curve, a step a row.
func findMaxRows(fm *FindMax) [][]string {
	var out [][]string
	for _, s := range fm.Steps {
		verdict := "held"
		if !s.Held {
			verdict = "broke: " + s.Why
		}
		out = append(out, []string{fmt.Sprint(s.Step), s.Phase, fmt.Sprintf("%.1f", s.OfferedPodsPerS), fmt.Sprintf("%.1f", s.AchievedPodsPerS),
			fmtMS(s.ControlPlaneP50MS), fmtMS(s.ControlPlaneP99MS), fmtMS(s.E2EP99MS), fmt.Sprintf("%d/%d", s.Ready, s.Pods), fmt.Sprint(s.Disruptions), verdict})
	}
	return out
}

// findMaxAnswer is the search's answer in one line.
func findMaxAnswer(fm *FindMax) string {
	if fm.Step == 0 {
		return fmt.Sprintf("find-max: no step held the SLO (%s); %s", fm.SLO, fm.Reason)
	}
	kind := "the capacity"
	if !fm.Bracketed {
		kind = "a lower bound"
	}
	return fmt.Sprintf("find-max: %.1f pods/s sustained (%s; offered %.1f pods/s, step %d) under the SLO %s; %s",
		fm.PodsPerS, kind, fm.OfferedPodsPerS, fm.Step, fm.SLO, fm.Reason)
}

const findMaxIntro = "A capacity search on one cluster: the profile's object offered at a rising rate (×%.2f after each step that held the SLO), each step %gs or %d pods (whichever comes first) with its pods deleted before the next, then bisection between the highest rate that held and the lowest that broke, to within %.0f %%. Latencies are the load generator's own watch, on its clock (the same on every provider). The step table below is the answer's step."

func writeFindMaxMD(b *strings.Builder, r *Run) {
	fm := r.FindMax
	if fm == nil {
		return
	}
	fmt.Fprintf(b, "## Capacity search (find-max)\n\n"+findMaxIntro+"\n\n", fm.Factor, fm.StepDurationS, fm.StepPods, 100*fm.Precision)
	mdTable(b, findMaxHeader, findMaxRows(fm))
	b.WriteString("\n**" + findMaxAnswer(fm) + "**\n\n")
}

func writeFindMaxHTML(b *strings.Builder, r *Run) {
	esc := html.EscapeString
	fm := r.FindMax
	if fm == nil {
		return
	}
	b.WriteString("<h2>Capacity search (find-max)</h2><p>" + esc(fmt.Sprintf(findMaxIntro, fm.Factor, fm.StepDurationS, fm.StepPods, 100*fm.Precision)) + "</p>")
	b.WriteString("<p><b>" + esc(findMaxAnswer(fm)) + "</b></p>")
	b.WriteString(findMaxSVG(fm))
	htmlTable(b, findMaxHeader, findMaxRows(fm))
}

// findMaxSVG draws the curve: achieved against offered pods/s (the
// diagonal is keeping up), and each step's SLO p99 on the right axis.
func findMaxSVG(fm *FindMax) string {
	if len(fm.Steps) == 0 {
		return ""
	}
	const w, h, left, right, top, bottom = 640.0, 300.0, 60.0, 60.0, 20.0, 40.0
	maxRate, maxP99 := 0.0, 0.0
	for _, s := range fm.Steps {
		maxRate = max(maxRate, s.OfferedPodsPerS, s.AchievedPodsPerS)
		maxP99 = max(maxP99, s.P99MS)
	}
	if maxRate <= 0 {
		return ""
	}
	maxP99 = max(maxP99, 1)
	x := func(v float64) float64 { return left + (w-left-right)*v/maxRate }
	y := func(v float64) float64 { return h - bottom - (h-top-bottom)*v/maxRate }
	yl := func(v float64) float64 { return h - bottom - (h-top-bottom)*v/maxP99 }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="find-max curve">`, w, h)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4"/>`, x(0), y(0), x(maxRate), y(maxRate))
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">offered pods/s → (max %.0f)</text>`, left, h-8, maxRate)
	fmt.Fprintf(&b, `<text x="4" y="%.1f" font-size="11">achieved</text>`, top+10)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#b00">p99 (max %.0f ms)</text>`, w-right-40, top+10, maxP99)
	for _, s := range fm.Steps {
		color := "#070"
		if !s.Held {
			color = "#b00"
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>step %d: offered %.1f, achieved %.1f pods/s</title></circle>`,
			x(s.OfferedPodsPerS), y(s.AchievedPodsPerS), color, s.Step, s.OfferedPodsPerS, s.AchievedPodsPerS)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="6" height="6" fill="none" stroke="#b00"><title>step %d: p99 %.1f ms</title></rect>`,
			x(s.OfferedPodsPerS)-3, yl(s.P99MS)-3, s.Step, s.P99MS)
	}
	b.WriteString("</svg>")
	return b.String()
}

// FindMaxSpread says how far apart a set's find-max answers are (the
// largest over the smallest), or "" for a set without two answers.
func FindMaxSpread(runs []*Run) string {
	lo, hi := math.Inf(1), 0.0
	n := 0
	for _, r := range runs {
		if r.FindMax == nil || r.FindMax.Step == 0 {
			continue
		}
		n++
		lo, hi = min(lo, r.FindMax.PodsPerS), max(hi, r.FindMax.PodsPerS)
	}
	if n < 2 || lo <= 0 {
		return ""
	}
	return fmt.Sprintf("find-max answers of %d runs: %.1f to %.1f pods/s, %.1f %% apart (the largest over the smallest)", n, lo, hi, 100*(hi/lo-1))
}
