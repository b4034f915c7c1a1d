package bench

import (
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// The load's CPU is each actor's account at the load's end less its
// account at the start; an actor the end reading lacks has none, and a
// restart that lost a life's figures never gives a negative.
func TestActorUsageLoadWindow(t *testing.T) {
	final := map[string]provider.Usage{
		"apiserver-0": {CPUSeconds: 10, PeakRSSBytes: 200 << 20},
		"etcd-0":      {CPUSeconds: 6, PeakRSSBytes: 80 << 20},
		"scheduler-0": {CPUSeconds: 1},
	}
	before := map[string]provider.Usage{"apiserver-0": {CPUSeconds: 2}, "etcd-0": {CPUSeconds: 1}, "scheduler-0": {CPUSeconds: 0.5}}
	after := map[string]provider.Usage{"apiserver-0": {CPUSeconds: 9.5}, "etcd-0": {CPUSeconds: 5}, "scheduler-0": {CPUSeconds: 0.25}}
	got := actorUsage(final, before, after)
	want := map[string]float64{"apiserver-0": 7.5, "etcd-0": 4, "scheduler-0": 0}
	if len(got) != 3 || got[0].Actor != "apiserver-0" || got[2].Actor != "scheduler-0" {
		t.Fatalf("rows %+v, want the three actors by name", got)
	}
	for _, a := range got {
		if a.LoadCPUSeconds != want[a.Actor] {
			t.Errorf("%s: load CPU %v s, want %v", a.Actor, a.LoadCPUSeconds, want[a.Actor])
		}
		if a.CPUSeconds != final[a.Actor].CPUSeconds {
			t.Errorf("%s: life CPU %v s, want %v", a.Actor, a.CPUSeconds, final[a.Actor].CPUSeconds)
		}
	}
	if got[0].PeakRSSMB != 200 {
		t.Errorf("peak %v MiB, want 200", got[0].PeakRSSMB)
	}
	if none := actorUsage(final, nil, nil); none[0].LoadCPUSeconds != 0 {
		t.Errorf("without the load's readings: %+v", none[0])
	}
}
