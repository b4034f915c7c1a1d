package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// warmInput is n ReplicaSets of one pod each, the i-th sent at 100·i ms;
// the first cold of them take 1000 ms from send to Ready, the rest 10 ms.
func warmInput(n, cold int) Input {
	var in Input
	for i := range n {
		rs, pod := types.UID(fmt.Sprintf("rs%03d", i)), types.UID(fmt.Sprintf("p%03d", i))
		name := fmt.Sprintf("rs-%03d", i)
		at := float64(100 * i)
		d := 10.0
		if i < cold {
			d = 1000
		}
		in.Events = append(in.Events,
			ev(at, loadgen.ClientRSSent, loadgen.Actor, name, rs),
			ev(at+1, loadgen.ClientRSAcked, loadgen.Actor, name, rs),
			ev(at+d, trace.PodReadyObserved, loadgen.Actor, name+"-a", pod))
		in.Objects = append(in.Objects, rs)
		in.Pods = append(in.Pods, loadgen.PodOwner{Namespace: "ns", Name: name + "-a", UID: pod, RSUID: rs})
	}
	in.Replicas = 1
	return in
}

// The warm-up leaves the first objects out of every row, by count and by
// time since the first send, and says what it left out; the run stays
// valid and its throughput counts every pod.
func TestAnalyzeWarmUp(t *testing.T) {
	for _, c := range []struct {
		name     string
		w        WarmUp
		leftOut  int
		p50, max float64
	}{
		{"none", WarmUp{}, 0, 10, 1000},
		{"objects", WarmUp{Objects: 5}, 5, 10, 10},
		{"fewer objects than are cold", WarmUp{Objects: 3}, 3, 10, 1000},
		// Sent at 0, 100, ... 400 ms: within 450 ms of the first.
		{"duration", WarmUp{Duration: loadgen.Duration{Duration: 450 * time.Millisecond}}, 5, 10, 10},
		{"either", WarmUp{Objects: 2, Duration: loadgen.Duration{Duration: 650 * time.Millisecond}}, 7, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := warmInput(40, 5)
			in.WarmUp = c.w
			r := &results.Run{Valid: true}
			Analyze(in, r)
			if !r.Valid {
				t.Fatalf("invalid: %v", r.Invalid)
			}
			if r.EndToEnd.Count != 40-c.leftOut || r.EndToEnd.P50 != c.p50 || r.EndToEnd.Max != c.max {
				t.Errorf("end to end: %d samples, p50 %g, max %g; want %d, %g, %g", r.EndToEnd.Count, r.EndToEnd.P50, r.EndToEnd.Max, 40-c.leftOut, c.p50, c.max)
			}
			for _, s := range r.Steps {
				if s.Count != 40-c.leftOut {
					t.Errorf("step %s %s: %d samples, want %d", s.Step, s.Name, s.Count, 40-c.leftOut)
				}
			}
			switch {
			case c.leftOut == 0 && r.WarmUp != nil:
				t.Errorf("no warm-up asked, run.json has %+v", r.WarmUp)
			case c.leftOut > 0 && (r.WarmUp == nil || r.WarmUp.LeftOutObjects != c.leftOut || r.WarmUp.Pods != c.leftOut):
				t.Errorf("warm-up record %+v, want %d objects and pods left out", r.WarmUp, c.leftOut)
			}
			if r.Pods != 40 || len(r.Throughput.PerSecond) == 0 {
				t.Errorf("the run counts %d pods (throughput %v): want all 40", r.Pods, r.Throughput)
			}
		})
	}
}

// A warm-up that leaves out every pod makes the run invalid, saying so;
// a profile's is refused before the run when it would.
func TestWarmUpLeavesOutEverything(t *testing.T) {
	in := warmInput(4, 0)
	in.WarmUp = WarmUp{Duration: loadgen.Duration{Duration: time.Second}}
	r := &results.Run{Valid: true}
	Analyze(in, r)
	if r.Valid || !strings.Contains(strings.Join(r.Invalid, "; "), "leaves out all 4 pods") {
		t.Errorf("valid %v, invalid %v: want the warm-up named", r.Valid, r.Invalid)
	}
	for _, c := range []struct {
		w     WarmUp
		count int
		want  string
	}{
		{WarmUp{Objects: 200}, 200, "leaves out all 200"},
		{WarmUp{Objects: -1}, 200, "negative"},
		{WarmUp{Duration: loadgen.Duration{Duration: -time.Second}}, 200, "negative"},
	} {
		if err := c.w.Validate(c.count); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v of %d objects: %v, want %q", c.w, c.count, err, c.want)
		}
	}
	if err := (WarmUp{Objects: 199}).Validate(200); err != nil {
		t.Errorf("199 of 200: %v", err)
	}
	p := Builtin["quick"]
	if w := p.WarmUpOf(); w.set() {
		t.Errorf("quick's default warm-up %+v, want none", w)
	}
	p.WarmUp = &WarmUp{Objects: 500}
	if err := p.Validate(); err == nil {
		t.Error("quick with a warm-up of 500 of its 200 objects validated")
	}
}
