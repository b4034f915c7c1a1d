package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func fault(action Action, at, dur time.Duration) Fault {
	return Fault{Action: action, At: Duration{Duration: at}, Duration: Duration{Duration: dur}}
}

func steps(ss []Step) string {
	var b []string
	for _, s := range ss {
		b = append(b, fmt.Sprintf("%v:%d:%v", s.At, s.Fault, s.Phase))
	}
	return strings.Join(b, " ")
}

func TestSchedule(t *testing.T) {
	s := NewSchedule([]Fault{
		fault(ActionKill, 10*time.Second, 5*time.Second),
		fault(ActionRestart, 30*time.Second, 0),
		fault(ActionPause, 15*time.Second, 2*time.Second), // starts as the first ends
	})
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{0, ""},
		{9 * time.Second, ""},
		{10 * time.Second, "10s:0:inject"},
		{10 * time.Second, ""}, // each step once
		{16 * time.Second, "15s:0:undo 15s:2:inject"},
		{40 * time.Second, "17s:2:undo 30s:1:inject"}, // restart has no undo
	} {
		if got := steps(s.Due(tc.at)); got != tc.want {
			t.Errorf("Due(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
	if _, ok := s.Next(); ok {
		t.Error("steps left after the end")
	}
}

func TestScheduleUndoAfterSlowInjection(t *testing.T) {
	s := NewSchedule([]Fault{fault(ActionKill, time.Second, 2*time.Second)})
	if got := steps(s.Due(time.Second)); got != "1s:0:inject" {
		t.Fatalf("Due = %q", got)
	}
	// The kill took 4 s to take effect: the actor stays down 2 s from then.
	s.Injected(0, 5*time.Second)
	if next, _ := s.Next(); next != 7*time.Second {
		t.Errorf("Next = %v, want 7s", next)
	}
	if got := steps(s.Due(6 * time.Second)); got != "" {
		t.Errorf("Due(6s) = %q, want nothing", got)
	}
	if got := steps(s.Due(7 * time.Second)); got != "7s:0:undo" {
		t.Errorf("Due(7s) = %q", got)
	}
}

func TestScheduleUndoNeverBeforeInject(t *testing.T) {
	s := NewSchedule([]Fault{fault(ActionPause, 0, 0)})
	got := steps(s.Due(0))
	if got != "0s:0:inject 0s:0:undo" {
		t.Errorf("Due(0) = %q, want inject then undo", got)
	}
}
