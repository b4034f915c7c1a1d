package chaos

import (
	"sort"
	"time"
)

// Phase is what a step of the schedule does to its fault.
type Phase int

// The phases: inject the fault, then undo it (start, thaw, heal).
const (
	Inject Phase = iota
	Undo
)

func (p Phase) String() string {
	if p == Inject {
		return "inject"
	}
	return "undo"
}

// Step is one action of the schedule: fault index Fault, phase Phase, due
// At after the start.
type Step struct {
	At    time.Duration
	Fault int
	Phase Phase
}

// Schedule is the order in which a scenario's faults are injected and
// undone. It is a pure core: it holds no clock and starts no goroutine; the
// driver asks it what is due at an elapsed time it measured, and when the
// next step is.
//
// Guarantees: steps come out in time order (ties: undo before inject, then
// fault order), each exactly once; a fault's undo never comes out before
// its inject, even when injecting took longer than the fault's duration
// (Injected shifts the undo to injection time + duration).
type Schedule struct {
	faults []Fault
	steps  []Step
	done   []bool
	// injected records, per fault, whether its inject step has come out.
	injected []bool
}

// NewSchedule lays out the faults' steps. An action with no undo (restart)
// gets none.
func NewSchedule(faults []Fault) *Schedule {
	s := &Schedule{faults: faults, injected: make([]bool, len(faults))}
	for i, f := range faults {
		s.steps = append(s.steps, Step{At: f.At.Duration, Fault: i, Phase: Inject})
		if f.Action != ActionRestart {
			s.steps = append(s.steps, Step{At: f.At.Duration + f.Duration.Duration, Fault: i, Phase: Undo})
		}
	}
	sort.SliceStable(s.steps, func(i, j int) bool { return stepLess(s.steps[i], s.steps[j]) })
	s.done = make([]bool, len(s.steps))
	return s
}

// stepLess orders steps by time; at the same time an undo goes first (a
// fault ends before the next begins), then by fault.
func stepLess(a, b Step) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	if a.Phase != b.Phase {
		return a.Phase == Undo
	}
	return a.Fault < b.Fault
}

// Due returns the steps due at elapsed that have not come out yet, in
// order, and marks them done. An undo whose inject has not come out waits.
func (s *Schedule) Due(elapsed time.Duration) []Step {
	var out []Step
	for progress := true; progress; {
		progress = false
		for i, st := range s.steps {
			if s.done[i] || st.At > elapsed {
				continue
			}
			if st.Phase == Undo && !s.injected[st.Fault] {
				continue
			}
			s.done[i] = true
			if st.Phase == Inject {
				s.injected[st.Fault] = true
				progress = true // its undo may be due too
			}
			out = append(out, st)
		}
	}
	return out
}

// Injected tells the schedule that fault i's injection finished at elapsed
// (a SIGKILL waits for the process to exit, a restart for readiness): its
// undo is due no earlier than elapsed + the fault's duration.
func (s *Schedule) Injected(i int, elapsed time.Duration) {
	for k, st := range s.steps {
		if st.Fault == i && st.Phase == Undo && !s.done[k] {
			if at := elapsed + s.faults[i].Duration.Duration; at > st.At {
				s.steps[k].At = at
			}
		}
	}
	// Keep done flags aligned with their steps while re-sorting.
	type pair struct {
		st   Step
		done bool
	}
	ps := make([]pair, len(s.steps))
	for k := range s.steps {
		ps[k] = pair{s.steps[k], s.done[k]}
	}
	sort.SliceStable(ps, func(a, b int) bool { return stepLess(ps[a].st, ps[b].st) })
	for k := range ps {
		s.steps[k], s.done[k] = ps[k].st, ps[k].done
	}
}

// Next is when the next pending step is due; false when none is left.
func (s *Schedule) Next() (time.Duration, bool) {
	for i, st := range s.steps {
		if !s.done[i] {
			return st.At, true
		}
	}
	return 0, false
}

// End is when the last step is due as laid out now.
func (s *Schedule) End() time.Duration {
	var end time.Duration
	for _, st := range s.steps {
		end = max(end, st.At)
	}
	return end
}
