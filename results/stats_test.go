package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSummarizeGolden(t *testing.T) {
	var s []float64
	for i := 1; i <= 100; i++ {
		s = append(s, float64(i))
	}
	got := Summarize(s)
	// montanaflynn/stats interpolates between the ranks around p·n.
	want := Summary{Count: 100, P50: 50.5, P90: 90.1, P99: 99.01, Max: 100}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.Count != want.Count || !near(got.P50, want.P50) || !near(got.P90, want.P90) || !near(got.P99, want.P99) || got.Max != want.Max {
		t.Errorf("Summarize(1..100) = %+v, want %+v", got, want)
	}
	if got := Summarize(nil); got != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v", got)
	}
}

func TestVerdict(t *testing.T) {
	doc := &[2]float64{10, 50}
	for _, tc := range []struct {
		p50   float64
		count int
		doc   *[2]float64
		want  string
	}{
		{5, 3, doc, Faster}, {10, 3, doc, Within}, {50, 3, doc, Within}, {50.1, 3, doc, Slower},
		{5, 3, nil, NA}, {5, 0, doc, NA},
	} {
		if got := Verdict(tc.p50, tc.count, tc.doc); got != tc.want {
			t.Errorf("Verdict(%v, %d, %v) = %s, want %s", tc.p50, tc.count, tc.doc, got, tc.want)
		}
	}
}

func TestMannWhitneyGolden(t *testing.T) {
	// Worked example: a = {1,2,3,4,5}, b = {6,7,8,9,10}: U = 0, n1=n2=5,
	// mean 12.5, σ² = 25·11/12 = 22.92, z = (12.5−0.5)/4.787 = 2.507,
	// p = 0.0122 (scipy.stats.mannwhitneyu, asymptotic, continuity).
	u, p := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if u != 0 || math.Abs(p-0.0122) > 0.0001 {
		t.Errorf("U=%v p=%v, want 0 and 0.0122", u, p)
	}
	// Ties get mid-ranks: a={1,2,2}, b={2,3}: ranks 1, 3, 3 | 3, 5 → R_a = 7, U = 1.
	if u, _ := MannWhitney([]float64{1, 2, 2}, []float64{2, 3}); u != 1 {
		t.Errorf("tied U = %v, want 1", u)
	}
	if _, p := MannWhitney([]float64{4, 4, 4}, []float64{4, 4}); p != 1 {
		t.Errorf("all tied: p = %v, want 1", p)
	}
	if _, p := MannWhitney(nil, []float64{1}); p != 1 {
		t.Errorf("empty side: p = %v, want 1", p)
	}
}

func sample(n int, scale float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * (5 + r.ExpFloat64())
	}
	return out
}

func runOf(samples []float64) *Run {
	s := Summarize(samples)
	st := Step{Step: "⑤", Name: "node selection", Summary: s, SamplesMS: samples}
	return &Run{Schema: Schema, Steps: []Step{st}, EndToEnd: Step{Step: "e2e", Name: "end to end", Summary: s, SamplesMS: samples}}
}

func TestCompareFlagsA20PercentShift(t *testing.T) {
	base := runOf(sample(300, 1, 1))
	cur := runOf(sample(300, 1.2, 2))
	ds := Compare(base, cur, 10)
	if len(ds) != 2 {
		t.Fatalf("%d deltas, want 2", len(ds))
	}
	for _, d := range ds {
		if !d.Regressed {
			t.Errorf("%s: a 20%% shift not flagged: %+v", d.Name, d)
		}
	}
	// The other way round is an improvement, never a regression.
	for _, d := range Compare(cur, base, 10) {
		if d.Regressed {
			t.Errorf("%s: an improvement flagged: %+v", d.Name, d)
		}
	}
}

func TestCompareNeverFlagsIdenticalInputs(t *testing.T) {
	for seed := range uint64(20) {
		s := sample(50+int(seed)*10, 1, seed)
		for _, d := range Compare(runOf(s), runOf(append([]float64(nil), s...)), 0) {
			if d.Regressed || d.P < 0.99 || d.P50Pct != 0 {
				t.Fatalf("seed %d: identical inputs: %+v", seed, d)
			}
		}
	}
}

func TestCompareNeedsSignificance(t *testing.T) {
	// Two samples of the same distribution: the p50 may move by chance
	// but the rank test must hold it back most of the time.
	flagged := 0
	for seed := range uint64(40) {
		for _, d := range Compare(runOf(sample(200, 1, seed)), runOf(sample(200, 1, seed+1000)), 1) {
			if d.Regressed {
				flagged++
			}
		}
	}
	if flagged > 8 { // 80 comparisons at α = 0.05 → about 4
		t.Errorf("%d of 80 same-distribution comparisons flagged", flagged)
	}
}
