package chaos

import (
	"strings"
	"testing"
	"time"
)

// evs makes a watcher's events: one pod changed at each revision.
func evs(rvs ...int64) []WatchEvent {
	out := make([]WatchEvent, len(rvs))
	for i, rv := range rvs {
		out[i] = WatchEvent{RV: rv, Type: "MODIFIED", Key: "ns/p"}
	}
	return out
}

func TestCheckWatchReliable(t *testing.T) {
	ref := map[string][]int64{WatchPods: {5, 7, 8, 12, 13}}
	for _, tc := range []struct {
		name string
		w    WatcherLog
		want int
		says string
	}{
		{"every event after its start", WatcherLog{Name: "w", Set: WatchPods, From: 6, Events: evs(7, 8, 12, 13)}, 0, ""},
		{"stopped early: nothing after its last is owed", WatcherLog{Name: "w", Set: WatchPods, From: 6, Events: evs(7, 8)}, 0, ""},
		{"one missed", WatcherLog{Name: "w", Set: WatchPods, From: 6, Events: evs(7, 12, 13)}, 1, "first 8"},
		{"two missed", WatcherLog{Name: "w", Set: WatchPods, From: 4, Events: evs(7, 13)}, 3, "3 changes"},
		{"could not resume", WatcherLog{Name: "w", Set: WatchPods, From: 6, Events: evs(7, 8), Relists: 1}, 1, "410 Gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := CheckWatchReliable([]WatcherLog{tc.w}, ref)
			if inv.Count != tc.want {
				t.Fatalf("count %d, want %d: %v", inv.Count, tc.want, inv.Detail)
			}
			if tc.says != "" && !strings.Contains(strings.Join(inv.Detail, "\n"), tc.says) {
				t.Errorf("detail %v does not say %q", inv.Detail, tc.says)
			}
		})
	}
	// Without etcd (external), the watchers' union is the reference.
	a := WatcherLog{Name: "a", Set: WatchPods, From: 6, Events: evs(7, 8, 12)}
	b := WatcherLog{Name: "b", Set: WatchPods, From: 6, Events: evs(7, 12)}
	inv := CheckWatchReliable([]WatcherLog{a, b}, nil)
	if inv.Count != 1 || !strings.Contains(strings.Join(inv.Detail, "\n"), "watcher b") || !strings.Contains(inv.Summary, "union") {
		t.Errorf("union: %+v, want b's gap at 8", inv)
	}
	if inv := CheckWatchReliable(nil, ref); inv.Checked {
		t.Error("checked without a watcher")
	}
}

func TestCheckWatchOrderedUnique(t *testing.T) {
	w := WatcherLog{Name: "w", From: 5, Events: evs(6, 9, 12)}
	if o, u := CheckWatchOrdered([]WatcherLog{w}), CheckWatchUnique([]WatcherLog{w}); !o.OK() || !u.OK() {
		t.Errorf("in order: %+v %+v", o, u)
	}
	back := WatcherLog{Name: "w", From: 5, Events: evs(6, 9, 7)}
	if o, u := CheckWatchOrdered([]WatcherLog{back}), CheckWatchUnique([]WatcherLog{back}); o.Count != 1 || !u.OK() {
		t.Errorf("backwards: ordered %+v, unique %+v", o, u)
	}
	twice := WatcherLog{Name: "w", From: 5, Events: evs(6, 9, 9)}
	if o, u := CheckWatchOrdered([]WatcherLog{twice}), CheckWatchUnique([]WatcherLog{twice}); o.Count != 1 || u.Count != 1 {
		t.Errorf("twice: ordered %+v, unique %+v", o, u)
	}
	// Two objects at one version would be two events of one transaction:
	// not a duplicate.
	two := WatcherLog{Name: "w", From: 5, Events: []WatchEvent{{RV: 6, Key: "a"}, {RV: 6, Key: "b"}}}
	if u := CheckWatchUnique([]WatcherLog{two}); !u.OK() {
		t.Errorf("two keys at one version: %+v", u)
	}
}

func TestCheckWatchBookmarkable(t *testing.T) {
	ref := map[string][]int64{WatchBeat: {10, 20, 30}}
	good := WatcherLog{Name: "b", Set: WatchBeat, From: 5, Events: evs(10, 20, 30),
		Bookmarks: []WatchBookmark{{RV: 15, After: 1}, {RV: 25, After: 2}},
		Starts:    []WatchStart{{From: 5}, {From: 25, FromBookmark: true}}}
	if inv := CheckWatchBookmarkable([]WatcherLog{good}, ref, nil); !inv.OK() {
		t.Errorf("good: %+v", inv)
	}
	behind := good
	behind.Bookmarks = []WatchBookmark{{RV: 15, After: 2}}
	if inv := CheckWatchBookmarkable([]WatcherLog{behind}, ref, nil); inv.Count != 1 || !strings.Contains(inv.Detail[0], "behind") {
		t.Errorf("a bookmark behind an event: %+v", inv)
	}
	missed := good
	missed.Events = evs(10, 20, 31)
	missed.Starts = []WatchStart{{From: 5}, {From: 25, FromBookmark: true}}
	if inv := CheckWatchBookmarkable([]WatcherLog{missed}, ref, nil); inv.Count != 1 || !strings.Contains(inv.Detail[0], "change at 30") {
		t.Errorf("resumed from a bookmark, missed the next change: %+v", inv)
	}
	if inv := CheckWatchBookmarkable([]WatcherLog{{Name: "x", Events: evs(1)}}, ref, nil); inv.Checked {
		t.Errorf("no bookmark at all: %+v, want not checked", inv)
	}
}

func TestCheckWatchResumable(t *testing.T) {
	w := WatcherLog{Name: "w", From: 5, Events: evs(6, 9, 12, 15)}
	for _, tc := range []struct {
		name string
		r    ResumeLog
		want int
	}{
		{"replays what followed", ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(9, 12)}, 0},
		{"replays more than it had to", ResumeLog{Watcher: "w", From: 6, Upto: 9, Events: evs(9, 12, 15)}, 0},
		{"410", ResumeLog{Watcher: "w", From: 6, Upto: 12, Gone: true}, 0},
		{"broken by a fault", ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(9), Err: "stream ended"}, 0},
		{"skips an event", ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(12)}, 1},
		{"an event the watcher never got", ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(9, 10)}, 1},
		{"did not get there", ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(9), TimedOut: true}, 1},
		{"another type", ResumeLog{Watcher: "w", From: 6, Upto: 9, Events: []WatchEvent{{RV: 9, Type: "DELETED", Key: "ns/p"}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, st := CheckWatchResumable([]WatcherLog{w}, []ResumeLog{tc.r}, 0, nil)
			if inv.Count != tc.want || st.Resumes != 1 {
				t.Errorf("count %d, want %d: %v (%+v)", inv.Count, tc.want, inv.Detail, st)
			}
		})
	}
	// One that did not get there while a fault disturbed the run is
	// counted, not judged.
	t0 := time.Now()
	stalled := ResumeLog{Watcher: "w", From: 6, Upto: 12, Events: evs(9), TimedOut: true, Start: t0, End: t0.Add(resumeWait)}
	if inv, st := CheckWatchResumable([]WatcherLog{w}, []ResumeLog{stalled}, 0, []Window{{From: t0.Add(time.Second), To: t0.Add(20 * time.Second)}}); !inv.OK() || st.Interrupted != 1 {
		t.Errorf("stalled during a fault: %+v %+v", inv, st)
	}
	if inv, _ := CheckWatchResumable([]WatcherLog{w}, nil, 3, nil); inv.Checked {
		t.Errorf("no resumption: %+v, want not checked", inv)
	}
}

func TestCheckWatchIdle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	faults := []Window{{From: t0.Add(10 * time.Second), To: t0.Add(30 * time.Second)}}
	quiet := WatcherLog{Name: "quiet-0", Set: WatchQuiet, NoBookmarks: true, LongestQuiet: 24 * time.Second}
	if inv := CheckWatchIdle([]WatcherLog{quiet}, faults); !inv.OK() || !strings.Contains(inv.Summary, "24s") {
		t.Errorf("never ended: %+v", inv)
	}
	// An apiserver killed by a fault ends its streams: excused.
	inFault := quiet
	inFault.Ends = []WatchEnd{{At: t0.Add(12 * time.Second), Quiet: 2 * time.Second, Err: "unexpected EOF"}}
	if inv := CheckWatchIdle([]WatcherLog{inFault}, faults); !inv.OK() {
		t.Errorf("ended in a fault's window: %+v", inv)
	}
	// Cut after the stall timeout while quiet, outside any fault: counted.
	cut := quiet
	cut.Ends = []WatchEnd{{At: t0.Add(50 * time.Second), Quiet: 10 * time.Second, Err: "stream error: INTERNAL_ERROR"},
		{At: t0.Add(70 * time.Second), Quiet: 10 * time.Second}}
	if inv := CheckWatchIdle([]WatcherLog{cut}, faults); inv.Count != 2 || !strings.Contains(inv.Detail[0], "INTERNAL_ERROR") || !strings.Contains(inv.Detail[1], "clean end") {
		t.Errorf("cut while quiet: %+v", inv)
	}
	// Watchers with bookmarks are not this check's: ended streams of theirs
	// count nothing, and without a watcher of its own it checked nothing.
	beat := WatcherLog{Name: "beat-0", Set: WatchBeat, Ends: cut.Ends}
	if inv := CheckWatchIdle([]WatcherLog{beat}, faults); inv.Checked || inv.Count != 0 {
		t.Errorf("only watchers with bookmarks: %+v, want not checked", inv)
	}
	// A run too short for a quiet span past the stall timeout says so.
	short := quiet
	short.LongestQuiet = 6 * time.Second
	if inv := CheckWatchIdle([]WatcherLog{short}, faults); !inv.OK() || len(inv.Detail) != 1 {
		t.Errorf("short run: %+v", inv)
	}
}
