package results

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Change points over a history: E-divisive means (Matteson & James 2014),
// as Apache Otava (Hunter) runs it over CI benchmark series, made
// deterministic by a fixed seed.
//
// Guarantees, stated first:
//   - the same series gives the same change points (the permutations are
//     drawn from a seed that depends only on ChangePointOptions.Seed and
//     the segment's place in the series);
//   - a change point is reported only when the permutation test of its
//     segment says p ≤ Alpha: on a series with no change, at most about
//     Alpha of series get one;
//   - no segment is shorter than MinSize points, so a lone outlier is not
//     a change, and a change in the last MinSize−1 points is not seen yet.
//
// The method: for a segment, each split τ scores the energy distance
// between the points before and after it, Q(τ) = (n·m/(n+m)) ·
// (2/(n·m)·Σ|x−y| − Σ|x−x'|/C(n,2) − Σ|y−y'|/C(m,2)); the best split's
// significance is the share of Permutations shuffles of the segment whose
// best Q is at least as large. Of all segments, the one whose best split
// scores highest is tested; a significant split divides it and the search
// goes on, the first split that is not significant ends it (binary
// segmentation, E-divisive's greedy order).

// Defaults of ChangePointOptions.
const (
	DefaultChangePointAlpha        = 0.01
	DefaultChangePointPermutations = 499
	DefaultChangePointMinSize      = 3
	DefaultChangePointSeed         = 0x0a7a // Otava
)

// ChangePointOptions tune ChangePoints.
type ChangePointOptions struct {
	Alpha        float64 // default DefaultChangePointAlpha
	Permutations int     // default DefaultChangePointPermutations
	MinSize      int     // default DefaultChangePointMinSize
	Seed         uint64  // default DefaultChangePointSeed
}

func (o ChangePointOptions) withDefaults() ChangePointOptions {
	if o.Alpha == 0 {
		o.Alpha = DefaultChangePointAlpha
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultChangePointPermutations
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultChangePointMinSize
	}
	if o.Seed == 0 {
		o.Seed = DefaultChangePointSeed
	}
	return o
}

// ChangePoint is a lasting shift in a series.
type ChangePoint struct {
	// Index is the first point after the change.
	Index int `json:"index"`
	// Before and After are the means of the segments either side (between
	// the neighbouring change points), SizePct the shift in percent of
	// Before.
	Before  float64 `json:"before"`
	After   float64 `json:"after"`
	SizePct float64 `json:"size_pct"`
	// P is the permutation test's p for the split.
	P float64 `json:"p"`
}

// ChangePoints finds the change points of x, in order of Index.
func ChangePoints(x []float64, o ChangePointOptions) []ChangePoint {
	o = o.withDefaults()
	type seg struct{ a, b int }
	type cand struct {
		tau int
		q   float64
	}
	var cuts []int
	pvals := map[int]float64{}
	segs := []seg{{0, len(x)}}
	best := map[seg]cand{}
	for {
		var pick seg
		var bc cand
		found := false
		for _, s := range segs {
			c, ok := best[s]
			if !ok {
				tau, q := bestSplit(x[s.a:s.b], o.MinSize)
				c = cand{tau, q}
				best[s] = c
			}
			if c.tau > 0 && (!found || c.q > bc.q) {
				pick, bc, found = s, c, true
			}
		}
		if !found {
			break
		}
		p := splitP(x[pick.a:pick.b], bc.q, o, uint64(pick.a)<<32|uint64(pick.b))
		if p > o.Alpha {
			break
		}
		cut := pick.a + bc.tau
		cuts = append(cuts, cut)
		pvals[cut] = p
		var next []seg
		for _, s := range segs {
			if s == pick {
				next = append(next, seg{s.a, cut}, seg{cut, s.b})
				continue
			}
			next = append(next, s)
		}
		segs = next
	}
	sort.Ints(cuts)
	out := make([]ChangePoint, len(cuts))
	for i, c := range cuts {
		lo, hi := 0, len(x)
		if i > 0 {
			lo = cuts[i-1]
		}
		if i+1 < len(cuts) {
			hi = cuts[i+1]
		}
		before, after := mean(x[lo:c]), mean(x[c:hi])
		out[i] = ChangePoint{Index: c, Before: before, After: after, SizePct: pctOf(after-before, before), P: pvals[c]}
	}
	return out
}

// bestSplit is the split of x (its first index after the split) with the
// largest energy statistic Q, segments at least minSize long; tau 0 when
// x is too short to split.
func bestSplit(x []float64, minSize int) (tau int, q float64) {
	n := len(x)
	if n < 2*minSize {
		return 0, 0
	}
	// ps[i][j]: Σ |x[a] − x[b]| over a < i, b < j.
	ps := make([][]float64, n+1)
	for i := range ps {
		ps[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			d := x[i-1] - x[j-1]
			ps[i][j] = ps[i-1][j] + ps[i][j-1] - ps[i-1][j-1] + math.Abs(d)
		}
	}
	within := func(a, b int) float64 { return (ps[b][b] - ps[a][b] - ps[b][a] + ps[a][a]) / 2 }
	q = math.Inf(-1)
	for t := minSize; t <= n-minSize; t++ {
		l, r := float64(t), float64(n-t)
		cross := ps[t][n] - ps[t][t]
		e := 2*cross/(l*r) - within(0, t)/(l*(l-1)/2) - within(t, n)/(r*(r-1)/2)
		if s := l * r / (l + r) * e; s > q {
			tau, q = t, s
		}
	}
	return tau, q
}

// splitP is the permutation p of a segment's best Q: the share of
// shuffles (and the segment itself) whose best Q is at least q.
func splitP(x []float64, q float64, o ChangePointOptions, stream uint64) float64 {
	r := rand.New(rand.NewPCG(o.Seed, stream))
	y := append([]float64(nil), x...)
	over := 1
	for range o.Permutations {
		r.Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
		if _, qp := bestSplit(y, o.MinSize); qp >= q*(1-1e-12) {
			over++
		}
	}
	return float64(over) / float64(o.Permutations+1)
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
