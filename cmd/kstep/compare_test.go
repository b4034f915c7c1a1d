package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

// writeRuns writes one run directory per p50 (p99 three times it) under
// dir, as `kstep bench --repeat` would, set.json included when manifest.
func writeRuns(t *testing.T, dir string, manifest bool, p50s ...float64) {
	t.Helper()
	m := &results.SetManifest{Profile: "small", Provider: "process", Repeat: len(p50s)}
	for i, p50 := range p50s {
		s := results.Summary{Count: 50, P50: p50, P90: 2 * p50, P99: 3 * p50, Max: 4 * p50}
		r := &results.Run{Schema: results.Schema, ID: fmt.Sprintf("r%d", i), Provider: "process", Profile: "small", Valid: true,
			Cluster:  results.Cluster{Topology: provider.Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 1, Schedulers: 1, HollowNodes: 20}},
			Steps:    []results.Step{{Step: "⑤", Name: "node selection", Nodes: results.NodesAll, Summary: s}},
			EndToEnd: results.Step{Step: "e2e", Name: "end to end", Nodes: results.NodesAll, Summary: s}}
		name := results.RunDirName(i + 1)
		if err := results.WriteRun(filepath.Join(dir, name), r); err != nil {
			t.Fatal(err)
		}
		m.Runs = append(m.Runs, name)
	}
	if manifest {
		if err := results.WriteSetManifest(dir, m); err != nil {
			t.Fatal(err)
		}
	}
}

func runCompare(args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"compare"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestCompareExitCodes(t *testing.T) {
	tmp := t.TempDir()
	base, same, slower, small := filepath.Join(tmp, "base"), filepath.Join(tmp, "same"), filepath.Join(tmp, "slower"), filepath.Join(tmp, "small")
	writeRuns(t, base, true, 10, 11, 12, 13, 14)
	writeRuns(t, same, false, 10.5, 11.5, 12.5, 13.5, 14.5) // a directory of run directories
	writeRuns(t, slower, true, 20, 21, 22, 23, 24)
	writeRuns(t, small, true, 20, 21, 22)
	small2 := filepath.Join(tmp, "small2")
	writeRuns(t, small2, true, 10, 11, 12)

	out, err := runCompare(base, same)
	if exitCode(err) != 0 || !strings.Contains(out, "no step regressed beyond 10 % at p < 0.05") {
		t.Errorf("same build: exit %d (%v)\n%s", exitCode(err), err, out)
	}

	out, err = runCompare(base, slower)
	var jf jobFailed
	if !errors.As(err, &jf) || exitCode(err) != 1 || !strings.Contains(err.Error(), "⑤|node selection|all") ||
		!strings.Contains(out, "regressed: p50 +") {
		t.Errorf("a slower build: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	// A tighter threshold does not rescue it; a looser one does.
	if _, err := runCompare("--threshold", "100", base, slower); exitCode(err) != 0 {
		t.Errorf("--threshold 100: exit %d (%v)", exitCode(err), err)
	}

	// Three runs a side cannot reach p < 0.05: not comparable.
	out, err = runCompare(small2, small)
	var ue usageError
	if !errors.As(err, &ue) || exitCode(err) != 2 || !strings.Contains(out, "need at least 4 runs a side") {
		t.Errorf("3 runs against 3: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	// Forced, the deltas come without a verdict, and nothing fails.
	if out, err := runCompare("--force", small2, small); exitCode(err) != 0 || !strings.Contains(out, "inconclusive") || !strings.Contains(out, "warning: forced: too few runs") {
		t.Errorf("--force 3 against 3: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	// Uneven sides count as they are: 3 against 5 can reach 2/C(8,3).
	if _, err := runCompare(small2, slower); exitCode(err) != 1 {
		t.Errorf("3 runs against 5 slower ones: exit %d (%v)", exitCode(err), err)
	}
	// A single run (a set of one), by its run.json, cannot conclude.
	if _, err := runCompare(filepath.Join(base, "run-01", "run.json"), slower); exitCode(err) != 2 {
		t.Errorf("one run against 5: exit %d (%v)", exitCode(err), err)
	}
}

func TestCompareRefusesOtherProfiles(t *testing.T) {
	tmp := t.TempDir()
	base, other := filepath.Join(tmp, "base"), filepath.Join(tmp, "other")
	writeRuns(t, base, true, 10, 11, 12, 13, 14)
	writeRuns(t, other, true, 20, 21, 22, 23, 24)
	r, err := results.ReadRun(filepath.Join(other, "run-02"))
	if err != nil {
		t.Fatal(err)
	}
	r.Profile = "nightly"
	if err := results.WriteRun(filepath.Join(other, "run-02"), r); err != nil {
		t.Fatal(err)
	}
	out, err := runCompare(base, other)
	if exitCode(err) != 2 || !strings.Contains(out, `profile "nightly" in new run `+filepath.Join(other, "run-02")) {
		t.Errorf("another profile: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	// --force compares, and the regression counts again.
	if out, err := runCompare("--force", base, other); exitCode(err) != 1 || !strings.Contains(out, "warning: forced: profile") {
		t.Errorf("--force: exit %d (%v)\n%s", exitCode(err), err, out)
	}
}

func TestCompareJSON(t *testing.T) {
	tmp := t.TempDir()
	base, slower := filepath.Join(tmp, "base"), filepath.Join(tmp, "slower")
	writeRuns(t, base, true, 10, 11, 12, 13, 14)
	writeRuns(t, slower, true, 20, 21, 22, 23, 24)
	out, err := runCompare("--json", base, slower)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v)", exitCode(err), err)
	}
	// CI scripts read the keys; the Go type reads them back.
	for _, k := range []string{`"base_runs": 5`, `"deltas": [`, `"shift_pct": `, `"verdict": "regressed"`} {
		if !strings.Contains(out, k) {
			t.Errorf("--json output lacks %s:\n%s", k, out)
		}
	}
	var c results.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("--json output is not a Comparison: %v\n%s", err, out)
	}
	if !c.Concluded || c.BaseRuns != 5 || c.NewRuns != 5 || len(c.Regressions()) != 2 {
		t.Errorf("--json: %+v", c)
	}
	d := c.Deltas[0]
	// Every new run is 10 ms slower than its base: the median of the 25
	// differences is +10 ms, 83 % of the base median of 12 ms.
	if d.BaseP50 != 12 || d.NewP50 != 22 || d.P50.ShiftPct < 83.3 || d.P50.ShiftPct > 83.4 || d.P50.P != 2.0/252 {
		t.Errorf("--json delta %+v", d)
	}
}

func TestCompareUsageErrors(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, true, 1, 2, 3, 4)
	for _, args := range [][]string{
		{dir},                        // one set
		{dir, dir, dir},              // three
		{"--no-such-flag", dir, dir}, // a flag cobra does not know
		{"--alpha", "1.5", dir, dir},
		{dir, filepath.Join(dir, "missing")}, // unreadable input
	} {
		if _, err := runCompare(args...); exitCode(err) != 2 {
			t.Errorf("compare %q: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}

// The cross view on the command line: an external run against a process
// run of the same profile with the outside view compares their common
// rows and lists the rest with the reason (forced: one run a side); the
// process run without the outside view is refused, exit 2, --force or not.
func TestCompareCrossView(t *testing.T) {
	tmp := t.TempDir()
	s := results.Summary{Count: 50, P50: 10, P90: 20, P99: 30, Max: 40}
	client := results.Step{Step: "①", Name: "client → apiserver: sent → 201", Nodes: results.NodesAll, From: "client.rs.sent", To: "client.rs.acked", Summary: s}
	seen := results.Step{Step: "①–③", Name: "outside: client sent → pod seen created", Nodes: results.NodesAll, From: "client.rs.sent", To: "client.pod.added", Summary: s}
	sel := results.Step{Step: "⑤", Name: "node selection", Nodes: results.NodesAll, From: "pod.observed.scheduler", To: "pod.scheduled", Summary: s}
	e2e := results.Step{Step: "e2e", Name: "client sent → pod Ready observed", Nodes: results.NodesAll, From: "client.rs.sent", To: "pod.ready.observed", Summary: s}
	write := func(name string, r *results.Run) string {
		r.Schema, r.ID, r.Profile, r.Valid, r.EndToEnd = results.Schema, name, "quick", true, e2e
		dir := filepath.Join(tmp, name)
		if err := results.WriteRun(dir, r); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ext := write("ext", &results.Run{Provider: provider.External, OutsideView: true, Steps: []results.Step{client, seen},
		NotObservable: []string{"pod.observed.scheduler", "pod.scheduled"}, Cluster: results.Cluster{External: &results.External{Nodes: 10}}})
	top := provider.Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 1, Schedulers: 1, HollowNodes: 50}
	proc := write("proc", &results.Run{Provider: "process", OutsideView: true, Steps: []results.Step{client, sel, seen}, Cluster: results.Cluster{Topology: top}})
	blind := write("blind", &results.Run{Provider: "process", Steps: []results.Step{client, sel}, Cluster: results.Cluster{Topology: top}})

	out, err := runCompare("--force", ext, proc)
	if exitCode(err) != exitOK || !strings.Contains(out, "outside: client sent → pod seen created") ||
		!strings.Contains(out, "⑤ node selection [all], only in new: pod.observed.scheduler is not observable on the base runs' cluster") {
		t.Errorf("external against process with the outside view: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	for _, args := range [][]string{{ext, blind}, {"--force", ext, blind}} {
		out, err := runCompare(args...)
		if exitCode(err) != exitInvalid || !strings.Contains(out, "cross view without the outside view") || !strings.Contains(out, "--force cannot compare these") {
			t.Errorf("compare %v: exit %d (%v), want %d refusing the cross view without the outside view\n%s", args, exitCode(err), err, exitInvalid, out)
		}
	}
}
