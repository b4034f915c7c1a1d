package results

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The files WriteHistory writes.
const (
	HistoryMarkdownFile = "history.md"
	HistoryHTMLFile     = "history.html"
)

// History is sets of runs of successive builds, oldest first: a trend per
// step, and each set compared with the one before it.
type History struct {
	Entries []HistoryEntry
	// Steps are every step some entry measured, in report order (by
	// population, end to end last).
	Steps []HistoryStep
	// Threshold and Alpha are the comparisons' (defaults applied).
	Threshold, Alpha float64
	MinShiftMS       float64
	// Changes are the change points of every step's p50 and p99 series
	// over the entries (ChangePoints), by step in Steps' order.
	Changes []RowChange
}

// RowChange is a change point of one step's series over the entries.
type RowChange struct {
	Key  string `json:"key"`
	Stat string `json:"stat"` // "p50" or "p99"
	// Entry is the index in Entries of the first entry after the change.
	Entry int `json:"entry"`
	ChangePoint
}

// Worse: the change slows the step down.
func (c RowChange) Worse() bool { return c.After > c.Before }

// changeSeries finds the change points of each step's p50 and p99 over the
// entries that measured it.
func (h *History) changeSeries() {
	for _, s := range h.Steps {
		for _, stat := range []string{"p50", "p99"} {
			var x []float64
			var at []int
			for i, e := range h.Entries {
				p, ok := e.Points[s.Key]
				if !ok {
					continue
				}
				v := p.P50
				if stat == "p99" {
					v = p.P99
				}
				x, at = append(x, v), append(at, i)
			}
			for _, cp := range ChangePoints(x, ChangePointOptions{}) {
				h.Changes = append(h.Changes, RowChange{Key: s.Key, Stat: stat, Entry: at[cp.Index], ChangePoint: cp})
			}
		}
	}
}

// Regressions are the change points that slow a step by more than the
// threshold (in percent and MinShiftMS) and start within the last
// entries: what kstep history --check fails on.
func (h *History) Regressions(last int) []RowChange {
	var out []RowChange
	for _, c := range h.Changes {
		if c.Worse() && c.SizePct > h.Threshold && c.After-c.Before >= h.MinShiftMS && c.Entry >= len(h.Entries)-last {
			out = append(out, c)
		}
	}
	return out
}

// Describe is a change point in one line: its step, statistic, size and
// first entry.
func (h *History) Describe(c RowChange) string {
	e := h.Entries[c.Entry]
	return fmt.Sprintf("%s %s %+.1f%% (%s → %s ms, p=%.3g) from entry %d, %s (%s)",
		h.label(c.Key), c.Stat, c.SizePct, fmtMS(c.Before), fmtMS(c.After), c.P, c.Entry+1, e.Version, e.Date())
}

// changesAt are the change points of key that start at entry i.
func (h *History) changesAt(key string, i int) []RowChange {
	var out []RowChange
	for _, c := range h.Changes {
		if c.Key == key && c.Entry == i {
			out = append(out, c)
		}
	}
	return out
}

// HistoryStep is one step of the trend, by Step.Key.
type HistoryStep struct {
	Key, Step, Name, Nodes string
	// Simulated: some entry measured it on the simulated runtime (its trend
	// is the latency profile's, not a runtime's).
	Simulated bool
}

// Label names the step in the history: number, name, population.
func (s HistoryStep) Label() string {
	l := s.Step + " " + s.Name + " [" + nodesOf(s.Nodes)
	if s.Simulated {
		l += ", simulated"
	}
	return strings.TrimSpace(l) + "]"
}

// HistoryEntry is one set: its build, when it ran, each step's point.
type HistoryEntry struct {
	Set *Set
	// Version is the build of the set's runs (several joined when they
	// differ); StartedAt its earliest run's start.
	Version   string
	StartedAt string
	// Points are each step's numbers across the set's runs, by key.
	Points map[string]TrendPoint
	// Versus is the comparison with the entry before; nil for the first.
	Versus *Comparison
}

// TrendPoint is one step across the runs of one set: the median of the
// runs' p50s and p99s, as CompareSets takes them, their range, and their
// run-to-run coefficient of variation (sample standard deviation over mean,
// in percent; 0 with fewer than two runs): the noise a comparison of such
// sets works against. set.json's rows carry it with these keys.
type TrendPoint struct {
	Runs int `json:"runs"`
	// Pods is the median over the runs of the step's samples in a run:
	// a p50 of a few pods moves with the pods a run happened to give it.
	Pods     int     `json:"pods"`
	P50      float64 `json:"p50_ms"`
	P50Lo    float64 `json:"p50_min_ms"`
	P50Hi    float64 `json:"p50_max_ms"`
	P50CVPct float64 `json:"p50_cv_pct"`
	P99      float64 `json:"p99_ms"`
	P99Lo    float64 `json:"p99_min_ms"`
	P99Hi    float64 `json:"p99_max_ms"`
	P99CVPct float64 `json:"p99_cv_pct"`
}

// NewHistory orders sets by their first run's start and compares each with
// the one before (CompareSets with o, never forced: a refusal is part of
// the history).
func NewHistory(sets []*Set, o CompareOptions) *History {
	o = o.withDefaults()
	h := &History{Threshold: o.Threshold, Alpha: o.Alpha, MinShiftMS: o.MinShiftMS}
	for _, s := range sets {
		if s == nil || len(s.Runs) == 0 {
			continue
		}
		h.Entries = append(h.Entries, newEntry(s))
	}
	sort.SliceStable(h.Entries, func(i, j int) bool {
		return startedBefore(h.Entries[i].StartedAt, h.Entries[j].StartedAt)
	})
	for i := 1; i < len(h.Entries); i++ {
		h.Entries[i].Versus = CompareSets(h.Entries[i-1].Set, h.Entries[i].Set, o)
	}

	seen := map[string]int{}
	for _, e := range h.Entries {
		for _, r := range e.Set.Runs {
			for _, s := range tableSteps(r) {
				if s.Count == 0 {
					continue
				}
				k := s.Key()
				if i, ok := seen[k]; ok {
					h.Steps[i].Simulated = h.Steps[i].Simulated || s.Simulated
					continue
				}
				seen[k] = len(h.Steps)
				h.Steps = append(h.Steps, HistoryStep{Key: k, Step: s.Step, Name: s.Name, Nodes: nodesOf(s.Nodes), Simulated: s.Simulated})
			}
		}
	}
	// A later build's new step joins its population's group, not the end.
	rank := func(s HistoryStep) int {
		if s.Step == "e2e" {
			return len(nodeOrder) + 1
		}
		if o, ok := nodeOrder[s.Nodes]; ok {
			return o
		}
		return len(nodeOrder)
	}
	sort.SliceStable(h.Steps, func(i, j int) bool { return rank(h.Steps[i]) < rank(h.Steps[j]) })
	h.changeSeries()
	return h
}

func newEntry(s *Set) HistoryEntry {
	e := HistoryEntry{Set: s, Points: map[string]TrendPoint{}}
	var versions []string
	seen := map[string]bool{}
	for i, r := range s.Runs {
		if i == 0 || startedBefore(r.StartedAt, e.StartedAt) {
			e.StartedAt = r.StartedAt
		}
		if !seen[r.Version] {
			seen[r.Version] = true
			v := r.Version
			if v == "" {
				v = "(no version)"
			}
			versions = append(versions, v)
		}
	}
	e.Version = strings.Join(versions, " + ")
	for _, r := range SetRows(s) {
		e.Points[r.Key] = r.TrendPoint
	}
	return e
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// startedBefore orders two StartedAt stamps by time, or as text when one
// does not parse.
func startedBefore(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return a < b
	}
	return ta.Before(tb)
}

// Date is when the entry's runs started, to the minute (builds of one day
// are told apart by the hour).
func (e HistoryEntry) Date() string {
	t, err := time.Parse(time.RFC3339, e.StartedAt)
	if err != nil {
		return e.StartedAt
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// tooFew marks CompareSets' refusal of sets too small for its test.
const tooFew = "too few runs"

// Verdict is the entry against the one before, in one line: "—" for the
// first; "not comparable: <reasons>" when CompareSets refused for more
// than the number of runs; "too few runs: ..." when only that; else the
// regressions, each named with its shift and p, or none.
func (h *History) Verdict(i int) string {
	c := h.Entries[i].Versus
	if c == nil {
		return "—"
	}
	if len(c.Refused) > 0 {
		var other []string
		for _, r := range c.Refused {
			if !strings.HasPrefix(r, tooFew) {
				other = append(other, r)
			}
		}
		if len(other) > 0 {
			return "not comparable: " + strings.Join(c.Refused, "; ")
		}
		return strings.Join(c.Refused, "; ")
	}
	if !c.Concluded {
		return tooFew
	}
	if reg := c.Regressions(); len(reg) > 0 {
		parts := make([]string, len(reg))
		for j, d := range reg {
			parts[j] = h.label(d.Key) + " (" + d.Reason + ")"
		}
		return fmt.Sprintf("%d regressed: %s", len(reg), strings.Join(parts, "; "))
	}
	v := fmt.Sprintf("no regression (%d steps compared)", len(c.Deltas))
	if imp := c.Improvements(); len(imp) > 0 {
		parts := make([]string, len(imp))
		for j, d := range imp {
			parts[j] = h.label(d.Key) + " (" + d.Reason + ")"
		}
		v += fmt.Sprintf("; %d improved: %s", len(imp), strings.Join(parts, "; "))
	}
	return v
}

// stepVerdict is one step of entry i against the one before: the delta's
// verdict and reason, or why there is none.
func (h *History) stepVerdict(i int, key string) string {
	c := h.Entries[i].Versus
	switch {
	case c == nil:
		return "—"
	case len(c.Refused) > 0:
		if v := h.Verdict(i); strings.HasPrefix(v, tooFew) {
			return tooFew
		}
		return "not comparable"
	}
	for _, d := range c.Deltas {
		if d.Key == key {
			if d.Reason != "" && d.Verdict != VerdictOK {
				return d.Verdict + ": " + d.Reason
			}
			return d.Verdict
		}
	}
	for _, k := range c.OnlyNew {
		if k == key {
			return "new step"
		}
	}
	return "—"
}

// label names a step key: its HistoryStep's label, else the key itself.
func (h *History) label(key string) string {
	for _, s := range h.Steps {
		if s.Key == key {
			return s.Label()
		}
	}
	return strings.ReplaceAll(key, "|", " ")
}

func (h *History) labels(keys []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = h.label(k)
	}
	return strings.Join(out, ", ")
}

var historyEntryHeader = []any{"#", "version", "started", "set", "runs", "against the previous"}

func (h *History) entryRows() [][]string {
	var out [][]string
	for i, e := range h.Entries {
		out = append(out, []string{fmt.Sprint(i + 1), e.Version, e.Date(), e.Set.Dir, fmt.Sprint(len(e.Set.Runs)), h.Verdict(i)})
	}
	return out
}

var historyStepHeader = []any{"#", "version", "started", "runs", "p50 ms", "p50 min–max", "p50 CV %", "p99 ms", "p99 min–max", "p99 CV %", "against the previous"}

func (h *History) stepRows(key string) [][]string {
	var out [][]string
	for i, e := range h.Entries {
		p, ok := e.Points[key]
		if !ok {
			out = append(out, []string{fmt.Sprint(i + 1), e.Version, e.Date(), "0", "—", "—", "—", "—", "—", "—", h.stepVerdict(i, key)})
			continue
		}
		v := h.stepVerdict(i, key)
		for _, c := range h.changesAt(key, i) {
			v += fmt.Sprintf("; change point: %s %+.1f%% from here", c.Stat, c.SizePct)
		}
		out = append(out, []string{fmt.Sprint(i + 1), e.Version, e.Date(), fmt.Sprint(p.Runs), fmtMS(p.P50), fmtMS(p.P50Lo) + "–" + fmtMS(p.P50Hi), FormatCV(p.P50CVPct, p.Runs),
			fmtMS(p.P99), fmtMS(p.P99Lo) + "–" + fmtMS(p.P99Hi), FormatCV(p.P99CVPct, p.Runs), v})
	}
	return out
}

// comparisonNotes are what a comparison says beyond its verdicts: steps on
// one side only, and its warnings.
func (h *History) comparisonNotes(i int) []string {
	c := h.Entries[i].Versus
	if c == nil {
		return nil
	}
	var out []string
	if len(c.OnlyBase) > 0 {
		out = append(out, "no longer measured: "+h.labels(c.OnlyBase))
	}
	if len(c.OnlyNew) > 0 {
		out = append(out, "newly measured: "+h.labels(c.OnlyNew))
	}
	for _, w := range c.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}

const historyIntro = "Each entry is a set of runs of one build (or a single run), oldest first. Per step, the median over the entry's runs of each run's p50 and p99, their range across runs (min–max) and their run-to-run coefficient of variation (CV: standard deviation over mean). Each entry after the first is compared with the one before, as `kstep compare` does: between runs, a regression when the Mann–Whitney test over per-run values, adjusted for every step's p50 and p99 together, gives p < %g and the Hodges–Lehmann shift exceeds %g %%."

const changeIntro = "Change points: over the entries, each step's p50 and p99 series split where its level lasts changed (E-divisive, a permutation test per split at p ≤ %g with a fixed seed, segments of at least %d entries), named by the first entry after the change, with the means either side."

func (h *History) changeLines() []string {
	var out []string
	for _, c := range h.Changes {
		out = append(out, h.Describe(c))
	}
	return out
}

// HistoryMarkdown is history.md.
func HistoryMarkdown(h *History) string {
	var b strings.Builder
	b.WriteString("# kstep history\n\n")
	fmt.Fprintf(&b, historyIntro+"\n\n", h.Alpha, h.Threshold)
	b.WriteString("## Entries\n\n")
	mdTable(&b, historyEntryHeader, h.entryRows())
	var notes bool
	for i := range h.Entries {
		ns := h.comparisonNotes(i)
		if len(ns) == 0 {
			continue
		}
		if !notes {
			b.WriteString("\n## Notes on the comparisons\n")
			notes = true
		}
		fmt.Fprintf(&b, "\n%d. %s against %d. %s:\n\n", i+1, h.Entries[i].Version, i, h.Entries[i-1].Version)
		for _, n := range ns {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\n## Change points\n\n")
	fmt.Fprintf(&b, changeIntro+"\n\n", DefaultChangePointAlpha, DefaultChangePointMinSize)
	if len(h.Changes) == 0 {
		b.WriteString("None.\n")
	}
	for _, l := range h.changeLines() {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n## Steps\n")
	for _, s := range h.Steps {
		fmt.Fprintf(&b, "\n### %s\n\n", s.Label())
		mdTable(&b, historyStepHeader, h.stepRows(s.Key))
	}
	return b.String()
}

// HistoryHTML is history.html: one self-contained, offline page, a trend
// chart (inline SVG) and its table per step.
func HistoryHTML(h *History) string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString("<!doctype html><meta charset=utf-8><title>kstep history</title>" + htmlStyle)
	b.WriteString("<h1>kstep history</h1><p>" + esc(strings.ReplaceAll(fmt.Sprintf(historyIntro, h.Alpha, h.Threshold), "`", "")) + "</p>")
	b.WriteString("<h2>Entries</h2>")
	htmlTable(&b, historyEntryHeader, h.entryRows())
	for i := range h.Entries {
		if ns := h.comparisonNotes(i); len(ns) > 0 {
			fmt.Fprintf(&b, "<p>%d. %s against %d. %s:</p><ul>", i+1, esc(h.Entries[i].Version), i, esc(h.Entries[i-1].Version))
			for _, n := range ns {
				b.WriteString("<li>" + esc(n) + "</li>")
			}
			b.WriteString("</ul>")
		}
	}
	b.WriteString("<h2>Change points</h2><p>" + esc(fmt.Sprintf(changeIntro, DefaultChangePointAlpha, DefaultChangePointMinSize)) + "</p>")
	if len(h.Changes) == 0 {
		b.WriteString("<p>None.</p>")
	} else {
		b.WriteString("<ul>")
		for _, l := range h.changeLines() {
			b.WriteString("<li>" + esc(l) + "</li>")
		}
		b.WriteString("</ul>")
	}
	b.WriteString("<h2>Steps</h2><p>Blue: p50, orange: p99, each the median over the entry's runs; band and whiskers: their range across runs. A red ring marks a step that regressed against the entry before, a green one a step that improved. A dashed line marks a change point, before the first entry after it: red when the step got slower, green when faster.</p>")
	for _, s := range h.Steps {
		b.WriteString("<h3>" + esc(s.Label()) + "</h3>")
		h.trendSVG(&b, s.Key)
		htmlTable(&b, historyStepHeader, h.stepRows(s.Key))
	}
	return b.String()
}

// trendSVG draws one step over the entries: the p50 and p99 medians as
// lines (broken where an entry lacks the step), their min–max across runs
// as a band and whiskers, the version and date of each entry below. The
// y axis is linear from 0, so a shift reads as its size.
func (h *History) trendSVG(b *strings.Builder, key string) {
	n := len(h.Entries)
	const left, plotW, top, plotH = 60, 660, 10, 170
	// Labels turn when they no longer fit side by side.
	slot := float64(plotW) / float64(max(n, 1))
	turned := slot < 100
	bottom := 40
	if turned {
		bottom = 110
	}
	hi := 0.0
	for _, e := range h.Entries {
		if p, ok := e.Points[key]; ok {
			hi = math.Max(hi, math.Max(p.P99Hi, p.P50Hi))
		}
	}
	tick := niceStep(hi / 4)
	yMax := tick * math.Max(1, math.Ceil(hi/tick))
	y := func(v float64) float64 { return top + plotH*(1-v/yMax) }
	x := func(i int) float64 { return left + slot*(float64(i)+0.5) }
	fmt.Fprintf(b, svgOpen, left+plotW+20, top+plotH+bottom)
	for v := 0.0; v <= yMax*1.0001; v += tick {
		label := fmtLatency(v)
		if v == 0 {
			label = "0"
		}
		fmt.Fprintf(b, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#eee'/><text x='%d' y='%.1f' text-anchor='end'>%s</text>",
			left, left+plotW, y(v), y(v), left-4, y(v)+4, label)
	}
	fmt.Fprintf(b, "<rect x='%d' y='%d' width='12' height='3' fill='%s'/><text x='%d' y='%d'>p50</text><rect x='%d' y='%d' width='12' height='3' fill='%s'/><text x='%d' y='%d'>p99</text>",
		left+plotW-90, top+2, palette[0], left+plotW-74, top+6, left+plotW-45, top+2, palette[1], left+plotW-29, top+6)
	fmt.Fprintf(b, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", left, top, left, top+plotH)
	for i, e := range h.Entries {
		lx, ly := x(i), float64(top+plotH+14)
		if turned {
			fmt.Fprintf(b, "<text transform='translate(%.1f,%.1f) rotate(-35)' text-anchor='end'><tspan>%s</tspan><tspan x='0' dy='12'>%s</tspan></text>",
				lx, ly, html.EscapeString(e.Version), html.EscapeString(e.Date()))
		} else {
			fmt.Fprintf(b, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s</text><text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>",
				lx, ly, html.EscapeString(e.Version), lx, ly+13, html.EscapeString(e.Date()))
		}
	}
	for _, c := range h.Changes {
		if c.Key != key {
			continue
		}
		colour := "#393"
		if c.Worse() {
			colour = "#c00"
		}
		cx := x(c.Entry) - slot/2
		fmt.Fprintf(b, "<line class='change' x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='%s' stroke-dasharray='4 3'><title>%s</title></line><text x='%.1f' y='%d' fill='%s'>%s %+.0f%%</text>",
			cx, cx, top, top+plotH, colour, html.EscapeString(h.Describe(c)), cx+3, top+24, colour, c.Stat, c.SizePct)
	}
	marks := map[int]string{}
	for i := range h.Entries {
		switch v := h.stepVerdict(i, key); {
		case strings.HasPrefix(v, VerdictRegressed):
			marks[i] = "#c00"
		case strings.HasPrefix(v, VerdictImproved):
			marks[i] = "#393"
		}
	}
	for _, stat := range []struct {
		name, colour string
		mid, lo, hi  func(TrendPoint) float64
	}{
		{"p50", palette[0], func(p TrendPoint) float64 { return p.P50 }, func(p TrendPoint) float64 { return p.P50Lo }, func(p TrendPoint) float64 { return p.P50Hi }},
		{"p99", palette[1], func(p TrendPoint) float64 { return p.P99 }, func(p TrendPoint) float64 { return p.P99Lo }, func(p TrendPoint) float64 { return p.P99Hi }},
	} {
		// Contiguous runs of entries that measured the step.
		var seg []int
		flush := func() {
			if len(seg) > 1 {
				var up, down, line []string
				for _, i := range seg {
					p := h.Entries[i].Points[key]
					up = append(up, fmt.Sprintf("%.1f,%.1f", x(i), y(stat.hi(p))))
					down = append([]string{fmt.Sprintf("%.1f,%.1f", x(i), y(stat.lo(p)))}, down...)
					line = append(line, fmt.Sprintf("%.1f,%.1f", x(i), y(stat.mid(p))))
				}
				fmt.Fprintf(b, "<polygon points='%s' fill='%s' fill-opacity='0.15'/>", strings.Join(append(up, down...), " "), stat.colour)
				fmt.Fprintf(b, "<polyline points='%s' fill='none' stroke='%s' stroke-width='2'/>", strings.Join(line, " "), stat.colour)
			}
			seg = nil
		}
		for i, e := range h.Entries {
			p, ok := e.Points[key]
			if !ok {
				flush()
				continue
			}
			seg = append(seg, i)
			xi := x(i)
			fmt.Fprintf(b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='%s'/>", xi, xi, y(stat.lo(p)), y(stat.hi(p)), stat.colour)
			for _, v := range []float64{stat.lo(p), stat.hi(p)} {
				fmt.Fprintf(b, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='%s'/>", xi-4, xi+4, y(v), y(v), stat.colour)
			}
			fmt.Fprintf(b, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'><title>%s %s: %s median of %d runs (%s–%s)</title></circle>",
				xi, y(stat.mid(p)), stat.colour, html.EscapeString(e.Version), stat.name, fmtLatency(stat.mid(p)), p.Runs, fmtLatency(stat.lo(p)), fmtLatency(stat.hi(p)))
			if c, ok := marks[i]; ok {
				fmt.Fprintf(b, "<circle cx='%.1f' cy='%.1f' r='7' fill='none' stroke='%s' stroke-width='2'/>", xi, y(stat.mid(p)), c)
			}
		}
		flush()
	}
	b.WriteString("</svg>")
}

// niceStep is the 1, 2 or 5 × 10^k at or above v: a grid step that
// labels read.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// WriteHistory writes history.md and history.html into dir.
func WriteHistory(dir string, h *History) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("history dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, HistoryMarkdownFile), []byte(HistoryMarkdown(h)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", HistoryMarkdownFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, HistoryHTMLFile), []byte(HistoryHTML(h)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", HistoryHTMLFile, err)
	}
	return nil
}
