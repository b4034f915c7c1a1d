package results

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
)

// CalibrationSchema is the version of a calibration file.
const CalibrationSchema = "kstep.dev/calibration/v1"

// Calibration's defaults and bounds.
const (
	// MinCalibrationRuns is the fewest runs of one build Calibrate reads:
	// two groups of 5 must be drawable without reusing a run.
	MinCalibrationRuns = 10
	// DefaultCalibrationRunsPerSide is the runs a side the minimum
	// detectable effects are for: what kstep bench --repeat 5 gives.
	DefaultCalibrationRunsPerSide = 5
	// CalibrationPower is the share of trials in which a shift must be
	// flagged to be detectable.
	CalibrationPower = 0.8
	// DefaultCalibrationTrials is the splits per shift (and the null's
	// splits are ten times as many).
	DefaultCalibrationTrials = 200
	// DefaultCalibrationSeed makes a calibration of the same runs the same.
	DefaultCalibrationSeed = 48
	// maxMDE is the largest shift searched, as a fraction: +1000 %.
	maxMDE = 10.0
)

// CalibrateOptions tune Calibrate; the comparison's options are the ones
// the minimum detectable effects are computed for.
type CalibrateOptions struct {
	CompareOptions
	RunsPerSide int    // default DefaultCalibrationRunsPerSide
	Trials      int    // default DefaultCalibrationTrials
	Seed        uint64 // default DefaultCalibrationSeed
}

// Calibration is one build's noise on this machine, row by row, and the
// smallest shift each row lets the verdict see: a calibration file,
// written by kstep calibrate and read by kstep compare --calibration.
type Calibration struct {
	Schema   string `json:"schema"`
	Set      string `json:"set"`
	Profile  string `json:"profile"`
	Provider string `json:"provider"`
	Version  string `json:"version,omitempty"`
	// Runs is the set's runs; RunsPerSide the comparison the minimum
	// detectable effects are for (that many runs on each side).
	Runs        int `json:"runs"`
	RunsPerSide int `json:"runs_per_side"`
	// The verdict's options (defaults applied).
	Threshold  float64 `json:"threshold_pct"`
	MinShiftMS float64 `json:"min_shift_ms"`
	Alpha      float64 `json:"alpha"`
	Power      float64 `json:"power"`
	Trials     int     `json:"trials"`
	Seed       uint64  `json:"seed"`
	// FamilyTests is the comparison's family (p50 and p99 of every row);
	// CriticalP the largest p a row may have and be flagged, from the
	// null distribution of the family's smallest p over NullSplits splits
	// of these runs into two groups of RunsPerSide (single-step min-P).
	FamilyTests int     `json:"family_tests"`
	CriticalP   float64 `json:"critical_p"`
	NullSplits  int     `json:"null_splits"`
	// Method says how the minimum detectable effects were found.
	Method string           `json:"method"`
	Rows   []CalibrationRow `json:"rows"`
}

// CalibrationRow is one row's noise and minimum detectable effects.
type CalibrationRow struct {
	Key   string   `json:"key"` // Step.Key()
	Step  string   `json:"step"`
	Name  string   `json:"name"`
	Nodes string   `json:"nodes"`
	Runs  int      `json:"runs"` // the runs that measured it
	P50   RowNoise `json:"p50"`
	P99   RowNoise `json:"p99"`
}

// RowNoise is one statistic of a row across the runs of one build.
type RowNoise struct {
	MedianMS float64 `json:"median_ms"`
	// CVPct is the run-to-run coefficient of variation (sample standard
	// deviation over mean); RobustCVPct the same from the median absolute
	// deviation (1.4826·MAD over the median), which one odd run does not
	// move.
	CVPct       float64 `json:"cv_pct"`
	RobustCVPct float64 `json:"robust_cv_pct"`
	// MDEPct is the smallest slowdown, in percent, flagged in Power of the
	// trials; null when none up to +1000 % is (the row's runs cannot reach
	// the family's critical p, or too few runs measured it).
	MDEPct *float64 `json:"mde_pct"`
}

// MDE is the row's minimum detectable effect in percent: the smaller of
// its p50's and its p99's (a verdict flags either), +Inf when neither has
// one.
func (r CalibrationRow) MDE() float64 {
	m := math.Inf(1)
	for _, x := range []*float64{r.P50.MDEPct, r.P99.MDEPct} {
		if x != nil {
			m = math.Min(m, *x)
		}
	}
	return m
}

// Calibrate measures each row's run-to-run noise over the runs of one
// build and its minimum detectable effect at CalibrationPower for
// CompareSets' verdict with RunsPerSide runs a side, by resampling the
// runs themselves: each trial splits the row's runs at random into two
// groups of RunsPerSide (without putting a run in both when there are
// enough; a bootstrap draw otherwise), multiplies the second group by
// 1 + shift, and asks whether the verdict would flag it: a p at or below
// the family's critical p (below), a Hodges–Lehmann shift beyond Threshold
// and MinShiftMS. The MDE is the smallest shift flagged in Power of the
// trials, by bisection over the same trials at every shift (so the rate
// is monotone in the shift and the answer deterministic for a Seed).
//
// The family's critical p stands for the step-down min-P adjustment of a
// comparison with one row shifted: over ten times Trials random splits of
// the runs into two groups (no shift), the distribution of the smallest p
// over every row's p50 and p99; a row is flagged when the share of splits
// whose smallest p is at or below its p is under Alpha. It is measured on
// these runs, so rows that move together in a run count as they do.
//
// Calibrate refuses (an error) fewer than MinCalibrationRuns runs, runs
// not measured alike and invalid or disrupted ones, as CompareSets does.
func Calibrate(s *Set, o CalibrateOptions) (*Calibration, error) {
	o.CompareOptions = o.CompareOptions.withDefaults()
	if o.RunsPerSide == 0 {
		o.RunsPerSide = DefaultCalibrationRunsPerSide
	}
	if o.Trials == 0 {
		o.Trials = DefaultCalibrationTrials
	}
	if o.Seed == 0 {
		o.Seed = DefaultCalibrationSeed
	}
	if s == nil || len(s.Runs) < MinCalibrationRuns {
		n := 0
		if s != nil {
			n = len(s.Runs)
		}
		return nil, fmt.Errorf("calibrate: %d run(s); a calibration needs at least %d runs of one build (kstep bench --repeat %d)", n, MinCalibrationRuns, MinCalibrationRuns)
	}
	if o.RunsPerSide < 2 || 2*o.RunsPerSide > len(s.Runs) || o.Trials < 10 {
		return nil, fmt.Errorf("calibrate: %d runs per side of %d runs and %d trials: need 2 to %d runs per side (two groups without a run in both) and at least 10 trials",
			o.RunsPerSide, len(s.Runs), o.Trials, len(s.Runs)/2)
	}
	refused, unforced, _, _ := comparable([]side{{"calibration", s}})
	if r := append(unforced, refused...); len(r) > 0 {
		return nil, fmt.Errorf("calibrate: the runs were not measured alike or not healthy: %s", strings.Join(r, "; "))
	}
	first := s.Runs[0]
	cal := &Calibration{Schema: CalibrationSchema, Set: s.Dir, Profile: first.Profile, Provider: first.Provider, Version: first.Version,
		Runs: len(s.Runs), RunsPerSide: o.RunsPerSide, Threshold: o.Threshold, MinShiftMS: o.MinShiftMS, Alpha: o.Alpha,
		Power: CalibrationPower, Trials: o.Trials, Seed: o.Seed}
	steps := stepsOf(s)
	type stat struct {
		row    int
		values []float64
		runs   []int
	}
	var stats []stat
	for i, k := range steps.order {
		sr := steps.byKey[k]
		cal.Rows = append(cal.Rows, CalibrationRow{Key: k, Step: sr.step.Step, Name: sr.step.Name, Nodes: sr.step.Nodes, Runs: len(sr.p50),
			P50: noiseOf(sr.p50), P99: noiseOf(sr.p99)})
		stats = append(stats, stat{i, sr.p50, sr.runs}, stat{i, sr.p99, sr.runs})
	}
	cal.FamilyTests = len(stats)

	// The null: the family's smallest p over random splits of all runs.
	k := o.RunsPerSide
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	cal.NullSplits = 10 * o.Trials
	nullMin := make([]float64, cal.NullSplits)
	inA := make([]int8, len(s.Runs)) // 1: group A, 2: group B, 0: out
	for t := range nullMin {
		drawGroups(rng, len(s.Runs), k, inA)
		m := 1.0
		for _, st := range stats {
			var a, b []float64
			for i, r := range st.runs {
				switch inA[r] {
				case 1:
					a = append(a, st.values[i])
				case 2:
					b = append(b, st.values[i])
				}
			}
			m = math.Min(m, quickP(a, b))
		}
		nullMin[t] = m
	}
	sort.Float64s(nullMin)
	// flagged: the share of null splits at or below p is under Alpha.
	flagged := func(p float64) bool {
		at := sort.Search(len(nullMin), func(i int) bool { return nullMin[i] > p*(1+1e-9) })
		return float64(at)/float64(len(nullMin)) < o.Alpha
	}
	cal.CriticalP = 0
	for _, p := range nullMin {
		if !flagged(p) {
			break
		}
		cal.CriticalP = p
	}

	for si, st := range stats {
		r := rand.New(rand.NewPCG(o.Seed, uint64(2+si)))
		// The trials: the same groups at every shift.
		trials := make([][2][]float64, o.Trials)
		for t := range trials {
			trials[t] = drawValues(r, st.values, k)
		}
		rate := func(shift float64) float64 {
			hit := 0
			for _, tr := range trials {
				b := make([]float64, len(tr[1]))
				for i, v := range tr[1] {
					b[i] = v * (1 + shift)
				}
				p := quickP(tr[0], b)
				if !flagged(p) {
					continue
				}
				hl := hlShift(tr[0], b)
				if pctOf(hl, medianOf(tr[0])) > o.Threshold && math.Abs(hl) >= o.MinShiftMS {
					hit++
				}
			}
			return float64(hit) / float64(len(trials))
		}
		var mde *float64
		if rate(maxMDE) >= CalibrationPower {
			lo, hi := 0.0, maxMDE
			for hi-lo > 0.0005 {
				mid := (lo + hi) / 2
				if rate(mid) >= CalibrationPower {
					hi = mid
				} else {
					lo = mid
				}
			}
			v := math.Round(hi*1000) / 10 // percent, 0.1 %
			mde = &v
		}
		row := &cal.Rows[st.row]
		if si%2 == 0 {
			row.P50.MDEPct = mde
		} else {
			row.P99.MDEPct = mde
		}
	}
	cal.Method = fmt.Sprintf("minimum detectable effect at %.0f %% power for compare with %d runs a side: %d random splits of the row's runs into two groups of %d (a bootstrap draw when the row has fewer than %d runs), the second slowed by the shift; flagged when p ≤ %.3g (the family's critical p over %d tests, from %d splits without a shift), the Hodges–Lehmann shift > %g %% and ≥ %g ms; seed %d",
		100*CalibrationPower, k, o.Trials, k, 2*k, cal.CriticalP, cal.FamilyTests, cal.NullSplits, o.Threshold, o.MinShiftMS, o.Seed)
	return cal, nil
}

// drawGroups marks k runs of n (2k ≤ n) as group 1 and k others as
// group 2, the rest 0.
func drawGroups(r *rand.Rand, n, k int, mark []int8) {
	perm := r.Perm(n)
	clear(mark)
	for i, p := range perm {
		switch {
		case i < k:
			mark[p] = 1
		case i < 2*k:
			mark[p] = 2
		}
	}
}

// drawValues is one trial's two groups of k of values: a random split
// without replacement when there are 2k values, else a bootstrap draw of
// each group.
func drawValues(r *rand.Rand, values []float64, k int) [2][]float64 {
	var out [2][]float64
	if len(values) >= 2*k {
		perm := r.Perm(len(values))
		for i := range k {
			out[0] = append(out[0], values[perm[i]])
			out[1] = append(out[1], values[perm[k+i]])
		}
		return out
	}
	for g := range out {
		for range k {
			out[g] = append(out[g], values[r.IntN(len(values))])
		}
	}
	return out
}

// untiedTables caches exactPTable for untied ranks by (n, k): the table
// every untied row with n values and k on one side shares.
var (
	untiedMu     sync.Mutex
	untiedTables = map[[2]int][]float64{}
)

// quickP is MannWhitney's p, from a cached table when nothing ties.
func quickP(a, b []float64) float64 {
	n, k := len(a)+len(b), len(a)
	if k == 0 || len(b) == 0 {
		return 1
	}
	if n > ExactMaxN {
		_, p := MannWhitney(a, b)
		return p
	}
	all := append(append(make([]float64, 0, n), a...), b...)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return all[idx[i]] < all[idx[j]] })
	sum := 0
	for rank, i := range idx {
		if rank > 0 && all[idx[rank-1]] == all[i] {
			_, p := MannWhitney(a, b) // ties: the exact conditional test
			return p
		}
		if i < k {
			sum += 2 * (rank + 1)
		}
	}
	key := [2]int{n, k}
	untiedMu.Lock()
	defer untiedMu.Unlock()
	tab, ok := untiedTables[key]
	if !ok {
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = 2 * (i + 1)
		}
		tab = exactPTable(ranks, k)
		untiedTables[key] = tab
	}
	return tab[sum]
}

// hlShift is the Hodges–Lehmann shift of b from a.
func hlShift(a, b []float64) float64 {
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, y-x)
		}
	}
	sort.Float64s(d)
	return median(d)
}

// noiseOf is a statistic's noise across runs.
func noiseOf(v []float64) RowNoise {
	n := RowNoise{MedianMS: medianOf(v)}
	if len(v) < 2 {
		return n
	}
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	if mean != 0 {
		n.CVPct = 100 * math.Sqrt(ss/float64(len(v)-1)) / mean
	}
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - n.MedianMS)
	}
	if n.MedianMS != 0 {
		n.RobustCVPct = 100 * 1.4826 * medianOf(dev) / n.MedianMS
	}
	return n
}

// WriteCalibration writes c as JSON to path.
func WriteCalibration(path string, c *Calibration) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	return nil
}

// ReadCalibration reads a calibration file.
func ReadCalibration(path string) (*Calibration, error) {
	return readSchemaFile(path, "calibration", path, CalibrationSchema, func(c *Calibration) string { return c.Schema })
}

// ApplyCalibration says, on each row cal calibrated whose verdict is ok,
// when the row cannot see a shift of the threshold: its minimum
// detectable effect (the smaller of p50's and p99's) exceeds it
// (SetDelta.CannotSee). It warns when the calibration is of another
// profile or provider, or for another number of runs a side.
func (c *Comparison) ApplyCalibration(cal *Calibration) {
	rows := map[string]CalibrationRow{}
	for _, r := range cal.Rows {
		rows[r.Key] = r
	}
	if cal.RunsPerSide != min(c.BaseRuns, c.NewRuns) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the calibration (%s) is for %d runs a side, this comparison has %d and %d: its minimum detectable effects are not this comparison's",
			cal.Set, cal.RunsPerSide, c.BaseRuns, c.NewRuns))
	}
	if cal.Threshold != c.Threshold || cal.Alpha != c.Alpha || cal.MinShiftMS != c.MinShiftMS {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the calibration (%s) was made at threshold %g %%, alpha %g, min shift %g ms; this comparison uses %g %%, %g, %g ms",
			cal.Set, cal.Threshold, cal.Alpha, cal.MinShiftMS, c.Threshold, c.Alpha, c.MinShiftMS))
	}
	for i := range c.Deltas {
		d := &c.Deltas[i]
		r, ok := rows[d.Key]
		if !ok || d.Verdict != VerdictOK {
			continue
		}
		switch m := r.MDE(); {
		case math.IsInf(m, 1):
			d.CannotSee = fmt.Sprintf("cannot see any shift up to +%.0f %% here (calibration: %d runs a side never reach the family's critical p %.3g)", 100*maxMDE, cal.RunsPerSide, cal.CriticalP)
		case m > c.Threshold:
			d.CannotSee = fmt.Sprintf("cannot see less than %.0f %% here (calibrated p50 CV %.0f %%, MDE p50 %s, p99 %s)", m, r.P50.CVPct, mdeText(r.P50.MDEPct), mdeText(r.P99.MDEPct))
		}
	}
}

func mdeText(m *float64) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("%.0f %%", *m)
}
