package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/results"
)

// TestBenchAB runs `kstep bench --ab BIN BIN --repeat 1` (the quick
// profile) on each provider: A's run, then B's, each a set under --out
// with its binary and version recorded, each run's header listing the
// settings in which its cluster is not as kstep up starts it; then the
// two sets are judged as `kstep compare A B` judges them, to the byte, with
// its exit code (2: one run a side is too few for a verdict). Usage
// errors (one binary, a compare flag without --ab, a binary that is not
// kstep) exit 2 before any cluster starts.
func TestBenchAB(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ab", bin}, "--ab takes two binaries"},
		{[]string{"--threshold", "5"}, "--threshold goes with --ab"},
		{[]string{"--ab", "/bin/true", bin}, "does not answer `version` as kstep does"},
		{[]string{"--ab", filepath.Join(t.TempDir(), "none"), bin}, "no such file"},
	} {
		if code, out := runBench(t, time.Minute, append([]string{"--provider", "process"}, tc.args...)...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("kstep bench %q: exit %d, want 2 saying %q:\n%s", tc.args, code, tc.want, out)
		}
	}
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, true))
			binary(t)
			if prov == "docker" {
				needDocker(t)
			}
			out := filepath.Join(t.TempDir(), "ab")
			start := time.Now()
			code, output := runBench(t, 20*time.Minute, "--profile", "quick", "--provider", prov, "--ab", bin, bin, "--repeat", "1", "--out", out)
			t.Logf("--ab --repeat 1 on %s in %s:\n%s", prov, time.Since(start).Round(time.Second), output)
			if code != 2 || !strings.Contains(output, "too few runs") {
				t.Fatalf("exit %d, want 2 (one run a side is too few for a verdict)", code)
			}
			abs, err := filepath.Abs(bin)
			if err != nil {
				t.Fatal(err)
			}
			v, err := exec.Command(bin, "version").Output()
			if err != nil {
				t.Fatal(err)
			}
			version := strings.TrimPrefix(strings.TrimSpace(string(v)), "kstep ")
			var started [2]time.Time
			for i, side := range []string{"A", "B"} {
				dir := filepath.Join(out, side)
				set, err := results.ReadSet(dir)
				if err != nil {
					t.Fatal(err)
				}
				var m results.SetManifest
				if b, err := os.ReadFile(filepath.Join(dir, results.SetFile)); err != nil {
					t.Fatal(err)
				} else if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if m.Binary != abs || m.Version != version || len(set.Runs) != 1 {
					t.Fatalf("%s: set.json binary %q version %q, %d runs; want %s, %s, 1 run", side, m.Binary, m.Version, len(set.Runs), abs, version)
				}
				r := set.Runs[0]
				if !r.Valid || r.Provider != prov || r.Profile != "quick" || r.Version != version {
					t.Errorf("%s: valid %v %v, provider %s, profile %s, version %q", side, r.Valid, r.Invalid, r.Provider, r.Profile, r.Version)
				}
				if r.Cluster.NotAsUp == nil {
					t.Errorf("%s: run.json does not record the settings in which its cluster is not as kstep up starts it", side)
				}
				md, err := os.ReadFile(filepath.Join(set.Dirs[0], "report.md"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(md), r.Cluster.NotAsUpText()) {
					t.Errorf("%s: report.md lacks %q", side, r.Cluster.NotAsUpText())
				}
				if started[i], err = time.Parse(time.RFC3339, r.StartedAt); err != nil {
					t.Fatal(err)
				}
			}
			if !started[0].Before(started[1]) {
				t.Errorf("A started at %v, B at %v: want A first (A B B A ...)", started[0], started[1])
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmp := exec.CommandContext(ctx, bin, "compare", filepath.Join(out, "A"), filepath.Join(out, "B"))
			var stderr strings.Builder
			cmp.Stderr = &stderr
			judged, err := cmp.Output()
			if c := exitCode(t, "compare", err, judged); c != code || len(judged) == 0 || !strings.Contains(output, string(judged)) {
				t.Errorf("kstep compare A B: exit %d (--ab: %d), its judgement in --ab's output: %v:\n%s%s", c, code, strings.Contains(output, string(judged)), judged, stderr.String())
			}
		})
	}
}
