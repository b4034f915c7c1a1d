package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

// run drives the search against a cluster that holds the SLO up to
// capacity pods/s, and returns the rates it offered.
func runSearch(t *testing.T, f FindMax, capacity float64) (*search, []float64) {
	t.Helper()
	s := &search{cfg: f}
	var rates []float64
	for {
		r, ok := s.next()
		if !ok {
			return s, rates
		}
		if len(rates) > 200 {
			t.Fatal("the search does not end")
		}
		rates = append(rates, r)
		s.record(r, r <= capacity)
	}
}

// The search raises ×1.5 from the start while steps hold, then bisects
// until the rate that broke is within 10 % of the one that held: the
// capacity is between them.
func TestSearchBracketsTheCapacity(t *testing.T) {
	for _, capacity := range []float64{12, 100, 237, 1000, 5000} {
		f := DefaultFindMax()
		s, rates := runSearch(t, f, capacity)
		if rates[0] != 10 || (capacity > 15 && rates[1] != 15) {
			t.Errorf("capacity %v: rates %v, want 10, 15, ...", capacity, rates)
		}
		if !(s.pass <= capacity && capacity < s.fail) {
			t.Errorf("capacity %v: held at %v, broke at %v: not bracketed", capacity, s.pass, s.fail)
		}
		if (s.fail-s.pass)/s.pass > f.Precision {
			t.Errorf("capacity %v: %v to %v is wider than %v", capacity, s.pass, s.fail, f.Precision)
		}
		if len(rates) > 20 {
			t.Errorf("capacity %v: %d steps", capacity, len(rates))
		}
		if !strings.Contains(searchEnd(s), "bisected") {
			t.Errorf("capacity %v: %s", capacity, searchEnd(s))
		}
		t.Logf("capacity %v: %d steps, held at %.1f, broke at %.1f", capacity, len(rates), s.pass, s.fail)
	}
}

// A first step that already breaks the SLO lowers the rate until one holds;
// a cluster that holds nothing ends the search with no answer, and one that
// holds everything ends at the step bound with a lower bound.
func TestSearchLowersAndBounds(t *testing.T) {
	f := DefaultFindMax()
	s, rates := runSearch(t, f, 3)
	if rates[1] >= rates[0] || !(s.pass <= 3 && 3 < s.fail) {
		t.Errorf("capacity 3 from 10: rates %v, held %v broke %v", rates, s.pass, s.fail)
	}
	s, _ = runSearch(t, f, 0)
	if s.pass != 0 || !strings.Contains(searchEnd(s), "no step held") {
		t.Errorf("capacity 0: held %v: %s", s.pass, searchEnd(s))
	}
	f.MaxSteps = 5
	s, rates = runSearch(t, f, math.Inf(1))
	if len(rates) != 5 || s.fail != 0 || !strings.Contains(searchEnd(s), "lower bound") {
		t.Errorf("no capacity, 5 steps: rates %v: %s", rates, searchEnd(s))
	}
}

// A step offers rate × duration pods, at most StepPods, as objects of the
// profile's replicas, paced at rate, under its own name, deleting at the end.
func TestStepJob(t *testing.T) {
	base := Builtin["quick"].Job
	base.Object.Replicas = 2
	f := DefaultFindMax()
	j := stepJob(base, f, 3, 10)
	if j.Count != 150 || j.QPS != 5 || j.Name != "quick-fm03" || j.Object.NamePrefix != "quick-fm03-" || !j.Phases.Delete {
		t.Errorf("10 pods/s: %+v", j)
	}
	j = stepJob(base, f, 4, 1000)
	if j.Count != 250 || j.QPS != 500 || j.Workers < 200 || j.Burst != 1 {
		t.Errorf("1000 pods/s: count %d qps %v workers %d burst %d", j.Count, j.QPS, j.Workers, j.Burst)
	}
	if err := j.Validate(); err != nil {
		t.Error(err)
	}
	if j.Timeouts.Ready.Duration != f.StepTimeout {
		t.Errorf("ready timeout %v", j.Timeouts.Ready.Duration)
	}
}

// Bad searches are refused with every problem named.
func TestFindMaxValidate(t *testing.T) {
	f := DefaultFindMax()
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	f.Factor, f.SLO.Of, f.StepDuration = 1, "p50", time.Millisecond
	err := f.Validate()
	for _, want := range []string{"factor 1", `SLO latency "p50"`, "step duration 1ms"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v lacks %q", err, want)
		}
	}
}
