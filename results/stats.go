package results

import (
	"math"
	"sort"

	"github.com/montanaflynn/stats"
)

// Summarize returns the distribution of samples (milliseconds).
func Summarize(samples []float64) Summary {
	s := Summary{Count: len(samples)}
	if len(samples) == 0 {
		return s
	}
	d := stats.Float64Data(samples)
	s.P50, _ = d.Percentile(50)
	s.P90, _ = d.Percentile(90)
	s.P99, _ = d.Percentile(99)
	s.Max, _ = d.Max()
	return s
}

// Verdicts.
const (
	Faster = "faster"
	Within = "within"
	Slower = "slower"
	NA     = "n/a"
)

// Verdict places a p50 against a documented range.
func Verdict(p50 float64, count int, documented *[2]float64) string {
	switch {
	case documented == nil || count == 0:
		return NA
	case p50 < documented[0]:
		return Faster
	case p50 > documented[1]:
		return Slower
	}
	return Within
}

// ExactMaxN is the pooled sample size (n+m) up to which MannWhitney
// enumerates the exact distribution of U; above it the normal approximation
// is within a few percent of the exact p and enumeration stops being cheap.
const ExactMaxN = 40

// MannWhitney is the two-sided Mann–Whitney U test of a against b: exact
// (MannWhitneyExact) for n+m ≤ ExactMaxN, the normal approximation
// (MannWhitneyNormal) above. It returns U of a (pairs where a's value is
// the larger, ties counting one half) and the p-value.
func MannWhitney(a, b []float64) (u, p float64) {
	if len(a)+len(b) <= ExactMaxN {
		return MannWhitneyExact(a, b)
	}
	return MannWhitneyNormal(a, b)
}

// MannWhitneyExact is the two-sided Mann–Whitney U test by enumeration: the
// permutation distribution of a's rank sum over every way of choosing len(a)
// of the pooled values. Ties get mid-ranks and the distribution is that of
// the mid-rank sum for these tie groups (the exact conditional test), so
// tied data need no correction; without ties it is the classic table of U.
// Two-sided p is the probability of a rank sum at least as far from its mean
// as the one observed (the mid-rank distribution need not be symmetric, so
// doubling one tail could exceed it). p is 1 when either side is empty.
// The counts are float64, exact while C(n+m, n) < 2^53 (n+m ≤ 56), so
// callers past ExactMaxN should use MannWhitney.
func MannWhitneyExact(a, b []float64) (u, p float64) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return 0, 1
	}
	ranks2, obs := doubledMidRanks(a, b)
	// Doubled mid-ranks are integers, so the rank sums index an array and
	// "as far from the mean" compares integers, free of rounding.
	counts := subsetSums(ranks2, n)
	center := n * (n + m + 1) // twice the mean rank sum
	dist := abs(obs - center)
	var tail, total float64
	for s, c := range counts {
		if c == 0 {
			continue
		}
		total += c
		if abs(s-center) >= dist {
			tail += c
		}
	}
	u = float64(obs)/2 - float64(n*(n+1))/2
	return u, math.Min(1, tail/total)
}

// doubledMidRanks ranks the pooled a and b (mid-ranks for ties) and returns
// every value's rank times two and the sum of a's.
func doubledMidRanks(a, b []float64) (ranks2 []int, sumA int) {
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	ranks2 = make([]int, len(all))
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		r2 := i + j + 1 // twice the mid-rank of ranks i+1..j
		for k := i; k < j; k++ {
			ranks2[k] = r2
			if all[k].fromA {
				sumA += r2
			}
		}
		i = j
	}
	return ranks2, sumA
}

// subsetSums counts, for every sum s, the subsets of k of the weights that
// add up to s (the dynamic programme over weights, k descending so each
// weight is used once).
func subsetSums(weights []int, k int) []float64 {
	maxSum := 0
	for _, w := range weights {
		maxSum += w
	}
	f := make([][]float64, k+1)
	for i := range f {
		f[i] = make([]float64, maxSum+1)
	}
	f[0][0] = 1
	seen := 0
	for _, w := range weights {
		seen += w
		for j := min(k, len(weights)); j >= 1; j-- {
			row, prev := f[j], f[j-1]
			for s := seen; s >= w; s-- {
				row[s] += prev[s-w]
			}
		}
	}
	return f[k]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// MinP is the smallest two-sided p-value the exact Mann–Whitney test can
// give with n and m untied values: complete separation, 2/C(n+m, n). A
// comparison whose MinP is not below α cannot find anything, whatever the
// data.
func MinP(n, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	return math.Min(1, 2/binomial(n+m, n))
}

// MinRuns is the fewest runs a side (as many on each) for which the exact
// two-sided test can reach p < alpha: 4 at α = 0.05 (2/C(8,4) = 0.029; 3 a
// side cannot go below 2/C(6,3) = 0.1).
func MinRuns(alpha float64) int {
	k := 1
	for MinP(k, k) >= alpha && k < 1000 {
		k++
	}
	return k
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// HodgesLehmann is the Hodges–Lehmann estimate of the shift from base to
// cur: the median of every difference cur[j] − base[i]. Its interval is
// the distribution-free one that inverts the Mann–Whitney test (Moses;
// Hollander & Wolfe, ch. 4): the k-th smallest and k-th largest of the
// n·m differences, k−1 the largest U whose two-sided exact p stays below
// alpha. So the interval excludes 0 exactly when the (untied) test rejects
// at alpha, and level is its true coverage, in percent: at least
// 100·(1−alpha) when the runs suffice, less (the widest interval, from the
// smallest difference to the largest) when MinP(n, m) ≥ alpha. A bootstrap
// over 5 runs a side would be narrower than it should be, as 5 values
// resample into few distinct sets. Past ExactMaxN, k comes from the normal
// approximation of U. ok is false when either side is empty.
func HodgesLehmann(base, cur []float64, alpha float64) (shift, lo, hi, level float64, ok bool) {
	n, m := len(base), len(cur)
	if n == 0 || m == 0 {
		return 0, 0, 0, 0, false
	}
	d := make([]float64, 0, n*m)
	for _, b := range base {
		for _, c := range cur {
			d = append(d, c-b)
		}
	}
	sort.Float64s(d)
	shift = median(d)
	nm := n * m
	var k int // 1-based order statistic of the lower bound
	var tail float64
	if n+m <= ExactMaxN {
		// P(U ≤ u) for untied data: the rank sums of n of 1..n+m.
		ranks := make([]int, n+m)
		for i := range ranks {
			ranks[i] = i + 1
		}
		counts := subsetSums(ranks, n)
		total := binomial(n+m, n)
		off := n * (n + 1) / 2
		k, tail = 1, counts[off]/total
		var cdf float64
		for u := 0; u < nm/2; u++ {
			cdf += counts[off+u] / total
			if 2*cdf >= alpha {
				break
			}
			k, tail = u+1, cdf
		}
	} else {
		mean, sd := float64(nm)/2, math.Sqrt(float64(nm*(n+m+1))/12)
		z := math.Sqrt2 * math.Erfinv(1-alpha)
		k = max(1, int(math.Floor(mean-z*sd)))
		tail = 0.5 * math.Erfc((mean-float64(k-1)-0.5)/sd/math.Sqrt2)
	}
	return shift, d[k-1], d[nm-k], 100 * math.Max(0, 1-2*tail), true
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// MannWhitneyNormal is the two-sided Mann–Whitney U test of a against b,
// with mid-ranks for ties, a tie-corrected variance and the normal
// approximation with continuity correction: for large samples (the exact
// test's enumeration grows as C(n+m, n)). It returns U (of a) and the
// p-value; p is 1 when either side is empty or every value ties.
func MannWhitneyNormal(a, b []float64) (u, p float64) {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	// The pooled ranks, sorted: a run of equal (doubled) ranks is a tie.
	ranks2, sumA := doubledMidRanks(a, b)
	n := n1 + n2
	rankA := float64(sumA) / 2
	var tieTerm float64
	for i := 0; i < len(ranks2); {
		j := i
		for j < len(ranks2) && ranks2[j] == ranks2[i] {
			j++
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	u = rankA - n1*(n1+1)/2
	mean := n1 * n2 / 2
	variance := n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	diff := math.Abs(u-mean) - 0.5
	if diff < 0 {
		diff = 0
	}
	z := diff / math.Sqrt(variance)
	p = math.Erfc(z / math.Sqrt2)
	if p > 1 {
		p = 1
	}
	return u, p
}
