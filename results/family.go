package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Family-wise control of a comparison's verdict.
//
// A comparison makes one Mann–Whitney test per row and statistic (34 rows
// with real nodes: 68 tests). Each at alpha, some row of two sets of one
// build is flagged far more often than alpha. The verdict (exit 1) holds
// its false-alarm rate at alpha over all tests together by the
// Westfall–Young step-down min-P procedure over permutations of runs
// (Westfall & Young 1993, algorithm 2.8):
//
//   - the unit that is permuted is the run, with every row it measured:
//     under "same build" the runs of the two sides are exchangeable, and a
//     run slow in every row (a fresh cluster, another moment on a shared
//     machine) stays slow in every row in each permutation, so the
//     correlation between rows is kept instead of assumed away;
//   - each test's statistic is its own exact p (the same MannWhitney the
//     row shows), so rows with ties, fewer runs or another n+m weigh alike;
//   - a test's adjusted p is the share of permutations whose smallest p
//     over this test and every test with a larger observed p is at most
//     its observed p, made monotone in the observed order.
//
// Why not Holm on the rows' exact tests: Holm assumes the worst (that the
// 68 tests are independent) and multiplies the smallest p by 68, and the
// exact test over 5 runs a side cannot go below 2/252: Holm needs 7 runs a
// side before it can flag anything among 68 tests. Rows of one run move
// together (the drift the issue describes moved 8 rows alike), and min-P
// counts the permutations where some row is that extreme as they come:
// its adjusted p is never below the row's own smallest p, 2/C(n+m, n), so
// the runs a side that let the test reach alpha (MinRuns) still suffice,
// and with strongly correlated rows it is close to the unadjusted test,
// while with independent rows it is as strict as Holm (Bonferroni's
// 1 − (1 − p)^m at most).
//
// Permutations are enumerated exhaustively up to exhaustiveLimit
// relabellings (C(n+m, n): 184 756 at 10 a side is past it); above, a
// fixed-seed sample of sampledPermutations plus the observed labelling, so
// a comparison is deterministic.
const (
	exhaustiveLimit     = 20000
	sampledPermutations = 9999
	permutationSeed     = 0x6b73746570 // "kstep"
)

// familyTest is one test of the family: one row's p50 or p99 over the runs
// of both sides that measured it.
type familyTest struct {
	runs   []int // each value's run, pooled: base 0..n-1, new n..n+m-1
	ranks2 []int // each value's doubled mid-rank among the row's values
	p      float64
	// tables[k][s]: the two-sided exact p of a doubled rank sum s of k
	// values labelled base; built on first use (exact rows only).
	tables  map[int][]float64
	tieTerm float64 // Σ(t³ − t) over tie groups (normal rows)
}

func newFamilyTest(runs []int, values []float64, baseRuns int) *familyTest {
	t := &familyTest{runs: runs, tables: map[int][]float64{}}
	var a, b []float64
	for i, r := range runs {
		if r < baseRuns {
			a = append(a, values[i])
		} else {
			b = append(b, values[i])
		}
	}
	// doubledMidRanks ranks a then b; keep each value's rank by position.
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return values[idx[i]] < values[idx[j]] })
	t.ranks2 = make([]int, len(values))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && values[idx[j]] == values[idx[i]] {
			j++
		}
		tt := float64(j - i)
		t.tieTerm += tt*tt*tt - tt
		for k := i; k < j; k++ {
			t.ranks2[idx[k]] = i + j + 1
		}
		i = j
	}
	_, t.p = MannWhitney(a, b)
	return t
}

// pOf is the test's two-sided p when the runs in base are labelled base.
func (t *familyTest) pOf(base []bool) float64 {
	k, sum := 0, 0
	for i, r := range t.runs {
		if base[r] {
			k++
			sum += t.ranks2[i]
		}
	}
	n := len(t.runs)
	if k == 0 || k == n {
		return 1
	}
	if n > ExactMaxN {
		return normalP(k, n, sum, t.tieTerm)
	}
	tab, ok := t.tables[k]
	if !ok {
		tab = exactPTable(t.ranks2, k)
		t.tables[k] = tab
	}
	return tab[sum]
}

// exactPTable is, for every doubled rank sum of k of ranks2, the
// probability of a sum at least as far from the mean: MannWhitneyExact's p
// for each outcome at once.
func exactPTable(ranks2 []int, k int) []float64 {
	counts := subsetSums(ranks2, k)
	center := k * (len(ranks2) + 1)
	byDist := make([]float64, len(counts)+center+1)
	var total float64
	for s, c := range counts {
		total += c
		byDist[abs(s-center)] += c
	}
	// From the farthest in: byDist[d] becomes the count at distance ≥ d.
	for d := len(byDist) - 2; d >= 0; d-- {
		byDist[d] += byDist[d+1]
	}
	out := make([]float64, len(counts))
	for s := range counts {
		out[s] = math.Min(1, byDist[abs(s-center)]/total)
	}
	return out
}

// normalP is MannWhitneyNormal's p from a doubled rank sum of k of n
// values.
func normalP(k, n, sum2 int, tieTerm float64) float64 {
	n1, n2, nn := float64(k), float64(n-k), float64(n)
	u := float64(sum2)/2 - n1*(n1+1)/2
	variance := n1 * n2 / 12 * ((nn + 1) - tieTerm/(nn*(nn-1)))
	if variance <= 0 {
		return 1
	}
	diff := math.Max(0, math.Abs(u-n1*n2/2)-0.5)
	return math.Min(1, math.Erfc(diff/math.Sqrt(variance)/math.Sqrt2))
}

// Family is how a comparison's tests were adjusted together.
type Family struct {
	// Tests is the family's size: every compared row's p50 and p99.
	Tests int `json:"tests"`
	// Permutations is the relabellings of runs the adjusted p's count
	// over; Exhaustive when they are all C(n+m, n) of them, else a
	// fixed-seed sample plus the observed one.
	Permutations int  `json:"permutations"`
	Exhaustive   bool `json:"exhaustive"`
}

// Method names the family-wise procedure in one line.
func (f Family) Method() string {
	how := fmt.Sprintf("all %d relabellings of the runs", f.Permutations)
	if !f.Exhaustive {
		how = fmt.Sprintf("%d relabellings of the runs (fixed seed)", f.Permutations)
	}
	return fmt.Sprintf("adjusted p: Westfall–Young step-down min-P over %d tests (p50 and p99 of each row), %s", f.Tests, how)
}

// adjust sets each test's family-wise adjusted p (Westfall–Young step-down
// min-P over relabellings of the n base and m new runs) and returns them
// in the tests' order.
func adjust(tests []*familyTest, n, m int) ([]float64, Family) {
	fam := Family{Tests: len(tests)}
	adj := make([]float64, len(tests))
	if len(tests) == 0 || n == 0 || m == 0 {
		for i := range adj {
			adj[i] = 1
		}
		return adj, fam
	}
	order := make([]int, len(tests))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return tests[order[i]].p < tests[order[j]].p })
	counts := make([]int, len(tests))
	pb := make([]float64, len(tests))
	visit := func(base []bool) {
		for i, t := range tests {
			pb[i] = t.pOf(base)
		}
		q := 1.0
		for j := len(order) - 1; j >= 0; j-- {
			t := order[j]
			q = math.Min(q, pb[t])
			// A relative tolerance: the observed labelling's own p,
			// computed the same way, must count.
			if q <= tests[t].p*(1+1e-9) {
				counts[j]++
			}
		}
	}
	total := n + m
	base := make([]bool, total)
	if binomial(total, n) <= exhaustiveLimit {
		fam.Exhaustive = true
		// Every n-subset of the pooled runs, in lexicographic order.
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		for {
			clear(base)
			for _, i := range idx {
				base[i] = true
			}
			visit(base)
			fam.Permutations++
			i := n - 1
			for i >= 0 && idx[i] == total-n+i {
				i--
			}
			if i < 0 {
				break
			}
			idx[i]++
			for j := i + 1; j < n; j++ {
				idx[j] = idx[j-1] + 1
			}
		}
	} else {
		r := rand.New(rand.NewPCG(permutationSeed, uint64(n)<<32|uint64(m)))
		perm := make([]int, total)
		for i := range perm {
			perm[i] = i
		}
		// The observed labelling first, then the sample.
		for i := range base {
			base[i] = i < n
		}
		visit(base)
		for range sampledPermutations {
			r.Shuffle(total, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			clear(base)
			for _, i := range perm[:n] {
				base[i] = true
			}
			visit(base)
		}
		fam.Permutations = sampledPermutations + 1
	}
	prev := 0.0
	for j, t := range order {
		a := math.Max(prev, float64(counts[j])/float64(fam.Permutations))
		adj[t], prev = a, a
	}
	return adj, fam
}

// MinRunsForFamily is the fewest runs a side at which Holm's correction
// over tests exact tests could flag anything (2/C(2k, k) < alpha/tests):
// what min-P is spared. Reported beside the method.
func MinRunsForFamily(alpha float64, tests int) int {
	if tests < 1 {
		tests = 1
	}
	return MinRuns(alpha / float64(tests))
}
