package results

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// historyStep is one synthetic step of historyRun: its p50 in ms (p90 and
// p99 follow from it).
type historyStep struct {
	step, name, nodes string
	p50               float64
	simulated         bool
}

var historySteps = []historyStep{
	{"①", "inside: admission + etcd write", NodesAll, 6, false},
	{"②", "watch propagation → controller", NodesAll, 2.5, false},
	{"⑤", "binding persisted", NodesReal, 9, false},
	{"⑤", "binding persisted", NodesHollow, 11, false},
	{"⑦-b", "sandbox + CNI + volumes", NodesReal, 650, false},
	{"⑦-b", "sandbox + CNI + volumes", NodesHollow, 0.4, true},
}

// historyRun is a valid run of build version started at start. jitter
// (a few percent, different per run) keeps runs of one build apart, as
// fresh clusters are; slower multiplies one step's latencies by its
// factor, keyed by Step.Key.
func historyRun(version string, start time.Time, jitter float64, slower map[string]float64) *Run {
	r := &Run{Schema: Schema, ID: version + "-" + start.Format("150405"), Provider: "process", Runtime: "containerd+hollow", Profile: "small",
		Version: version, Valid: true, StartedAt: start.Format(time.RFC3339), DurationS: 40,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 2, RealNodes: 1, HollowNodes: 20, LatencyProfile: "zero"},
			NodeKind: "1 real (containerd) + 20 hollow (zero)", Objects: 50, Replicas: 2, QPS: 20},
		Pods: 100, Events: 1500,
	}
	for _, hs := range historySteps {
		s := Step{Step: hs.step, Name: hs.name, Nodes: hs.nodes, Simulated: hs.simulated, Verdict: NA}
		if hs.simulated {
			s.Verdict = "simulated"
		}
		f := 1 + jitter
		if m, ok := slower[s.Key()]; ok {
			f *= m
		}
		s.Summary = Summary{Count: 50, P50: hs.p50 * f, P90: 2 * hs.p50 * f, P99: 3 * hs.p50 * f, Max: 4 * hs.p50 * f}
		r.Steps = append(r.Steps, s)
	}
	r.EndToEnd = Step{Step: "e2e", Name: "client sent → pod Ready observed", Nodes: NodesAll, Verdict: NA,
		Summary: Summary{Count: 100, P50: 40 * (1 + jitter), P90: 700, P99: 900 * (1 + jitter), Max: 1000}}
	return r
}

// writeHistorySet writes a set of n runs of version into dir (set.json and
// run-01..), the first started at start.
func writeHistorySet(t *testing.T, dir, version string, start time.Time, n int, slower map[string]float64) {
	t.Helper()
	m := &SetManifest{Profile: "small", Provider: "process", Version: version, StartedAt: start.Format(time.RFC3339), Repeat: n}
	for i := 1; i <= n; i++ {
		// ±4 %, a different value per run.
		jitter := 0.04 * float64((i*7)%5-2) / 2
		r := historyRun(version, start.Add(time.Duration(i-1)*2*time.Minute), jitter, slower)
		if err := WriteRun(filepath.Join(dir, RunDirName(i)), r); err != nil {
			t.Fatal(err)
		}
		m.Runs = append(m.Runs, RunDirName(i))
	}
	if err := WriteSetManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// historyDirs writes, in t.TempDir(), five entries of successive builds,
// named so that their names' order is not their time order: three sets of
// 5 runs (the third's ⑤ on hollow nodes 40 % slower), then a single run
// (too few to compare) and a set of another profile (not comparable).
func historyDirs(t *testing.T) (dirs, versions []string) {
	root := t.TempDir()
	day := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	versions = []string{"v0.1-1-gabc", "v0.1-2-gdef", "v0.1-3-g123", "v0.1-4-g456", "v0.1-5-g789"}
	names := []string{"e", "d", "c", "b", "a"}
	for _, n := range names {
		dirs = append(dirs, filepath.Join(root, n))
	}
	writeHistorySet(t, dirs[0], versions[0], day, 5, nil)
	writeHistorySet(t, dirs[1], versions[1], day.Add(3*time.Hour), 5, nil)
	writeHistorySet(t, dirs[2], versions[2], day.Add(24*time.Hour), 5, map[string]float64{"⑤|binding persisted|hollow": 1.4})
	if err := WriteRun(dirs[3], historyRun(versions[3], day.Add(48*time.Hour), 0, nil)); err != nil {
		t.Fatal(err)
	}
	writeHistorySet(t, dirs[4], versions[4], day.Add(72*time.Hour), 5, nil)
	for i := 1; i <= 5; i++ {
		path := filepath.Join(dirs[4], RunDirName(i))
		r, err := ReadRun(path)
		if err != nil {
			t.Fatal(err)
		}
		r.Profile = "nightly"
		if err := WriteRun(path, r); err != nil {
			t.Fatal(err)
		}
	}
	return dirs, versions
}

// readHistory reads dirs as `kstep history` does, in the order given.
func readHistory(t *testing.T, dirs []string) *History {
	t.Helper()
	var sets []*Set
	for _, d := range dirs {
		s, err := ReadSet(d)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	return NewHistory(sets, CompareOptions{})
}

// The history lists every entry, oldest first, and every step; each entry
// after the first carries its comparison with the one before: a regression
// names its step, shift and p; a single run is too few; a set of another
// profile is not comparable.
func TestHistoryMarkdown(t *testing.T) {
	dirs, versions := historyDirs(t)
	// Given newest first: the history orders them by their runs' start.
	rev := append([]string(nil), dirs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	h := readHistory(t, rev)
	if len(h.Entries) != len(versions) {
		t.Fatalf("%d entries, want %d", len(h.Entries), len(versions))
	}
	md := HistoryMarkdown(h)
	last := -1
	for i, v := range versions {
		row := mdRow(md, fmt.Sprint(i+1), v)
		if row == "" {
			t.Fatalf("history.md lacks entry %d %s:\n%s", i+1, v, md)
		}
		at := strings.Index(md, row)
		if at < last {
			t.Errorf("entry %s out of time order", v)
		}
		last = at
	}
	labels := map[string]bool{}
	for _, hs := range historySteps {
		l := fmt.Sprintf("%s %s [%s", hs.step, hs.name, hs.nodes)
		if hs.simulated {
			l += ", simulated"
		}
		labels[l+"]"] = true
	}
	labels["e2e client sent → pod Ready observed [all]"] = true
	for l := range labels {
		if !strings.Contains(md, "\n### "+l+"\n") {
			t.Errorf("history.md lacks the step %q", l)
		}
	}
	if n := strings.Count(md, "\n### "); n != len(labels) {
		t.Errorf("%d step sections, want %d", n, len(labels))
	}

	verdict := func(i int) string { return h.Verdict(i) }
	if v := verdict(0); v != "—" {
		t.Errorf("first entry's verdict %q", v)
	}
	if v := verdict(1); !strings.HasPrefix(v, "no regression") {
		t.Errorf("%s against %s (same build's numbers): %q", versions[1], versions[0], v)
	}
	reg := regexp.MustCompile(`^1 regressed: ⑤ binding persisted \[hollow\] \(p50 \+[0-9.]+% \[[-+0-9., ]+\] p=[0-9.e-]+ adjusted [0-9.e-]+; p99 \+[0-9.]+% [^)]*\)$`)
	if v := verdict(2); !reg.MatchString(v) {
		t.Errorf("%s (⑤ hollow 40 %% slower): %q, want it to match %s", versions[2], v, reg)
	}
	if v := verdict(3); !strings.HasPrefix(v, "too few runs") {
		t.Errorf("%s (one run against five): %q", versions[3], v)
	}
	if v := verdict(4); !strings.HasPrefix(v, "not comparable: ") || !strings.Contains(v, `profile "nightly"`) {
		t.Errorf("%s (another profile): %q", versions[4], v)
	}
	// The entries table carries the verdicts, the step tables their own.
	if row := mdRow(md, "3", versions[2]); !strings.Contains(row, "1 regressed: ⑤ binding persisted [hollow] (p50 +") {
		t.Errorf("entries row of %s: %q", versions[2], row)
	}
	if row := mdRow(md, "4", versions[3]); !strings.HasSuffix(row, "| "+verdict(3)+" |") {
		t.Errorf("entries row of %s: %q", versions[3], row)
	}
	sec := md[strings.Index(md, "### ⑤ binding persisted [hollow]"):]
	sec = sec[:strings.Index(sec[4:], "###")+4]
	if row := mdRow(sec, "3", versions[2]); !strings.Contains(row, "| regressed: p50 +") {
		t.Errorf("⑤ hollow row of %s: %q", versions[2], row)
	}
	if row := mdRow(sec, "2", versions[1]); !strings.HasSuffix(row, "| ok |") {
		t.Errorf("⑤ hollow row of %s: %q", versions[1], row)
	}
	sec = md[strings.Index(md, "### ⑤ binding persisted [real]"):]
	if row := mdRow(sec, "3", versions[2]); !strings.HasSuffix(row, "| ok |") {
		t.Errorf("⑤ real row of %s (unchanged): %q", versions[2], row)
	}
}

// An entry's point is the median over its runs of each run's p50 and p99,
// with their range across runs.
func TestHistoryPoints(t *testing.T) {
	dirs, _ := historyDirs(t)
	h := readHistory(t, dirs[:3])
	// Runs 1..5 have jitter 0.04·((7i mod 5) − 2)/2: 0, +0.04, −0.02, +0.02,
	// −0.04; the median of five is the middle one, 0.
	p := h.Entries[2].Points["⑤|binding persisted|hollow"]
	base := 11 * 1.4
	want := TrendPoint{Runs: 5, P50: base, P50Lo: base * 0.96, P50Hi: base * 1.04, P99: 3 * base, P99Lo: 3 * base * 0.96, P99Hi: 3 * base * 1.04}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", p.P50, want.P50}, {"p50 lo", p.P50Lo, want.P50Lo}, {"p50 hi", p.P50Hi, want.P50Hi},
		{"p99", p.P99, want.P99}, {"p99 lo", p.P99Lo, want.P99Lo}, {"p99 hi", p.P99Hi, want.P99Hi}} {
		if d := c.got - c.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if p.Runs != 5 {
		t.Errorf("%d runs, want 5", p.Runs)
	}
}

// history.html is self-contained (no script, stylesheet, font or image
// fetched: no address but the SVG namespace) and draws a chart per step.
func TestHistoryHTML(t *testing.T) {
	dirs, versions := historyDirs(t)
	h := readHistory(t, dirs)
	page := HistoryHTML(h)
	rest := strings.ReplaceAll(page, "xmlns='http://www.w3.org/2000/svg'", "")
	for _, bad := range []string{"http://", "https://", "<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(rest, bad) {
			t.Errorf("history.html contains %q", bad)
		}
	}
	if n := strings.Count(page, "<svg"); n != len(h.Steps) {
		t.Errorf("%d charts, want one per step (%d)", n, len(h.Steps))
	}
	for _, s := range h.Steps {
		i := strings.Index(page, "<h3>"+s.Label()+"</h3>")
		if i < 0 || !strings.HasPrefix(page[i+len("<h3>"+s.Label()+"</h3>"):], "<svg") {
			t.Errorf("no chart under the heading of %s", s.Label())
		}
	}
	for _, v := range versions {
		if !strings.Contains(page, "<td>"+v+"</td>") {
			t.Errorf("history.html lacks the entry %s", v)
		}
	}
	// The regressing step's chart rings the entry that regressed.
	i := strings.Index(page, "<h3>⑤ binding persisted [hollow]</h3>")
	chart := page[i : i+strings.Index(page[i:], "</svg>")]
	if !strings.Contains(chart, "stroke='#c00'") {
		t.Error("⑤ hollow chart does not mark its regression")
	}
	i = strings.Index(page, "<h3>① inside: admission + etcd write [all]</h3>")
	if chart := page[i : i+strings.Index(page[i:], "</svg>")]; strings.Contains(chart, "stroke='#c00'") {
		t.Error("① chart marks a regression it does not have")
	}

	out := filepath.Join(t.TempDir(), "history")
	if err := WriteHistory(out, h); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{HistoryMarkdownFile, HistoryHTMLFile} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
}

func TestNiceStep(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.1: 2, 3: 5, 7: 10, 120: 200, 4500: 5000} {
		if got := niceStep(v); got != want {
			t.Errorf("niceStep(%g) = %g, want %g", v, got, want)
		}
	}
}
