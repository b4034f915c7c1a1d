package chaos

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden.* from the current output")

// resolutionReport is the docker chaos report's three artifacts, recorded
// as the probes saw them: the etcd leader kill's first acknowledged write
// 40 ms after the kill and the partition's 20 ms (the probe writes every
// 50 ms at 20 QPS), and a leader change seen by the 100 ms poll 60 ms in
// beside one 660 ms in, which is a time.
func resolutionReport(t *testing.T) *Report {
	h := &History{WritePeriod: writePeriod(20),
		EtcdLeader: []LeaderSample{{At: at(0), Holder: "etcd-0"}, {At: at(10.06), Holder: "etcd-1"}, {At: at(30.66), Holder: "etcd-2"}},
		Writes: []ProbeWrite{{Sent: at(10.04), Acked: at(10.045)}, {Sent: at(20.02), Acked: at(20.03)},
			{Sent: at(30.05), Err: "timeout"}},
	}
	faults := []struct {
		f FaultResult
		e Expect
	}{
		{FaultResult{Name: "etcd-leader-kill", Action: ActionKill, Target: TargetEtcdLeader, Actors: []string{"etcd-0"}, InjectedAt: at(10), WindowEnd: at(20)},
			Expect{Detection: DetectEtcdLeader, Recovery: RecoverWrite}},
		{FaultResult{Name: "partition", Action: ActionPartition, Target: TargetEtcdLeader, Actors: []string{"etcd-1"}, InjectedAt: at(20), WindowEnd: at(30)},
			Expect{Detection: DetectNone, Recovery: RecoverWrite}},
		{FaultResult{Name: "quorum-loss", Action: ActionKill, Target: TargetEtcdQuorum, Actors: []string{"etcd-1", "etcd-2"}, InjectedAt: at(30), WindowEnd: at(40)},
			Expect{Detection: DetectEtcdLeader, Recovery: RecoverNone}},
	}
	rep := &Report{Scenario: "resolution", Gate: "default", Start: at(0), End: at(40), Passed: true}
	for _, x := range faults {
		x.f.Measure(h, x.e)
		rep.Faults = append(rep.Faults, x.f)
	}
	return rep
}

// Every detection and recovery carries its resolution; below it the
// reports (markdown, which kstep chaos also prints, HTML, chaos.json) say
// "< resolution (X ms)" instead of the time, and a time above it stays.
func TestReportResolution(t *testing.T) {
	rep := resolutionReport(t)
	kill, part, quorum := rep.Faults[0], rep.Faults[1], rep.Faults[2]
	for _, c := range []struct {
		name  string
		m     Measure
		res   float64
		below bool
		text  string
	}{
		{"kill detection", kill.Detection, 100, true, "< resolution (100 ms)"},
		{"kill recovery", kill.Recovery, 50, true, "< resolution (50 ms)"},
		{"partition recovery", part.Recovery, 50, true, "< resolution (50 ms)"},
		{"quorum detection", quorum.Detection, 100, false, "660ms"},
	} {
		if c.m.ResolutionMS != c.res || c.m.BelowResolution != c.below || c.m.Text() != c.text {
			t.Errorf("%s: %+v (%q), want resolution %v, below %v, %q", c.name, c.m, c.m.Text(), c.res, c.below, c.text)
		}
	}
	md, page := Markdown(rep), HTML(rep)
	for _, want := range []string{"| etcd-leader-kill | kill etcd-leader | etcd-0 | 10s | < resolution (100 ms) (etcd-leader-changed) | < resolution (50 ms) (write-acked) |",
		"| partition | partition etcd-leader | etcd-1 | 20s | — | < resolution (50 ms) (write-acked) |",
		"| 660ms (etcd-leader-changed) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "40ms") || strings.Contains(md, "20ms") || strings.Contains(page, "40ms") || !strings.Contains(page, "&lt; resolution (50 ms)") {
		t.Errorf("a time below the resolution is published")
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "chaos.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Faults []struct {
			Recovery map[string]any `json:"recovery"`
		} `json:"faults"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if r := raw.Faults[1].Recovery; r["below_resolution"] != true || r["resolution_ms"] != 50.0 {
		t.Errorf("chaos.json partition recovery %v", r)
	}
	golden(t, "resolution.golden.md", md)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the output:\n%s", path, got)
	}
}
