package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/results"
)

// repoRoot is the repository's root, from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNightlyWorkflowRunsMakeNightly holds the nightly workflow to running
// `make nightly` and nothing else of kstep's: what `make nightly` runs here
// is what runs every night, so testing one tests the other.
func TestNightlyWorkflowRunsMakeNightly(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `json:"name"`
				Uses string `json:"uses"`
				Run  string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	makes := 0
	for job, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Run == "" {
				continue
			}
			switch {
			case strings.HasSuffix(strings.TrimSpace(s.Run), "make nightly"):
				makes++
			case strings.Contains(s.Run, "kstep") || strings.Contains(s.Run, "make ") || strings.Contains(s.Run, ".ci/"):
				t.Errorf("job %s, step %q runs %q: the workflow must run kstep only through make nightly", job, s.Name, s.Run)
			}
		}
	}
	if makes != 1 {
		t.Errorf("the workflow runs make nightly %d times, want once", makes)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(mk), "\nnightly:")
	if i < 0 || !strings.Contains(strings.SplitN(string(mk)[i+1:], "\n\n", 2)[0], ".ci/nightly") {
		t.Errorf("the Makefile's nightly target does not run .ci/nightly")
	}
	if _, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command("bash", "-n", filepath.Join(root, ".ci", "nightly")).CombinedOutput(); err != nil {
			t.Errorf(".ci/nightly: %v\n%s", err, out)
		}
	}
}

// runCompareCLI runs `kstep compare --json` and returns its exit code, its
// stderr and the comparison it printed.
func runCompareCLI(t *testing.T, base, cur string) (int, string, *results.Comparison) {
	t.Helper()
	cmd := exec.Command(binary(t), "compare", "--json", base, cur)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := exitCode(t, "compare", err, out)
	var c results.Comparison
	if jerr := json.Unmarshal(out, &c); jerr != nil {
		t.Logf("compare printed no comparison (%v):\n%s", jerr, out)
		return code, stderr.String(), nil
	}
	return code, stderr.String(), &c
}

// TestNightlyCompareSets is the nightly's self-check (make nightly, not
// make test: 16 runs, about 3 minutes): two sets of 5 runs of the same
// build are no regression; 5 runs with the scheduler's binding delayed 5 ms
// by a failpoint are, with ⑤ named at p < 0.05 (exit 1); a run of another
// profile is refused (exit 2).
func TestNightlyCompareSets(t *testing.T) {
	inLane(t, hollowProcs)
	dir := t.TempDir()
	small := filepath.Join(repoRoot(t), "bench", "profiles", "small.yaml")
	bench := func(out string, args ...string) {
		start := time.Now()
		code, output := runBench(t, 10*time.Minute, append([]string{"--profile", small, "--provider", "process", "--out", out}, args...)...)
		t.Logf("%s: exit %d in %s", out[len(dir)+1:], code, time.Since(start).Round(time.Second))
		if code != 0 {
			t.Fatalf("%s: exit %d, want 0\n%s", out, code, output)
		}
	}
	// The three sets' runs take turns (base, same, slow, base, ...), so
	// a machine whose load drifts while they run loads each set alike:
	// sets run one after another would measure the drift.
	base, same, slow := filepath.Join(dir, "base"), filepath.Join(dir, "same"), filepath.Join(dir, "bind-delay-5ms")
	for i := 1; i <= 5; i++ {
		run := results.RunDirName(i)
		bench(filepath.Join(base, run))
		bench(filepath.Join(same, run))
		bench(filepath.Join(slow, run), "--scheduler-arg", "--failpoint-bind-delay=5ms")
	}
	other := filepath.Join(dir, "other-profile")
	bench(other, "--profile", filepath.Join("testdata", "small-other.yaml"))

	code, stderr, c := runCompareCLI(t, base, same)
	if code != 0 || c == nil || !c.Concluded || len(c.Regressions()) > 0 {
		t.Errorf("same build: exit %d, comparison %+v\n%s", code, c, stderr)
	}
	code, stderr, c = runCompareCLI(t, base, slow)
	if code != 1 || c == nil {
		t.Fatalf("5 ms binding delay: exit %d, want 1\n%s", code, stderr)
	}
	named := false
	for _, d := range c.Regressions() {
		t.Logf("regressed: %s %s (%s): %s", d.Step, d.Name, d.Nodes, d.Reason)
		if d.Step == "⑤" && d.Name == "binding persisted" && (d.P50.P < 0.05 || d.P99.P < 0.05) {
			named = true
		}
	}
	if !named {
		t.Errorf("5 ms binding delay: ⑤ binding persisted is not among the regressions at p < 0.05: %+v", c.Regressions())
	}
	code, stderr, c = runCompareCLI(t, base, other)
	if code != 2 || c == nil || !strings.Contains(strings.Join(c.Refused, "\n"), "profile") {
		t.Errorf("another profile: exit %d, refused %v, want 2 naming the profile\n%s", code, c, stderr)
	}
}
