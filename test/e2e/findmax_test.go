package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/results"
)

// TestBenchFindMax runs a short capacity search on the process provider as a
// user would: three steps from 10 pods/s, each 2 s or 20 pods, under an SLO
// loose enough that all hold, so the search raises ×1.5 each time and
// answers with a lower bound. Every step's pods are Ready and gone before the
// next starts, the curve and the answer are in run.json, the report and
// metrics.prom, and the costs per pod divide by every step's pods.
func TestBenchFindMax(t *testing.T) {
	inLane(t, hollowProcs)
	out := filepath.Join(t.TempDir(), "fm")
	prof := filepath.Join(repoRoot(t), "bench", "profiles", "small.yaml")
	start := time.Now()
	code, output := runBench(t, 10*time.Minute, "--profile", prof, "--provider", "process", "--out", out,
		"--find-max", "--find-max-start", "10", "--find-max-step-duration", "2s", "--find-max-step-pods", "20",
		"--find-max-steps", "3", "--slo-p99", "30s", "--slo-allow-disruption")
	t.Logf("find-max: exit %d in %v", code, time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, output)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	fm := r.FindMax
	if fm == nil || len(fm.Steps) != 3 {
		t.Fatalf("find_max %+v, want 3 steps\n%s", fm, output)
	}
	want := []float64{10, 15, 22.5}
	ready := 0
	for i, st := range fm.Steps {
		if st.OfferedPodsPerS != want[i] || st.Phase != "raise" || !st.Held {
			t.Errorf("step %d: %+v, want %v pods/s offered, raise, held", i+1, st, want[i])
		}
		if st.Pods == 0 || st.Ready != st.Pods || st.AchievedPodsPerS <= 0 || st.ControlPlaneP99MS <= 0 || st.E2EP99MS < st.ControlPlaneP50MS {
			t.Errorf("step %d figures: %+v", i+1, st)
		}
		if i > 0 {
			prev := fm.Steps[i-1]
			if st.StartS < prev.StartS+prev.DurationS {
				t.Errorf("step %d began at +%.1fs, before step %d ended (+%.1fs)", i+1, st.StartS, i, prev.StartS+prev.DurationS)
			}
		}
		ready += st.Ready
		if _, err := os.Stat(filepath.Join(out, "traces", "loadgen-fm0"+string(rune('1'+i))+".jsonl")); err != nil {
			t.Errorf("step %d's trace: %v", i+1, err)
		}
	}
	if fm.Step != 3 || fm.OfferedPodsPerS != 22.5 || fm.PodsPerS != fm.Steps[2].AchievedPodsPerS || fm.Bracketed || !strings.Contains(fm.Reason, "lower bound") {
		t.Errorf("answer: step %d, %.1f offered, %.1f achieved, bracketed %v: %s", fm.Step, fm.OfferedPodsPerS, fm.PodsPerS, fm.Bracketed, fm.Reason)
	}
	// The step table is the answer's step; the costs divide by all pods.
	if r.Pods != fm.Steps[2].Ready || r.LoadPods != ready || !r.Valid {
		t.Errorf("run: %d pods (want step 3's %d), load pods %d (want %d), valid %v %v", r.Pods, fm.Steps[2].Ready, r.LoadPods, ready, r.Valid, r.Invalid)
	}
	if _, ok := r.CPUMsPerPod(); !ok {
		t.Error("no CPU per pod")
	}
	if !strings.Contains(output, "find-max:") || !strings.Contains(output, "a lower bound") {
		t.Errorf("the terminal lacks the answer:\n%s", output)
	}
	for _, f := range []string{"report.md", "metrics.prom"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), map[string]string{"report.md": "Capacity search (find-max)", "metrics.prom": "kstep_findmax_pods_per_second"}[f]) {
			t.Errorf("%s lacks the search: %v", f, err)
		}
	}
}
