package results

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A calibration of 14 runs: each row's noise near the synthetic runs'
// (a CV of about 20 % on p50), a minimum detectable effect for 7 runs a
// side that grows with the noise, the same calibration from the same runs,
// and a file compare reads back. At 5 runs a side the 12 tests' family
// leaves no row anything it could flag: the smallest p, 2/252, is too
// common among 12 rows that move together only in part.
func TestCalibrate(t *testing.T) {
	noisy := famSet(rand.New(rand.NewPCG(7, 1)), 14, 6, 0.2, nil)
	quiet := famSet(rand.New(rand.NewPCG(7, 2)), 14, 6, 0.04, nil)
	five, err := Calibrate(noisy, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if five.CriticalP != 0 || five.Rows[0].P50.MDEPct != nil || !math.IsInf(five.Rows[0].MDE(), 1) {
		t.Errorf("5 runs a side, 12 tests: critical p %v, MDE %v", five.CriticalP, five.Rows[0].P50.MDEPct)
	}
	o := CalibrateOptions{RunsPerSide: 7}
	cn, err := Calibrate(noisy, o)
	if err != nil {
		t.Fatal(err)
	}
	cq, err := Calibrate(quiet, o)
	if err != nil {
		t.Fatal(err)
	}
	if cn.Runs != 14 || cn.RunsPerSide != 7 || cn.FamilyTests != 12 || len(cn.Rows) != 6 || cn.CriticalP <= 0 || cn.CriticalP > 0.05 {
		t.Fatalf("calibration %+v", cn)
	}
	var cvs []float64
	for i, r := range cn.Rows {
		q := cq.Rows[i]
		cvs = append(cvs, r.P50.CVPct)
		if r.P50.CVPct < 8 || r.P50.CVPct > 40 || r.P50.RobustCVPct <= 0 || q.P50.CVPct > 10 {
			t.Errorf("%s: p50 CV %.1f %% (robust %.1f %%), quiet %.1f %%", r.Key, r.P50.CVPct, r.P50.RobustCVPct, q.P50.CVPct)
		}
		if r.P50.MDEPct == nil || q.P50.MDEPct == nil {
			t.Fatalf("%s: no MDE: noisy %v, quiet %v", r.Key, r.P50.MDEPct, q.P50.MDEPct)
		}
		// The threshold is a floor: nothing under 10 % is flagged.
		if *q.P50.MDEPct < 10 || *r.P50.MDEPct <= *q.P50.MDEPct {
			t.Errorf("%s: MDE noisy %.1f %%, quiet %.1f %%", r.Key, *r.P50.MDEPct, *q.P50.MDEPct)
		}
		t.Logf("%s: p50 CV %.1f %% robust %.1f %%, MDE %.1f %% (quiet: CV %.1f %%, MDE %.1f %%)",
			r.Key, r.P50.CVPct, r.P50.RobustCVPct, *r.P50.MDEPct, q.P50.CVPct, *q.P50.MDEPct)
	}
	again, err := Calibrate(noisy, o)
	if err != nil || !reflect.DeepEqual(again, cn) {
		t.Errorf("not deterministic: %v", err)
	}
	path := filepath.Join(t.TempDir(), "calibration.json")
	if err := WriteCalibration(path, cn); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCalibration(path)
	if err != nil || !reflect.DeepEqual(back, cn) {
		t.Errorf("read back: %v", err)
	}
}

// The MDE is what it claims: a shift of it, applied to fresh sets drawn
// like the calibration's, is flagged by CompareSets about 80 % of the
// time, and half of it much less often.
func TestCalibrateMDEHolds(t *testing.T) {
	const rows, noise, k = 4, 0.1, 7
	cal, err := Calibrate(famSet(rand.New(rand.NewPCG(9, 1)), 20, rows, noise, nil), CalibrateOptions{RunsPerSide: k})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Rows[1].P50.MDEPct == nil {
		t.Fatalf("no MDE: %+v", cal)
	}
	mde := *cal.Rows[1].P50.MDEPct
	r := rand.New(rand.NewPCG(9, 2))
	rate := func(shift float64) float64 {
		hit := 0
		const pairs = 100
		for range pairs {
			c := CompareSets(famSet(r, k, rows, noise, nil), famSet(r, k, rows, noise, map[int]float64{1: 1 + shift/100}), CompareOptions{})
			if c.Deltas[1].Regressed {
				hit++
			}
		}
		return float64(hit) / pairs
	}
	at, half := rate(mde), rate(mde/2)
	if at < 0.6 || half > at-0.2 {
		t.Errorf("MDE %.1f %%: flagged in %.0f %% of fresh pairs at it, %.0f %% at half", mde, 100*at, 100*half)
	}
	t.Logf("row 1 MDE %.1f %% (p50 CV %.1f %%): fresh 7v7 pairs flag it %.0f %% of the time, %.0f %% at half of it", mde, cal.Rows[1].P50.CVPct, 100*at, 100*half)
}

// Fewer than 10 runs, or runs not measured alike, are refused.
func TestCalibrateRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := Calibrate(famSet(r, 9, 3, 0.1, nil), CalibrateOptions{}); err == nil || !strings.Contains(err.Error(), "at least 10 runs") {
		t.Errorf("9 runs: %v", err)
	}
	s := famSet(r, 10, 3, 0.1, nil)
	s.Runs[4].Profile = "nightly"
	if _, err := Calibrate(s, CalibrateOptions{}); err == nil || !strings.Contains(err.Error(), `profile "nightly"`) {
		t.Errorf("mixed profiles: %v", err)
	}
	if _, err := Calibrate(famSet(r, 10, 3, 0.1, nil), CalibrateOptions{RunsPerSide: 6}); err == nil {
		t.Errorf("6 runs a side of 10: no error")
	}
}

// compare --calibration: an ok row whose MDE exceeds the threshold says
// what it cannot see; a row that can see the threshold stays silent.
func TestApplyCalibration(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	c := CompareSets(famSet(r, 5, 3, 0.2, nil), famSet(r, 5, 3, 0.2, nil), CompareOptions{})
	cal := &Calibration{Set: "cal", RunsPerSide: 5, Threshold: c.Threshold, Alpha: c.Alpha, MinShiftMS: c.MinShiftMS, CriticalP: 0.01}
	big, small := 42.0, 8.0
	cal.Rows = []CalibrationRow{
		{Key: c.Deltas[0].Key, P50: RowNoise{CVPct: 20, MDEPct: &big}},
		{Key: c.Deltas[1].Key, P50: RowNoise{CVPct: 20, MDEPct: &big}, P99: RowNoise{MDEPct: &small}},
		{Key: c.Deltas[2].Key},
	}
	c.ApplyCalibration(cal)
	if d := c.Deltas[0]; d.Verdict != VerdictOK || !strings.HasPrefix(d.CannotSee, "cannot see less than 42 % here") {
		t.Errorf("row 0: %+v", d)
	}
	if d := c.Deltas[1]; d.CannotSee != "" {
		t.Errorf("row 1 sees 8 %% on p99: %q", d.CannotSee)
	}
	if d := c.Deltas[2]; !strings.HasPrefix(d.CannotSee, "cannot see any shift") {
		t.Errorf("row 2 (no MDE): %q", d.CannotSee)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %v", c.Warnings)
	}
	cal.RunsPerSide = 10
	c.ApplyCalibration(cal)
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "10 runs a side") {
		t.Errorf("warnings %v", c.Warnings)
	}
	if math.IsInf(cal.Rows[0].MDE(), 1) || !math.IsInf(cal.Rows[2].MDE(), 1) {
		t.Errorf("MDE %v %v", cal.Rows[0].MDE(), cal.Rows[2].MDE())
	}
}
