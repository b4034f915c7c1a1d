package results

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
)

// The files of a set's report, beside set.json.
const (
	SetMarkdownFile = "set.md"
	SetHTMLFile     = "set.html"
)

// SetRow is one step across the runs of a set, as set.json's rows carry
// it: the step's identity and its TrendPoint (median, range and run-to-run
// CV of the runs' p50 and p99).
type SetRow struct {
	Key   string `json:"key"` // Step.Key()
	Step  string `json:"step"`
	Name  string `json:"name"`
	Nodes string `json:"nodes"`
	TrendPoint
}

// SetRows are each step of s across its runs, in the order the runs first
// carry them, end to end last: the median, the range and the run-to-run CV
// of the runs' p50s and p99s, as CompareSets judges them.
func SetRows(s *Set) []SetRow {
	steps := stepsOf(s)
	var out []SetRow
	for _, k := range steps.order {
		sr := steps.byKey[k]
		out = append(out, SetRow{Key: k, Step: sr.step.Step, Name: sr.step.Name, Nodes: sr.step.Nodes, TrendPoint: sr.point()})
	}
	return out
}

var (
	setRunHeader = []any{"run", "valid", "disrupted", "pods", "warm-up pods", "pods/s", "e2e p50 ms", "e2e p99 ms"}
	setRowHeader = []any{"step", "transition", "nodes", "runs", "pods/run", "p50 median ms", "p50 min–max", "p50 CV %", "p99 median ms", "p99 min–max", "p99 CV %"}
)

func setRunRows(s *Set) [][]string {
	var out [][]string
	for i, r := range s.Runs {
		name := RunDirName(i + 1)
		if i < len(s.Dirs) && s.Dirs[i] != "" {
			name = filepath.Base(s.Dirs[i])
		}
		warm := "—"
		if r.WarmUp != nil {
			warm = fmt.Sprint(r.WarmUp.Pods)
		}
		out = append(out, []string{name, fmt.Sprint(r.Valid), fmt.Sprint(disrupted(r)), fmt.Sprint(r.Pods), warm,
			fmt.Sprintf("%.1f", r.Throughput.PodsPerS), fmtMS(r.EndToEnd.P50), fmtMS(r.EndToEnd.P99)})
	}
	return out
}

// SetRowCells is one row of the set table: step, transition, nodes, runs,
// pods a run, then p50's median, range and CV and p99's.
func SetRowCells(r SetRow) []string {
	return []string{r.Step, r.Name, nodesOf(r.Nodes), fmt.Sprint(r.Runs), fmt.Sprint(r.Pods),
		fmtMS(r.P50), fmtMS(r.P50Lo) + "–" + fmtMS(r.P50Hi), FormatCV(r.P50CVPct, r.Runs),
		fmtMS(r.P99), fmtMS(r.P99Lo) + "–" + fmtMS(r.P99Hi), FormatCV(r.P99CVPct, r.Runs)}
}

// SetRowHeader is SetRowCells' header.
func SetRowHeader() []any { return append([]any(nil), setRowHeader...) }

func setRowRows(rows []SetRow) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = SetRowCells(r)
	}
	return out
}

const setIntro = "A set is runs of one build, each on a fresh cluster. Per step, the median over the runs of each run's p50 and p99 (what `kstep compare` judges), their range and their run-to-run coefficient of variation (CV: the sample standard deviation of the runs' values over their mean). The CV is the noise a comparison of two such sets works against: at 5 runs a side, a shift well below about twice it is not seen."

// setNotes are the set's lines beside its tables: its warm-up, and the
// rows (set.json's, SetRows of s) whose runs gave them few pods.
func setNotes(s *Set, rows []SetRow) []string {
	var out []string
	if len(s.Runs) == 0 {
		return nil
	}
	if w := s.Runs[0].WarmUp; w != nil {
		out = append(out, "warm-up: "+w.Text())
	} else {
		out = append(out, "warm-up: none (every pod of the load is in the rows)")
	}
	if len(s.Runs) < 2 {
		out = append(out, "one run: no CV")
	}
	var few []string
	for _, r := range rows {
		if r.Pods < FewPods {
			few = append(few, fmt.Sprintf("%s %s [%s] (%d)", r.Step, r.Name, nodesOf(r.Nodes), r.Pods))
		}
	}
	if len(few) > 0 {
		out = append(out, fmt.Sprintf("rows with fewer than %d pods a run, whose p50 moves with the few pods a run gave them more than with the cluster (more objects, or fewer hollow nodes beside the real ones, give them more): %s",
			FewPods, strings.Join(few, "; ")))
	}
	return out
}

// FewPods is the fewest samples a run gives a row below which the set
// report says its p50 is a few pods': with 10, the p50 is the mean of
// the 5th and 6th.
const FewPods = 20

// SetMarkdown is set.md.
func SetMarkdown(m *SetManifest, s *Set) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kstep set %s\n\n", filepath.Base(s.Dir))
	fmt.Fprintf(&b, "Profile %s, provider %s, version %s, started %s: %d of %d runs.\n\n", m.Profile, m.Provider, m.Version, m.StartedAt, len(s.Runs), m.Repeat)
	b.WriteString(setIntro + "\n\n")
	for _, n := range setNotes(s, m.Rows) {
		b.WriteString("- " + n + "\n")
	}
	b.WriteString("\n## Runs\n\n")
	mdTable(&b, setRunHeader, setRunRows(s))
	b.WriteString("\n## Steps across the runs\n\n")
	mdTable(&b, setRowHeader, setRowRows(m.Rows))
	return b.String()
}

// SetHTML is set.html: set.md's tables on one offline page.
func SetHTML(m *SetManifest, s *Set) string {
	var b strings.Builder
	esc := html.EscapeString
	title := "kstep set " + filepath.Base(s.Dir)
	b.WriteString("<!doctype html><meta charset=utf-8><title>" + esc(title) + "</title>" + htmlStyle)
	b.WriteString("<h1>" + esc(title) + "</h1>")
	fmt.Fprintf(&b, "<p>Profile %s, provider %s, version %s, started %s: %d of %d runs.</p>", esc(m.Profile), esc(m.Provider), esc(m.Version), esc(m.StartedAt), len(s.Runs), m.Repeat)
	b.WriteString("<p>" + esc(strings.ReplaceAll(setIntro, "`", "")) + "</p><ul>")
	for _, n := range setNotes(s, m.Rows) {
		b.WriteString("<li>" + esc(n) + "</li>")
	}
	b.WriteString("</ul><h2>Runs</h2>")
	htmlTable(&b, setRunHeader, setRunRows(s))
	b.WriteString("<h2>Steps across the runs</h2>")
	htmlTable(&b, setRowHeader, setRowRows(m.Rows))
	return b.String()
}

// WriteSetReport writes dir/set.json (m, its rows from s's runs), set.md
// and set.html.
func WriteSetReport(dir string, m *SetManifest, s *Set) error {
	m.Rows = nil
	if s != nil && len(s.Runs) > 0 {
		m.Rows = SetRows(s)
	}
	if err := WriteSetManifest(dir, m); err != nil {
		return err
	}
	if s == nil || len(s.Runs) == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, SetMarkdownFile), []byte(SetMarkdown(m, s)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", SetMarkdownFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, SetHTMLFile), []byte(SetHTML(m, s)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", SetHTMLFile, err)
	}
	return nil
}
