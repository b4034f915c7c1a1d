package chaos

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Write puts chaos.json, chaos.md and chaos.html into dir.
func (rep *Report) Write(dir string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode chaos.json: %w", err)
	}
	files := map[string][]byte{
		"chaos.json": append(b, '\n'),
		"chaos.md":   []byte(Markdown(rep)),
		"chaos.html": []byte(HTML(rep)),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// ReadReport reads a chaos.json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rep, nil
}

func fmtMeasure(m Measure) string {
	if m.Kind == string(DetectNone) || m.Kind == string(RecoverNone) || m.Kind == "" {
		return "—"
	}
	return fmt.Sprintf("%s (%s)", m.Text(), m.Kind)
}

func fmtDur(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
}

func faultRows(rep *Report) [][]string {
	var rows [][]string
	for _, f := range rep.Faults {
		at := "—"
		if !f.InjectedAt.IsZero() {
			at = fmtDur(float64(f.InjectedAt.Sub(rep.Start)) / float64(time.Millisecond))
		}
		actors := strings.Join(f.Actors, ", ")
		if f.Error != "" {
			actors += " — error: " + f.Error
		}
		rows = append(rows, []string{f.Name, string(f.Action) + " " + string(f.Target), actors, at,
			fmtMeasure(f.Detection), fmtMeasure(f.Recovery), fmtDur(f.LongestWaitMS), fmtDur(f.WriteGapMS),
			fmt.Sprint(f.FailedWrites), fmtDur(f.UnavailableMS)})
	}
	return rows
}

// fillRows are each fill fault's figures: the fill, the refusal, the
// recovery step by step.
func fillRows(rep *Report) [][]string {
	var rows [][]string
	for _, f := range rep.Faults {
		fi := f.Fill
		if fi == nil {
			continue
		}
		row := func(what, value string) { rows = append(rows, []string{f.Name, what, value}) }
		filled := "not reached"
		if f.Error == "" && !f.InjectedAt.IsZero() {
			filled = f.InjectedAt.Sub(fi.StartedAt).Round(time.Millisecond).String()
		}
		row("filled", fmt.Sprintf("%d objects, %.0f MiB in %s, under the load", fi.Objects, float64(fi.Bytes)/(1<<20), filled))
		if fi.Refusal != "" {
			row("refused with", fi.Refusal)
		}
		row("recovery: filler deleted", fmt.Sprint(fi.Deleted))
		row("recovery: engine read etcd's history first", fmtDur(fi.HistoryReadMS))
		if r := fi.Recovery; r != nil {
			row("recovery: compacted to revision", fmt.Sprint(r.CompactedTo))
			for _, m := range r.Before {
				after := "—"
				for _, a := range r.After {
					if a.Endpoint == m.Endpoint {
						after = fmt.Sprintf("%.1f MiB (in use %.1f MiB)", float64(a.DBSize)/(1<<20), float64(a.DBSizeInUse)/(1<<20))
					}
				}
				row("recovery: "+m.Endpoint, fmt.Sprintf("%.1f MiB (in use %.1f MiB, NOSPACE %v) → %s", float64(m.DBSize)/(1<<20),
					float64(m.DBSizeInUse)/(1<<20), m.NoSpace, after))
			}
			row("recovery: NOSPACE alarms disarmed", fmt.Sprint(r.Disarmed))
		}
		back := "not observed"
		if fi.RecoveredMS != nil {
			back = fmtDur(*fi.RecoveredMS)
		}
		row("first write acknowledged after the recovery began", back)
		row("writes failed without a NOSPACE answer", fmt.Sprint(f.UnclearErrors))
	}
	return rows
}

// writeErrorRows are each fault's failed probe writes by their answer.
func writeErrorRows(rep *Report) [][]string {
	var rows [][]string
	for _, f := range rep.Faults {
		answers := make([]string, 0, len(f.WriteErrors))
		for a := range f.WriteErrors {
			answers = append(answers, a)
		}
		sort.Strings(answers)
		for _, a := range answers {
			rows = append(rows, []string{f.Name, a, fmt.Sprint(f.WriteErrors[a])})
		}
	}
	return rows
}

var (
	writeErrorHeader = []string{"fault", "last answer", "writes"}
	fillHeader       = []string{"fault", "", ""}
)

var faultHeader = []string{"fault", "action", "actors", "at", "detection", "recovery", "longest wait", "longest write gap", "failed writes", "unavailable"}

func invariantRows(rep *Report) [][]string {
	var rows [][]string
	for _, inv := range rep.Invariants {
		state := "holds"
		switch {
		case !inv.Checked:
			state = "NOT CHECKED"
		case inv.Count > 0:
			state = "BROKEN"
		}
		rows = append(rows, []string{inv.Name, state, inv.Summary, strings.Join(inv.Detail, "; ")})
	}
	return rows
}

// correctnessRows are the linearizability check's and the watch
// guarantees' figures.
func correctnessRows(rep *Report) [][]string {
	var rows [][]string
	if l := rep.Linearizability; l != nil {
		rows = append(rows,
			[]string{"linearizability: workload", fmt.Sprintf("%d clients over %d apiservers on %d objects", l.Clients, l.APIServers, l.Objects)},
			[]string{"linearizability: operations checked", fmt.Sprintf("%d: %d gets, %d list reads (%d lists), CAS %d ok / %d conflict / %d unknown; %d reads unanswered, not checked",
				l.Operations, l.Gets, l.ListReads, l.Lists, l.CASOK, l.CASConflict, l.CASUnknown, l.FailedReads)},
			[]string{"linearizability: checker", fmt.Sprintf("%s: %s wall, %.0f ms CPU", l.Result, fmtDur(l.CheckWallMS), l.CheckCPUMS)})
		if l.Visualization != "" {
			rows = append(rows, []string{"linearizability: visualization", l.Visualization})
		}
	}
	if w := rep.Watch; w != nil {
		rows = append(rows,
			[]string{"watch: watchers", fmt.Sprintf("%d (pods, the beat and the quiet set without bookmarks, on every apiserver), %d streams restarted", w.Watchers, w.Restarts)},
			[]string{"watch: delivered", fmt.Sprintf("%d events, %d bookmarks", w.Events, w.Bookmarks)},
			[]string{"watch: resumptions", fmt.Sprintf("%d checked, %d answered 410, %d broken by a fault, %d not made (queue full)", w.Resumes, w.Gone, w.Interrupted, w.Skipped)})
	}
	return rows
}

func verdictRows(rep *Report) [][]string {
	var rows [][]string
	for _, v := range rep.Verdicts {
		p := "pass"
		if !v.Pass {
			p = "FAIL"
		}
		rows = append(rows, []string{v.Line, v.Value, v.Limit, p})
	}
	return rows
}

func mdTable(b *strings.Builder, header []string, rows [][]string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = esc(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

func verdictWord(rep *Report) string {
	if rep.Passed {
		return "PASSED"
	}
	return "FAILED"
}

// Markdown renders the chaos section.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Chaos: %s — gate %s %s\n\n", rep.Scenario, rep.Gate, verdictWord(rep))
	if rep.Description != "" {
		b.WriteString(rep.Description + "\n\n")
	}
	if rep.Seed != "" {
		b.WriteString("Seed claim: " + rep.Seed + "\n\n")
	}
	cluster := fmt.Sprintf("%d etcd, %d apiservers, %d controller-managers, %d schedulers, %d hollow + %d real nodes (%s provider)",
		rep.Cluster.EtcdMembers, rep.Cluster.APIServers, rep.Cluster.ControllerManagers, rep.Cluster.Schedulers,
		rep.Cluster.HollowNodes, rep.Cluster.RealNodes, rep.Provider)
	if rep.External != "" {
		cluster = "a cluster kstep does not run (external provider): " + rep.External
	}
	fmt.Fprintf(&b, "Cluster: %s. "+
		"Load: %d objects (%d load errors); probe: %d writes, %d acknowledged, %d client errors retried. Duration %.0f s.\n\n",
		cluster, rep.LoadObjects, rep.LoadErrors,
		rep.ProbeWrites, rep.ProbeAcked, rep.ClientErrors, rep.DurationS)
	if e := rep.Cluster.Etcd; e.HeartbeatInterval.Duration != 0 || e.ElectionTimeout.Duration != 0 {
		fmt.Fprintf(&b, "etcd Raft: heartbeat %v, election timeout %v.\n\n", e.HeartbeatInterval.Duration, e.ElectionTimeout.Duration)
	}
	if t := rep.Cluster.ProcsText(); t != "" {
		fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(t[:1])+t[1:])
	}
	if rep.Security != "" {
		fmt.Fprintf(&b, "Apiserver security: %s.\n\n", rep.Security)
	}
	b.WriteString("### Faults\n\n")
	mdTable(&b, faultHeader, faultRows(rep))
	var steps [][]string
	for _, f := range rep.Faults {
		for _, s := range f.Steps {
			steps = append(steps, []string{f.Name, s.Pair, s.Phase, fmt.Sprint(s.Count), fmtDur(s.P50MS), fmtDur(s.P99MS)})
		}
	}
	if len(steps) > 0 {
		b.WriteString("\n### Step latencies around each fault\n\n")
		mdTable(&b, []string{"fault", "steps", "phase", "pods", "p50", "p99"}, steps)
	}
	if rows := writeErrorRows(rep); len(rows) > 0 {
		b.WriteString("\n### Failed probe writes by answer\n\n")
		mdTable(&b, writeErrorHeader, rows)
	}
	if rows := fillRows(rep); len(rows) > 0 {
		b.WriteString("\n### etcd's quota filled and recovered\n\n")
		mdTable(&b, fillHeader, rows)
	}
	b.WriteString("\n### Invariants\n\n")
	mdTable(&b, []string{"invariant", "state", "summary", "detail"}, invariantRows(rep))
	if rows := correctnessRows(rep); len(rows) > 0 {
		b.WriteString("\n### Linearizability and the watch guarantees\n\n")
		mdTable(&b, []string{"", ""}, rows)
	}
	b.WriteString("\n### Gate " + rep.Gate + "\n\n")
	mdTable(&b, []string{"line", "value", "limit", "verdict"}, verdictRows(rep))
	for _, n := range rep.Notes {
		b.WriteString("\nNote: " + n + "\n")
	}
	return b.String()
}

// HTML renders the chaos section as a self-contained page: the timeline
// of faults with their detection and recovery bars (SVG), the tables.
func HTML(rep *Report) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>kstep chaos: " + html.EscapeString(rep.Scenario) + "</title>")
	b.WriteString(`<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}.FAIL,.BROKEN{color:#b00;font-weight:bold}.pass,.holds{color:#070}</style></head><body>`)
	fmt.Fprintf(&b, "<h2>Chaos: %s — gate %s <span class=\"%s\">%s</span></h2>", html.EscapeString(rep.Scenario), html.EscapeString(rep.Gate),
		map[bool]string{true: "pass", false: "FAIL"}[rep.Passed], verdictWord(rep))
	if rep.Description != "" {
		b.WriteString("<p>" + html.EscapeString(rep.Description) + "</p>")
	}
	b.WriteString("<h3>Timeline</h3>")
	timelineSVG(&b, rep)
	table := func(header []string, rows [][]string, classCol int) {
		b.WriteString("<table><tr>")
		for _, h := range header {
			b.WriteString("<th>" + html.EscapeString(h) + "</th>")
		}
		b.WriteString("</tr>")
		for _, r := range rows {
			b.WriteString("<tr>")
			for i, c := range r {
				if i == classCol {
					fmt.Fprintf(&b, "<td class=\"%s\">%s</td>", html.EscapeString(strings.Fields(c + " x")[0]), html.EscapeString(c))
				} else {
					b.WriteString("<td>" + html.EscapeString(c) + "</td>")
				}
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>")
	}
	b.WriteString("<h3>Faults</h3>")
	table(faultHeader, faultRows(rep), -1)
	if rows := writeErrorRows(rep); len(rows) > 0 {
		b.WriteString("<h3>Failed probe writes by answer</h3>")
		table(writeErrorHeader, rows, -1)
	}
	if rows := fillRows(rep); len(rows) > 0 {
		b.WriteString("<h3>etcd's quota filled and recovered</h3>")
		table(fillHeader, rows, -1)
	}
	b.WriteString("<h3>Invariants</h3>")
	table([]string{"invariant", "state", "summary", "detail"}, invariantRows(rep), 1)
	if rows := correctnessRows(rep); len(rows) > 0 {
		b.WriteString("<h3>Linearizability and the watch guarantees</h3>")
		table([]string{"", ""}, rows, -1)
	}
	b.WriteString("<h3>Gate " + html.EscapeString(rep.Gate) + "</h3>")
	table([]string{"line", "value", "limit", "verdict"}, verdictRows(rep), 3)
	b.WriteString("</body></html>\n")
	return b.String()
}

// timelineSVG draws one row per fault on the run's time axis: the fault's
// span (injection to undo, grey), detection (orange tick) and recovery
// (green bar from the injection).
func timelineSVG(b *strings.Builder, rep *Report) {
	const w, left, row = 900.0, 180.0, 28.0
	total := rep.End.Sub(rep.Start).Seconds()
	if total <= 0 {
		total = 1
	}
	x := func(t time.Time) float64 { return left + (w-left-10)*t.Sub(rep.Start).Seconds()/total }
	xs := func(s float64) float64 { return (w - left - 10) * s / total }
	h := row*float64(len(rep.Faults)) + 40
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-size="12">`, w, h)
	for s := 0.0; s <= total; s += tick(total) {
		px := left + xs(s)
		fmt.Fprintf(b, `<line x1="%.1f" y1="10" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle" fill="#666">%.0fs</text>`,
			px, px, h-20, px, h-6, s)
	}
	for i, f := range rep.Faults {
		y := 14 + row*float64(i)
		fmt.Fprintf(b, `<text x="4" y="%.0f">%s</text>`, y+12, html.EscapeString(f.Name))
		if f.InjectedAt.IsZero() {
			continue
		}
		end := f.UndoneAt
		if end.IsZero() || end.Before(f.InjectedAt) {
			end = f.InjectedAt.Add(200 * time.Millisecond)
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="8" fill="#bbb"><title>down %s</title></rect>`,
			x(f.InjectedAt), y, max(2, x(end)-x(f.InjectedAt)), end.Sub(f.InjectedAt).Round(time.Millisecond))
		color := "#2a2"
		if f.Error != "" {
			color = "#b00"
		}
		if f.Recovery.MS != nil {
			fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="8" fill="%s"><title>recovery %s</title></rect>`,
				x(f.InjectedAt), y+9, max(2, xs(*f.Recovery.MS/1000)), color, html.EscapeString(f.Recovery.Text()))
		}
		if f.Detection.MS != nil {
			px := x(f.InjectedAt) + xs(*f.Detection.MS/1000)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#e80" stroke-width="3"><title>detection %s</title></line>`,
				px, y-2, px, y+19, html.EscapeString(f.Detection.Text()))
		}
	}
	b.WriteString("</svg>")
}

// tick picks a readable axis step for a span of total seconds.
func tick(total float64) float64 {
	for _, t := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300} {
		if total/t <= 12 {
			return t
		}
	}
	return 600
}
