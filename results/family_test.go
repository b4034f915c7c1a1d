package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// famRun is a run of rows synthetic steps: each row's p50 is its scale
// times a run factor shared by every row (what a fresh cluster, another
// moment on the machine, does to all of a run) and one of its own, each
// with a CV of about noise/√2; its p99 is 3× the p50 with a further
// factor of its own. shift multiplies one row's values.
func famRun(r *rand.Rand, rows int, noise float64, shift map[int]float64) *Run {
	run := &Run{Schema: Schema, Provider: "process", Profile: "small", Version: "v1", Valid: true,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 1, APIServers: 1, HollowNodes: 20}}}
	common := 1 + noise/math.Sqrt2*r.NormFloat64()
	for i := range rows {
		f := common * (1 + noise/math.Sqrt2*r.NormFloat64())
		if m, ok := shift[i]; ok {
			f *= m
		}
		scale := float64(2 + i)
		st := Step{Step: fmt.Sprintf("s%02d", i), Name: "row", Nodes: NodesAll,
			Summary: Summary{Count: 100, P50: scale * f, P99: 3 * scale * f * (1 + noise*r.NormFloat64())}}
		run.Steps = append(run.Steps, st)
	}
	return run
}

func famSet(r *rand.Rand, n, rows int, noise float64, shift map[int]float64) *Set {
	s := &Set{Dir: "set"}
	for i := range n {
		s.Runs = append(s.Runs, famRun(r, rows, noise, shift))
		s.Dirs = append(s.Dirs, RunDirName(i+1))
	}
	return s
}

// Each test's p in the family is the row's own Mann–Whitney p, and the
// observed labelling's adjusted p is never below it.
func TestFamilyAdjustedPs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := CompareSets(famSet(r, 5, 6, 0.2, nil), famSet(r, 6, 6, 0.2, map[int]float64{2: 2}), CompareOptions{})
	if !c.Family.Exhaustive || c.Family.Permutations != 462 || c.Family.Tests != 12 {
		t.Fatalf("family %+v, want all C(11, 5) = 462 relabellings of 12 tests", c.Family)
	}
	for _, d := range c.Deltas {
		for _, e := range []Effect{d.P50, d.P99} {
			if e.PAdj < e.P-1e-12 || e.PAdj > 1 {
				t.Errorf("%s: p %v, adjusted %v", d.Key, e.P, e.PAdj)
			}
		}
	}
	d := c.Deltas[2]
	if !d.Regressed || d.P50.PAdj >= 0.05 {
		t.Errorf("a doubled row: %+v", d)
	}
	// The exact tables agree with MannWhitneyExact on tied data too.
	vals := []float64{1, 2, 2, 3, 5, 5, 5, 8, 9}
	runs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	ft := newFamilyTest(runs, vals, 4)
	if _, p := MannWhitneyExact(vals[:4], vals[4:]); math.Abs(ft.p-p) > 1e-12 || math.Abs(ft.pOf([]bool{true, true, true, true, false, false, false, false, false})-p) > 1e-12 {
		t.Errorf("tied: family p %v, exact %v", ft.p, p)
	}
	// A sample of relabellings beyond exhaustiveLimit, deterministic.
	a, b := famSet(rand.New(rand.NewPCG(3, 4)), 10, 3, 0.2, nil), famSet(rand.New(rand.NewPCG(5, 6)), 10, 3, 0.2, nil)
	c1, c2 := CompareSets(a, b, CompareOptions{}), CompareSets(a, b, CompareOptions{})
	if c1.Family.Exhaustive || c1.Family.Permutations != sampledPermutations+1 || c1.Deltas[0].P50.PAdj != c2.Deltas[0].P50.PAdj {
		t.Errorf("10 v 10: %+v, adjusted p %v then %v", c1.Family, c1.Deltas[0].P50.PAdj, c2.Deltas[0].P50.PAdj)
	}
}

// The verdict's family-wise false-alarm rate: over many pairs of sets of
// one distribution, with 16 rows (32 tests), the share of pairs in which
// any row is flagged (either way, the threshold out of the way) stays at
// alpha within binomial error, where flagging on the unadjusted p's does
// so in most pairs.
func TestFamilyWiseFalseAlarmRate(t *testing.T) {
	const pairs, rows, runs = 400, 16, 6
	r := rand.New(rand.NewPCG(48, 2))
	o := CompareOptions{Threshold: 1e-9, MinShiftMS: -1}
	flagged, raw := 0, 0
	for range pairs {
		c := CompareSets(famSet(r, runs, rows, 0.2, nil), famSet(r, runs, rows, 0.2, nil), o)
		if !c.Concluded {
			t.Fatalf("refused: %v", c.Refused)
		}
		if len(c.Regressions())+len(c.Improvements()) > 0 {
			flagged++
		}
		for _, d := range c.Deltas {
			if d.P50.P < c.Alpha || d.P99.P < c.Alpha {
				raw++
				break
			}
		}
	}
	rate := float64(flagged) / pairs
	// alpha + 3 binomial standard deviations.
	limit := 0.05 + 3*math.Sqrt(0.05*0.95/pairs)
	if rate > limit {
		t.Errorf("family-wise false alarms in %d of %d same-distribution pairs (%.1f %%), over %.1f %%", flagged, pairs, 100*rate, 100*limit)
	}
	if raw < pairs/3 {
		t.Errorf("unadjusted, only %d of %d pairs flagged: the simulation has too little noise to test anything", raw, pairs)
	}
	t.Logf("%d rows × p50, p99 at %d runs a side: %d of %d same-distribution pairs flagged (%.1f %%, limit %.1f %%); unadjusted %d (%.1f %%)",
		rows, runs, flagged, pairs, 100*rate, 100*limit, raw, 100*float64(raw)/pairs)
}

// A large shift on one row is still flagged with enough runs: ×1.8 on one
// of 16 rows under 20 % run-to-run noise, 8 runs a side, and no other row.
func TestFamilyWiseDetectsAShift(t *testing.T) {
	const pairs, rows, runs = 60, 16, 8
	r := rand.New(rand.NewPCG(48, 5))
	found, others := 0, 0
	for range pairs {
		c := CompareSets(famSet(r, runs, rows, 0.2, nil), famSet(r, runs, rows, 0.2, map[int]float64{7: 1.8}), CompareOptions{})
		for i, d := range c.Deltas {
			switch {
			case i == 7 && d.Regressed:
				found++
			case i != 7 && (d.Regressed || d.Improved):
				others++
			}
		}
	}
	if found < pairs*8/10 || others > pairs/10 {
		t.Errorf("×1.8 on one row of %d at %d runs a side: flagged in %d of %d pairs, other rows %d times", rows, runs, found, pairs, others)
	}
	t.Logf("×1.8 on one of %d rows, %d runs a side: flagged in %d of %d pairs; another row flagged %d times", rows, runs, found, pairs, others)
}

// What Holm would need: with 5 runs a side the smallest exact p is 2/252,
// over 68 tests Holm's first step asks for p < 0.05/68.
func TestMinRunsForFamily(t *testing.T) {
	if got := MinRunsForFamily(0.05, 68); got != 7 {
		t.Errorf("68 tests at 0.05: %d runs a side, want 7 (2/C(14,7) = 5.8e-4 < 7.4e-4 ≤ 2/C(12,6) = 2.2e-3)", got)
	}
	if got := MinRunsForFamily(0.05, 1); got != MinRuns(0.05) {
		t.Errorf("one test: %d", got)
	}
}
