package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/results"
)

// runBench runs `kstep bench` like a user and returns its exit code and
// output.
func runBench(t *testing.T, timeout time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	b, err := exec.CommandContext(ctx, binary(t), append([]string{"bench", "--no-progress"}, args...)...).CombinedOutput()
	return exitCode(t, "bench", err, b), string(b)
}

// exitCode is the exit status of a kstep command that ran; one that could
// not run fails the test.
func exitCode(t *testing.T, command string, err error, output []byte) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatalf("kstep %s: %v\n%s", command, err, output)
	}
	return 0
}

// TestBenchQuickCausal runs the quick profile once on each provider, the
// bench smoke of make test: the run is valid, no transition has a negative
// sample (each starts from a stamp that causally precedes its end), pods
// on real and hollow nodes are reported apart, and ⑦ on hollow nodes is
// simulated, with no verdict.
func TestBenchQuickCausal(t *testing.T) { benchQuickCausal(t, 1) }

// TestBenchQuickCausalSet is TestBenchQuickCausal as a set of three runs
// (--repeat 3), each on a fresh cluster: every run of the set holds the
// same (make nightly).
func TestBenchQuickCausalSet(t *testing.T) { benchQuickCausal(t, 3) }

func benchQuickCausal(t *testing.T, repeat int) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, true))
			if prov == "docker" {
				needDocker(t)
			}
			out := filepath.Join(t.TempDir(), "set")
			start := time.Now()
			code, output := runBench(t, 20*time.Minute, "--profile", "quick", "--provider", prov, "--repeat", strconv.Itoa(repeat), "--out", out)
			t.Logf("%d quick run(s) on %s in %s", repeat, prov, time.Since(start).Round(time.Second))
			if code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, output)
			}
			set, err := results.ReadSet(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Runs) != repeat {
				t.Fatalf("%d runs in the set, want %d", len(set.Runs), repeat)
			}
			for i, r := range set.Runs {
				if !r.Valid || len(r.Negative) > 0 {
					t.Errorf("run %d: valid=%v %v, negative samples %+v", i+1, r.Valid, r.Invalid, r.Negative)
				}
				if r.Provider != prov || r.Profile != "quick" {
					t.Errorf("run %d: provider %q profile %q", i+1, r.Provider, r.Profile)
				}
				// A real run's export passes the real promtool.
				if promtool, err := exec.LookPath("promtool"); err == nil {
					cmd := exec.Command(promtool, "check", "metrics")
					f, err := os.Open(filepath.Join(set.Dirs[i], "metrics.prom"))
					if err != nil {
						t.Fatal(err)
					}
					cmd.Stdin = f
					if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
						t.Errorf("run %d: promtool check metrics: %v\n%s", i+1, err, out)
					}
					f.Close()
				} else if os.Getenv("KSTEP_REQUIRE_TOOLS") == "1" {
					t.Errorf("promtool is not on PATH (KSTEP_REQUIRE_TOOLS=1): apt-get install -y prometheus")
				}
				for _, s := range append(append([]results.Step(nil), r.Steps...), r.EndToEnd) {
					for _, v := range s.SamplesMS {
						if v < 0 {
							t.Errorf("run %d: %s %s (%s) has a negative sample %.3f ms", i+1, s.Step, s.Name, s.Nodes, v)
							break
						}
					}
					if s.Simulated != (s.Nodes == results.NodesHollow && s.Step[0:len("⑦")] == "⑦") {
						t.Errorf("run %d: %s %s (%s) simulated=%v", i+1, s.Step, s.Name, s.Nodes, s.Simulated)
					}
					if s.Simulated && s.Verdict != results.VerdictSimulated {
						t.Errorf("run %d: simulated %s %s has the verdict %q", i+1, s.Step, s.Name, s.Verdict)
					}
				}
				kinds := map[string]results.Population{}
				for _, p := range r.Populations {
					kinds[p.Nodes] = p
				}
				if _, ok := kinds[results.NodesHollow]; !ok {
					t.Errorf("run %d: no hollow population: %+v", i+1, r.Populations)
				}
				if real := r.Cluster.Topology.RealNodes > 0; real {
					p, ok := kinds[results.NodesReal]
					if !ok || p.Pods == 0 || p.Runtime != "containerd" {
						t.Errorf("run %d: real nodes ran, but the real population is %+v", i+1, p)
					}
					t.Logf("run %d: ⑦ share of the total on real nodes p50 %.1f %% (documented %v)", i+1, p.Step7SharePct.P50, results.DocumentedStep7Share)
				}
				if prov == "process" {
					// The hollow kubelets' Events, on by default: the
					// check TestHollowStartedEvents makes, on this run.
					kube, err := bench.ReadKubeEvents(filepath.Join(set.Dirs[i], bench.KubeEventsFile))
					if err != nil {
						t.Fatal(err)
					}
					checkHollowStartedEvents(t, set.Dirs[i], kube, readPods(t, filepath.Join(set.Dirs[i], "pods.jsonl")))
				}
			}
		})
	}
}
