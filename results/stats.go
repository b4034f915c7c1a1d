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

// MannWhitney is the two-sided Mann–Whitney U test of a against b, with
// mid-ranks for ties, a tie-corrected variance and the normal approximation
// with continuity correction. It returns U (of a) and the p-value; p is 1
// when either side is empty or every value ties.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
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
	n := n1 + n2
	var rankA, tieTerm float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += mid
			}
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
