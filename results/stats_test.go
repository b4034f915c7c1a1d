package results

import (
	"math"
	"math/bits"
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

func TestMannWhitneyNormalGolden(t *testing.T) {
	// Worked example: a = {1,2,3,4,5}, b = {6,7,8,9,10}: U = 0, n1=n2=5,
	// mean 12.5, σ² = 25·11/12 = 22.92, z = (12.5−0.5)/4.787 = 2.507,
	// p = 0.0122 (scipy.stats.mannwhitneyu, asymptotic, continuity).
	u, p := MannWhitneyNormal([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if u != 0 || math.Abs(p-0.0122) > 0.0001 {
		t.Errorf("U=%v p=%v, want 0 and 0.0122", u, p)
	}
	// Ties get mid-ranks: a={1,2,2}, b={2,3}: ranks 1, 3, 3 | 3, 5 → R_a = 7, U = 1.
	if u, _ := MannWhitneyNormal([]float64{1, 2, 2}, []float64{2, 3}); u != 1 {
		t.Errorf("tied U = %v, want 1", u)
	}
	if _, p := MannWhitneyNormal([]float64{4, 4, 4}, []float64{4, 4}); p != 1 {
		t.Errorf("all tied: p = %v, want 1", p)
	}
	if _, p := MannWhitneyNormal(nil, []float64{1}); p != 1 {
		t.Errorf("empty side: p = %v, want 1", p)
	}
}

// The exact test against the table of U and against permutation p-values
// worked out by hand (and by brute-force enumeration of every split in
// exact fractions) for tied data.
func TestMannWhitneyExactGolden(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		u, p float64
		why  string
	}{
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, "n=m=5, complete separation: 2/C(10,5)"},
		{[]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, "the same, other way round"},
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, "n=m=3, complete separation: 2/C(6,3)"},
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70, "n=m=4, complete separation: 2/C(8,4)"},
		{[]float64{1, 2, 3, 4, 7}, []float64{5, 6, 8, 9, 10}, 2, 8.0 / 252, "n=m=5, U=2: P(U≤2) = 4/252, doubled"},
		{[]float64{1, 2, 3, 4, 5}, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, 10, 174.0 / 252, "n=m=5, U=10: 2·P(U≤10) = 2·87/252"},
		// Ties: the permutation distribution of the mid-rank sum.
		{[]float64{1, 2, 2}, []float64{2, 3}, 1, 3.0 / 5, "ranks 1,3,3 | 3,5: 6 of the 10 splits are as far from the mean"},
		{[]float64{1, 1, 2, 3, 3}, []float64{3, 4, 4, 5, 6}, 1, 1.0 / 42, "tie across the sides"},
		{[]float64{10, 10, 10, 12}, []float64{10, 12, 12, 14, 14}, 3.5, 1.0 / 7, "heavy ties, unequal sides"},
		{[]float64{4, 4, 4}, []float64{4, 4}, 3, 1, "all tied"},
	} {
		u, p := MannWhitneyExact(tc.a, tc.b)
		if u != tc.u || math.Abs(p-tc.p) > 1e-12 {
			t.Errorf("%s: U=%v p=%.6g, want U=%v p=%.6g", tc.why, u, p, tc.u, tc.p)
		}
		// Swapping the sides mirrors U and keeps p.
		u2, p2 := MannWhitneyExact(tc.b, tc.a)
		if u2 != float64(len(tc.a)*len(tc.b))-tc.u || math.Abs(p2-tc.p) > 1e-12 {
			t.Errorf("%s, swapped: U=%v p=%v", tc.why, u2, p2)
		}
	}
	if _, p := MannWhitneyExact(nil, []float64{1}); p != 1 {
		t.Errorf("empty side: p = %v, want 1", p)
	}
}

// The dynamic programme against brute force: every split of the pooled
// values enumerated, on small tied samples.
func TestMannWhitneyExactMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 300 {
		n, m := 1+r.IntN(6), 1+r.IntN(6)
		a, b := make([]float64, n), make([]float64, m)
		for i := range a {
			a[i] = float64(r.IntN(5)) // few levels: many ties
		}
		for i := range b {
			b[i] = float64(r.IntN(5) + r.IntN(2))
		}
		_, p := MannWhitneyExact(a, b)
		if want := bruteForceP(a, b); math.Abs(p-want) > 1e-12 {
			t.Fatalf("trial %d: a=%v b=%v: p=%v, enumeration says %v", trial, a, b, p, want)
		}
	}
}

// bruteForceP is the two-sided permutation p of a's mid-rank sum,
// enumerating every choice of len(a) of the pooled values.
func bruteForceP(a, b []float64) float64 {
	all := append(append([]float64(nil), a...), b...)
	rank := func(v float64) float64 {
		var below, equal float64
		for _, w := range all {
			if w < v {
				below++
			} else if w == v {
				equal++
			}
		}
		return below + (equal+1)/2
	}
	n, N := len(a), len(all)
	var obs float64
	for _, v := range a {
		obs += rank(v)
	}
	mean := float64(n*(N+1)) / 2
	var tail, total int
	for mask := 0; mask < 1<<N; mask++ {
		if bits.OnesCount(uint(mask)) != n {
			continue
		}
		var s float64
		for i := range N {
			if mask&(1<<i) != 0 {
				s += rank(all[i])
			}
		}
		total++
		if math.Abs(s-mean) >= math.Abs(obs-mean)-1e-9 {
			tail++
		}
	}
	return float64(tail) / float64(total)
}

// Past ExactMaxN the test is the normal approximation; at its edge the two
// agree closely, as they should.
func TestMannWhitneySwitchesToNormal(t *testing.T) {
	a, b := sample(21, 1, 11), sample(20, 1.3, 12)
	if u, p := MannWhitney(a, b); true {
		un, pn := MannWhitneyNormal(a, b)
		if u != un || p != pn {
			t.Errorf("n+m = 41: MannWhitney = (%v, %v), want the normal approximation (%v, %v)", u, p, un, pn)
		}
	}
	a, b = a[:20], b[:20]
	_, pe := MannWhitney(a, b)
	_, pn := MannWhitneyNormal(a, b)
	if pe > 0.5 || math.Abs(pe-pn) > 0.1*pn+0.002 {
		t.Errorf("n=m=20: exact p=%v, normal p=%v: too far apart", pe, pn)
	}
}

func TestMinRuns(t *testing.T) {
	if p := MinP(3, 3); math.Abs(p-0.1) > 1e-12 {
		t.Errorf("MinP(3,3) = %v, want 0.1", p)
	}
	if p := MinP(5, 5); math.Abs(p-2.0/252) > 1e-12 {
		t.Errorf("MinP(5,5) = %v, want 2/252", p)
	}
	if p := MinP(1, 1); p != 1 {
		t.Errorf("MinP(1,1) = %v, want 1 (2/C(2,1) = 1)", p)
	}
	// 2/C(8,4) = 0.029 < 0.05 ≤ 2/C(6,3); 2/C(10,5) = 0.0079 < 0.01 ≤ 2/C(8,4).
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.2: 3, 0.001: 7} {
		if got := MinRuns(alpha); got != want {
			t.Errorf("MinRuns(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestHodgesLehmannGolden(t *testing.T) {
	// base 1..5, cur 6..10: the 25 differences are 1 (once), 2 (twice), ...
	// 5 (5 times), ... 9 (once); median 5. At α = 0.05, k−1 = 2 (2·P(U≤2)
	// = 8/252 < 0.05 ≤ 2·P(U≤3) = 14/252): the 3rd and 23rd differences,
	// 2 and 8, covering 1 − 8/252 = 96.8 %.
	shift, lo, hi, level, ok := HodgesLehmann([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.05)
	if !ok || shift != 5 || lo != 2 || hi != 8 || math.Abs(level-100*(1-8.0/252)) > 1e-9 {
		t.Errorf("HL(1..5, 6..10) = %v [%v, %v] at %v%%, want 5 [2, 8] at 96.83%%", shift, lo, hi, level)
	}
	// 3 a side cannot reach 95 %: the widest interval, covering 1 − 2/20.
	shift, lo, hi, level, _ = HodgesLehmann([]float64{10, 20, 30}, []float64{12, 25, 31}, 0.05)
	if shift != 2 || lo != -18 || hi != 21 || math.Abs(level-90) > 1e-9 {
		t.Errorf("HL 3v3 = %v [%v, %v] at %v%%, want 2 [-18, 21] at 90%%", shift, lo, hi, level)
	}
	if _, _, _, _, ok := HodgesLehmann(nil, []float64{1}, 0.05); ok {
		t.Error("HL with an empty side is ok")
	}
}

// The interval covers the true shift as often as it says: 5 runs a side of
// a skewed distribution shifted by 3, 4,000 times.
func TestHodgesLehmannCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const trials, shift = 4000, 3.0
	covered, excluded0 := 0, 0
	var level float64
	for range trials {
		a, b := make([]float64, 5), make([]float64, 5)
		for i := range a {
			a[i] = 10 + 4*r.ExpFloat64()
			b[i] = 10 + shift + 4*r.ExpFloat64()
		}
		_, lo, hi, l, _ := HodgesLehmann(a, b, 0.05)
		level = l
		if lo <= shift && shift <= hi {
			covered++
		}
		if lo > 0 {
			excluded0++
		}
		// The interval excludes 0 exactly when the exact test rejects.
		if _, p := MannWhitneyExact(a, b); (lo > 0 || hi < 0) != (p < 0.05) {
			t.Fatalf("a=%v b=%v: interval [%v, %v] but p=%v", a, b, lo, hi, p)
		}
	}
	got := 100 * float64(covered) / trials
	// Binomial sd at 96.8 % over 4,000 trials is 0.28 points.
	if math.Abs(got-level) > 1.2 {
		t.Errorf("coverage %.1f%%, the interval claims %.1f%%", got, level)
	}
	t.Logf("coverage %.1f%% (claimed %.1f%%); 0 excluded in %.1f%% of trials", got, level, 100*float64(excluded0)/trials)
}

func sample(n int, scale float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * (5 + r.ExpFloat64())
	}
	return out
}
