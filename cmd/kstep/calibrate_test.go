package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/results"
)

func runKstep(args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// kstep calibrate: fewer than 10 runs exit 2; 12 runs of one build give a
// calibration file that compare --calibration reads, and compare says what
// an ok step cannot see.
func TestCalibrateCommand(t *testing.T) {
	tmp := t.TempDir()
	few, cal, base, same := filepath.Join(tmp, "few"), filepath.Join(tmp, "cal"), filepath.Join(tmp, "base"), filepath.Join(tmp, "same")
	writeRuns(t, few, true, 10, 11, 12, 13, 14, 15, 16, 17, 18)
	// A CV of about 25 %: 5 runs a side cannot see 10 %.
	writeRuns(t, cal, true, 10, 14, 9, 16, 12, 8, 15, 11, 13, 18, 10.5, 12.5)
	writeRuns(t, base, true, 10, 11, 12, 13, 14)
	writeRuns(t, same, true, 10.5, 11.5, 12.5, 13.5, 14.5)

	out, err := runKstep("calibrate", few)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "at least 10 runs") {
		t.Errorf("9 runs: %v\n%s", err, out)
	}
	out, err = runKstep("calibrate", cal)
	if err != nil {
		t.Fatalf("calibrate: %v\n%s", err, out)
	}
	file := filepath.Join(cal, "calibration.json")
	if !strings.Contains(out, "calibration: "+file) || !strings.Contains(out, "no: cannot see less than") || !strings.Contains(out, "12 runs") {
		t.Errorf("calibrate output:\n%s", out)
	}
	c, err := results.ReadCalibration(file)
	if err != nil || len(c.Rows) != 2 || c.Rows[0].P50.MDEPct == nil || *c.Rows[0].P50.MDEPct <= 10 {
		t.Fatalf("calibration %+v: %v", c, err)
	}
	t.Logf("calibrate %s:\n%s", cal, out)

	out, err = runKstep("compare", "--calibration", file, base, same)
	if err != nil || !strings.Contains(out, "ok: cannot see less than") {
		t.Errorf("compare --calibration: %v\n%s", err, out)
	}
	t.Logf("compare --calibration:\n%s", out)
	if err := os.WriteFile(filepath.Join(tmp, "bad.json"), []byte(`{"schema":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runKstep("compare", "--calibration", filepath.Join(tmp, "bad.json"), base, same); !errors.As(err, &ue) {
		t.Errorf("a bad calibration file: %v", err)
	}
}
