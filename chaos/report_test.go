package chaos

import (
	"path/filepath"
	"strings"
	"testing"
)

func sampleReport() *Report {
	rep := &Report{Scenario: "s", Gate: "default", Start: at(0), End: at(60),
		Faults: []FaultResult{{Name: "etcd-leader-kill", Action: ActionKill, Target: TargetEtcdLeader, Actors: []string{"etcd-1"},
			InjectedAt: at(10), UndoneAt: at(15), Detection: Measure{Kind: string(DetectEtcdLeader), MS: msp(1200)},
			Recovery: Measure{Kind: string(RecoverWrite), MS: msp(1400)}, LongestWaitMS: 1100, WriteGapMS: 1500}},
		Invariants: []Invariant{{Name: InvLostWrites, Checked: true, Summary: "10 acknowledged writes, 0 lost"},
			{Name: InvRSOver, Checked: true, Count: 2, Summary: "max pods beyond replicas seen: 2"}},
	}
	g := &Gate{Name: "default", Invariants: map[string]int{InvLostWrites: 0, InvRSOver: 0}}
	rep.Verdicts = g.Evaluate(rep.Faults, rep.Invariants)
	rep.Passed = Passed(rep.Verdicts)
	return rep
}

func TestMarkdownAndHTML(t *testing.T) {
	rep := sampleReport()
	md := Markdown(rep)
	for _, want := range []string{"gate default FAILED", "| etcd-leader-kill | kill etcd-leader | etcd-1 | 10s | 1.2s (etcd-leader-changed) | 1.4s (write-acked) | 1.1s | 1.5s |",
		"| rs-over-replicas | BROKEN |", "| invariant rs-over-replicas | 2 | ≤ 0 | FAIL |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	h := HTML(rep)
	if !strings.Contains(h, "<svg") || !strings.Contains(h, "<title>recovery 1.4s</title>") {
		t.Errorf("HTML has no timeline with the recovery bar")
	}
	if strings.Contains(h, "src=") || strings.Contains(h, "href=") {
		t.Error("HTML refers to something outside itself")
	}
}

func TestReportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rep := sampleReport()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "chaos.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Passed || len(back.Verdicts) != len(rep.Verdicts) || *back.Faults[0].Recovery.MS != 1400 {
		t.Errorf("read back %+v", back)
	}
}
