package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWith is a run whose one step and end to end have these p50 and p99.
func runWith(p50, p99 float64) *Run {
	st := Step{Step: "⑤", Name: "node selection", Nodes: NodesHollow, Summary: Summary{Count: 100, P50: p50, P99: p99}}
	return &Run{Schema: Schema, Provider: "process", Profile: "quick", Valid: true, Pods: 100,
		Steps: []Step{st}, EndToEnd: Step{Step: "e2e", Name: "end to end", Nodes: NodesAll, Summary: Summary{Count: 100, P50: 2 * p50, P99: 2 * p99}}}
}

// A row's CV is the sample standard deviation of the runs' values over
// their mean: 10, 12, 14 have mean 12 and standard deviation 2, 16.67 %.
func TestSetRowsCV(t *testing.T) {
	s := &Set{Runs: []*Run{runWith(10, 100), runWith(12, 100), runWith(14, 100)}}
	rows := SetRows(s)
	if len(rows) != 2 || rows[0].Key != "⑤|node selection|hollow" || rows[1].Step != "e2e" {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if math.Abs(r.P50CVPct-100*2.0/12) > 1e-9 || r.P99CVPct != 0 || r.Runs != 3 || r.P50 != 12 || r.P50Lo != 10 || r.P50Hi != 14 {
		t.Errorf("row %+v: want p50 12 (10–14) at CV 16.67 %%, p99 CV 0", r.TrendPoint)
	}
	// The same spread at twice the level is the same CV.
	if e := rows[1]; math.Abs(e.P50CVPct-r.P50CVPct) > 1e-9 {
		t.Errorf("e2e CV %g, want %g", e.P50CVPct, r.P50CVPct)
	}
	// One run has no CV, and the table says so.
	one := SetRows(&Set{Runs: []*Run{runWith(10, 100)}})
	if one[0].P50CVPct != 0 || SetRowCells(one[0])[7] != "—" {
		t.Errorf("one run: CV %g, cell %q", one[0].P50CVPct, SetRowCells(one[0])[7])
	}
	if r.Pods != 100 {
		t.Errorf("pods a run %d, want 100", r.Pods)
	}
}

// compare gives each side's CV beside its median.
func TestCompareSetsCV(t *testing.T) {
	base := &Set{Runs: []*Run{runWith(10, 100), runWith(12, 100), runWith(14, 100), runWith(12, 100)}}
	cur := &Set{Runs: []*Run{runWith(12, 90), runWith(12, 110), runWith(12, 100), runWith(12, 100)}}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Deltas) != 2 {
		t.Fatalf("deltas %+v refused %v", c.Deltas, c.Refused)
	}
	d := c.Deltas[0]
	wantBase := 100 * math.Sqrt(8.0/3) / 12 // values 10, 12, 14, 12: sum of squares 8 over 3
	if math.Abs(d.BaseP50CVPct-wantBase) > 1e-9 || d.NewP50CVPct != 0 || d.BaseP99CVPct != 0 || math.Abs(d.NewP99CVPct-100*math.Sqrt(200.0/3)/100) > 1e-9 {
		t.Errorf("CVs base p50 %g (want %g), new p50 %g, base p99 %g, new p99 %g", d.BaseP50CVPct, wantBase, d.NewP50CVPct, d.BaseP99CVPct, d.NewP99CVPct)
	}
}

// A set's report: set.json carries each row's CV, set.md and set.html
// its table with the CV columns and the warm-up; compare refuses sets
// whose warm-ups differ.
func TestWriteSetReport(t *testing.T) {
	dir := t.TempDir()
	s := &Set{Dir: dir, Runs: []*Run{runWith(10, 100), runWith(12, 100), runWith(14, 100)}}
	for _, r := range s.Runs {
		r.WarmUp = &WarmUp{Objects: 20, LeftOutObjects: 20, Pods: 20}
	}
	m := &SetManifest{Profile: "quick", Provider: "process", Repeat: 3, Runs: []string{"run-01", "run-02", "run-03"}}
	if err := WriteSetReport(dir, m, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSetManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 2 || math.Abs(back.Rows[0].P50CVPct-100*2.0/12) > 1e-9 {
		t.Errorf("set.json rows %+v", back.Rows)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, SetFile))
	if !strings.Contains(string(raw), `"p50_cv_pct"`) {
		t.Errorf("set.json has no p50_cv_pct:\n%s", raw)
	}
	for _, f := range []string{SetMarkdownFile, SetHTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"p50 CV %", "16.7", "the first 20 objects"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	other := &Set{Runs: []*Run{runWith(10, 100), runWith(12, 100), runWith(14, 100), runWith(12, 100)}}
	c := CompareSets(&Set{Runs: append(s.Runs, runWith(12, 100))}, other, CompareOptions{})
	if !strings.Contains(strings.Join(c.Refused, "; "), "warm-up none") {
		t.Errorf("sets with and without a warm-up: refused %v", c.Refused)
	}
}
