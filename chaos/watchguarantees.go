package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// The six watch guarantees of etcd's robustness tests, checked at the
// Kubernetes watch (etcd's atomic is moot there: every write kstep's
// apiserver makes is one object in one etcd transaction, and the report
// says so rather than count it).
const (
	InvWatchOrdered      = "watch-ordered"      // resourceVersions strictly increase
	InvWatchUnique       = "watch-unique"       // no event twice
	InvWatchBookmarkable = "watch-bookmarkable" // a bookmark is never behind, a watch from it misses nothing
	InvWatchReliable     = "watch-reliable"     // no event between the first and the last delivered missing
	InvWatchResumable    = "watch-resumable"    // a watch restarted from a delivered version replays what followed
	// InvWatchIdle is kstep's own: a watch without bookmarks on a quiet
	// set is not ended while it waits (a write deadline meant for a
	// stalled client must not fire on an idle stream).
	InvWatchIdle = "watch-idle"
	// WatchAtomicNote is the report's word on the sixth.
	WatchAtomicNote = "watch-atomic: not counted: every write is one object in one etcd transaction, so no watch event can be split from another"
)

// The watched sets.
const (
	WatchPods = "pods" // every pod, busy
	// WatchBeat is one ConfigMap the engine changes every beatInterval, a
	// set quiet enough for the apiserver to send bookmarks between events.
	WatchBeat = "beat"
	// WatchQuiet is one ConfigMap the engine changes every quietEvery
	// beats, watched without bookmarks: its streams stay quiet for longer
	// than the apiservers' --watch-stall-timeout (10 s).
	WatchQuiet = "quiet"
)

// beatName is the beat's ConfigMap; beatLabel selects it.
const (
	beatName     = "beat"
	beatLabel    = "kstep.dev/beat"
	beatInterval = 6 * time.Second
	quietName    = "quiet"
	quietEvery   = 4
	// stallTimeout is the apiservers' default --watch-stall-timeout: a
	// quiet span longer than it is what watch-idle is about.
	stallTimeout = 10 * time.Second
)

// WatchEvent is one event a watcher got.
type WatchEvent struct {
	RV   int64  `json:"rv"`
	Type string `json:"type"`
	Key  string `json:"key"`
}

func eventOf(t watch.EventType, m metav1.Object, rv int64) WatchEvent {
	return WatchEvent{RV: rv, Type: string(t), Key: m.GetNamespace() + "/" + m.GetName()}
}

// WatchBookmark is one bookmark, after After events of the log.
type WatchBookmark struct {
	RV    int64 `json:"rv"`
	After int   `json:"after"`
}

// WatchEnd is the end of one of a watcher's streams before the end of the
// run: when, how long it had been quiet (nothing, bookmarks included,
// since its start or its last item), and the error it ended with, if any.
type WatchEnd struct {
	At    time.Time     `json:"at"`
	Quiet time.Duration `json:"quiet"`
	Err   string        `json:"err,omitempty"`
}

// WatchStart is one (re)start of a watcher's stream.
type WatchStart struct {
	From         int64 `json:"from"`
	FromBookmark bool  `json:"fromBookmark,omitempty"`
}

// ResumeLog is one resumption the watch-resumable invariant checks: a new
// watch from From, a version the watcher had delivered (Why says which),
// begun when the watcher had delivered up to Upto, with what it replayed.
type ResumeLog struct {
	Watcher string       `json:"watcher"`
	From    int64        `json:"from"`
	Why     string       `json:"why"`
	Upto    int64        `json:"upto"`
	Events  []WatchEvent `json:"events,omitempty"`
	// Gone is a 410 answer; Err a stream broken by something else (a
	// fault); TimedOut that Upto was not reached in resumeWait.
	Gone     bool   `json:"gone,omitempty"`
	Err      string `json:"err,omitempty"`
	TimedOut bool   `json:"timedOut,omitempty"`
	// Start and End bound it, for the fault windows.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Window is a span of the run a fault disturbed: from its injection to
// resumeWait after it was undone.
type Window struct{ From, To time.Time }

func (r ResumeLog) during(ws []Window) bool {
	for _, w := range ws {
		if r.Start.Before(w.To) && r.End.After(w.From) {
			return true
		}
	}
	return false
}

// WatcherLog is what one watcher that ran throughout saw: the
// resourceVersion it started from, every event and bookmark in order, its
// streams' starts, and any place it could not resume without a relist
// (410 Gone).
type WatcherLog struct {
	Name string `json:"name"`
	// Set is what it watches (WatchPods, WatchBeat).
	Set       string `json:"set"`
	APIServer int    `json:"apiserver"`
	// NoBookmarks: its watches ask for none (WatchQuiet's watchers).
	NoBookmarks bool            `json:"noBookmarks,omitempty"`
	From        int64           `json:"from"`
	Events      []WatchEvent    `json:"-"`
	Bookmarks   []WatchBookmark `json:"-"`
	Starts      []WatchStart    `json:"-"`
	// Ends are its streams' ends before the run's; LongestQuiet the
	// longest span a stream stayed quiet and then delivered an item.
	Ends         []WatchEnd    `json:"-"`
	LongestQuiet time.Duration `json:"longestQuiet,omitempty"`
	Relists      int           `json:"relists"`
}

// last is the resourceVersion of the last event delivered (From if none).
func (w WatcherLog) last() int64 {
	if n := len(w.Events); n > 0 {
		return w.Events[n-1].RV
	}
	return w.From
}

// resumeWait bounds one resumption; resumeQueue how many wait for one.
const (
	resumeWait  = 10 * time.Second
	resumeQueue = 8
)

// watchSet is how a watcher lists and watches its set.
type watchSet struct {
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func podSet(cs kubernetes.Interface) watchSet {
	return watchSet{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods("").List(ctx, o)
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods("").Watch(ctx, o)
		},
	}
}

// quietSet is the one ConfigMap quietName.
func quietSet(cs kubernetes.Interface) watchSet {
	sel := "metadata.name=" + quietName
	return watchSet{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return cs.CoreV1().ConfigMaps(probeNamespace).List(ctx, o)
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return cs.CoreV1().ConfigMaps(probeNamespace).Watch(ctx, o)
		},
	}
}

func beatSet(cs kubernetes.Interface) watchSet {
	sel := beatLabel + "=true"
	return watchSet{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return cs.CoreV1().ConfigMaps(probeNamespace).List(ctx, o)
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cs.CoreV1().ConfigMaps(probeNamespace).Watch(ctx, o)
		},
	}
}

// resumeSample asks for a resumption from a delivered version.
type resumeSample struct {
	from int64
	why  string
}

// watcher is one throughout-watcher and its resumer.
type watcher struct {
	log *WatcherLog
	// set is the watcher's, resumeSet the same set through a client of its
	// own (a User-Agent of its own: a failpoint aimed at the watcher's
	// stream does not hit the resumptions').
	set, resumeSet watchSet
	every          int
	samples        chan resumeSample
	// lastRV is the last event's resourceVersion, for the resumer and for
	// a fault's sample.
	lastRV  atomic.Int64
	skipped atomic.Int64
	mu      sync.Mutex
	resumes []ResumeLog
}

func newWatcher(log *WatcherLog, set, resumeSet watchSet, every int) *watcher {
	return &watcher{log: log, set: set, resumeSet: resumeSet, every: every, samples: make(chan resumeSample, resumeQueue)}
}

// sample queues a resumption; one that finds the queue full is counted,
// not waited for.
func (w *watcher) sample(from int64, why string) {
	select {
	case w.samples <- resumeSample{from: from, why: why}:
	default:
		w.skipped.Add(1)
	}
}

// run lists, then watches from the list's version until ctx ends,
// resuming from the last version it saw (an event's or a bookmark's)
// whenever its stream ends; a resume refused with 410 ends it (Relists).
// onObject, if set, gets every listed and watched object.
func (w *watcher) run(ctx context.Context, onObject func(obj runtime.Object, deleted bool), ready chan<- struct{}) {
	out := w.log
	var rv string
	for ctx.Err() == nil {
		l, err := w.set.list(ctx, metav1.ListOptions{})
		if err == nil {
			var lm metav1.ListInterface
			if lm, err = meta.ListAccessor(l); err == nil {
				rv = lm.GetResourceVersion()
				out.From, _ = strconv.ParseInt(rv, 10, 64)
				w.lastRV.Store(out.From)
				if onObject != nil {
					objs, _ := meta.ExtractList(l)
					for _, o := range objs {
						onObject(o, false)
					}
				}
				break
			}
		}
		sleep(ctx, 200*time.Millisecond)
	}
	close(ready)
	fromBookmark := false
	for ctx.Err() == nil {
		n, _ := strconv.ParseInt(rv, 10, 64)
		w.mu.Lock()
		out.Starts = append(out.Starts, WatchStart{From: n, FromBookmark: fromBookmark})
		w.mu.Unlock()
		s, err := w.set.watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: !out.NoBookmarks})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				out.Relists++
				return
			}
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		lastItem, endErr := time.Now(), ""
		for ev := range s.ResultChan() {
			if quiet := time.Since(lastItem); quiet > out.LongestQuiet && ev.Type != watch.Error {
				w.mu.Lock()
				out.LongestQuiet = quiet
				w.mu.Unlock()
			}
			lastItem = time.Now()
			if ev.Type == watch.Error {
				if st, ok := ev.Object.(*metav1.Status); ok && st.Code == 410 {
					out.Relists++
					s.Stop()
					return
				}
				endErr = fmt.Sprint(apierrors.FromObject(ev.Object))
				break
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			rv = m.GetResourceVersion()
			n, _ := strconv.ParseInt(rv, 10, 64)
			w.mu.Lock()
			if ev.Type == watch.Bookmark {
				out.Bookmarks = append(out.Bookmarks, WatchBookmark{RV: n, After: len(out.Events)})
				w.mu.Unlock()
				fromBookmark = true
				w.sample(n, "bookmark")
				continue
			}
			fromBookmark = false
			out.Events = append(out.Events, eventOf(ev.Type, m, n))
			count := len(out.Events)
			w.mu.Unlock()
			w.lastRV.Store(n)
			if onObject != nil {
				onObject(ev.Object, ev.Type == watch.Deleted)
			}
			if count%w.every == 0 {
				w.sample(n, fmt.Sprintf("event %d", count))
			}
		}
		s.Stop()
		if ctx.Err() == nil {
			w.mu.Lock()
			out.Ends = append(out.Ends, WatchEnd{At: time.Now(), Quiet: time.Since(lastItem), Err: endErr})
			w.mu.Unlock()
		}
	}
}

// resume serves the samples until ctx ends: each a new watch from the
// sample's version, read until it has replayed what the watcher had
// delivered when it began.
func (w *watcher) resume(ctx context.Context) {
	for {
		var s resumeSample
		select {
		case <-ctx.Done():
			return
		case s = <-w.samples:
		}
		r := ResumeLog{Watcher: w.log.Name, From: s.from, Why: s.why, Upto: max(w.lastRV.Load(), s.from), Start: time.Now()}
		rctx, cancel := context.WithTimeout(ctx, resumeWait)
		st, err := w.resumeSet.watch(rctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(s.from, 10)})
		switch {
		case err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)):
			r.Gone = true
		case err != nil:
			r.Err = err.Error()
		default:
			r.read(rctx, st)
			st.Stop()
		}
		cancel()
		r.End = time.Now()
		if ctx.Err() != nil && r.Err != "" {
			return // cut short by the end of the run
		}
		if ctx.Err() != nil && r.TimedOut {
			return
		}
		w.mu.Lock()
		w.resumes = append(w.resumes, r)
		w.mu.Unlock()
	}
}

func (r *ResumeLog) read(ctx context.Context, st watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			r.TimedOut = true
			return
		case ev, ok := <-st.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					r.TimedOut = true
				} else {
					r.Err = "stream ended"
				}
				return
			}
			if ev.Type == watch.Error {
				if s, ok := ev.Object.(*metav1.Status); ok && s.Code == 410 {
					r.Gone = true
				} else {
					r.Err = fmt.Sprintf("error event: %v", ev.Object)
				}
				return
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			n, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			r.Events = append(r.Events, eventOf(ev.Type, m, n))
			if n >= r.Upto {
				return
			}
		}
	}
}

// faultSample asks every watcher for a resumption from its last delivered
// version, at a fault.
func faultSample(ws []*watcher, fault string) {
	for _, w := range ws {
		w.sample(w.lastRV.Load(), "fault "+fault)
	}
}

// beat changes the beat ConfigMap every beatInterval, and the quiet one
// every quietEvery beats, until ctx ends.
func beat(ctx context.Context, cs kubernetes.Interface, labels map[string]string) {
	l := map[string]string{beatLabel: "true"}
	for k, v := range labels {
		l[k] = v
	}
	put := func(name string, n int) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: probeNamespace, Labels: labels}, Data: map[string]string{"n": strconv.Itoa(n)}}
		if name == beatName {
			cm.Labels = l
		}
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := cs.CoreV1().ConfigMaps(probeNamespace).Update(wctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, _ = cs.CoreV1().ConfigMaps(probeNamespace).Create(wctx, cm, metav1.CreateOptions{})
		}
		cancel()
	}
	for n := 0; ctx.Err() == nil; n++ {
		put(beatName, n)
		if n%quietEvery == 0 {
			put(quietName, n/quietEvery)
		}
		sleep(ctx, beatInterval)
	}
}

// WatchStats are the watch guarantees' figures for the report.
type WatchStats struct {
	Watchers  int `json:"watchers"`
	Events    int `json:"events"`
	Bookmarks int `json:"bookmarks"`
	Restarts  int `json:"restarts"`
	// Resumes are the resumptions checked, Gone those answered 410,
	// Interrupted those a fault broke, Skipped those not made (the queue
	// was full).
	Resumes     int `json:"resumes"`
	Gone        int `json:"gone"`
	Interrupted int `json:"interrupted"`
	Skipped     int `json:"skipped"`
}

// CheckWatchIdle: no stream of a watcher without bookmarks ended outside
// the faults' windows. Such a watcher follows the quiet set: its streams
// wait longer than the apiservers' stall timeout between events, and
// nothing but a fault (or the server's own timeout, 30 minutes at least,
// longer than a run) may end them. The summary's longest quiet span says
// whether the run had quiet to judge.
func CheckWatchIdle(ws []WatcherLog, faults []Window) Invariant {
	inv := Invariant{Name: InvWatchIdle}
	n, ends := 0, 0
	var longest time.Duration
	for _, w := range ws {
		if !w.NoBookmarks {
			continue
		}
		n++
		longest = max(longest, w.LongestQuiet)
		for _, e := range w.Ends {
			ends++
			if (ResumeLog{Start: e.At, End: e.At}).during(faults) {
				continue
			}
			what := "a clean end"
			if e.Err != "" {
				what = e.Err
			}
			inv.add("watcher %s: its stream ended at %s after %v quiet, outside any fault: %s", w.Name, e.At.Format(time.TimeOnly), e.Quiet.Round(time.Millisecond), what)
		}
	}
	inv.Checked = n > 0
	inv.Summary = fmt.Sprintf("%d watchers without bookmarks, longest quiet span delivered after %v (stall timeout %v), %d streams ended, %d outside a fault",
		n, longest.Round(time.Millisecond), stallTimeout, ends, inv.Count)
	if n > 0 && longest <= stallTimeout {
		inv.Detail = append(inv.Detail, fmt.Sprintf("no stream stayed quiet past %v and then delivered (a run shorter than %d beats): only the ends were judged", stallTimeout, quietEvery))
	}
	return inv
}

// CheckWatchOrdered: each watcher's resourceVersions strictly increase.
func CheckWatchOrdered(ws []WatcherLog) Invariant {
	inv := Invariant{Name: InvWatchOrdered, Checked: len(ws) > 0}
	n := 0
	for _, w := range ws {
		last := w.From
		for _, e := range w.Events {
			n++
			if e.RV <= last {
				inv.add("watcher %s: %s %s at resourceVersion %d after %d", w.Name, e.Type, e.Key, e.RV, last)
			}
			last = max(last, e.RV)
		}
	}
	inv.Summary = fmt.Sprintf("%d watchers, %d events, %d out of order", len(ws), n, inv.Count)
	return inv
}

// CheckWatchUnique: no watcher got one event (object and version) twice.
func CheckWatchUnique(ws []WatcherLog) Invariant {
	inv := Invariant{Name: InvWatchUnique, Checked: len(ws) > 0}
	n := 0
	for _, w := range ws {
		seen := make(map[WatchEvent]bool, len(w.Events))
		for _, e := range w.Events {
			n++
			k := WatchEvent{RV: e.RV, Key: e.Key}
			if seen[k] {
				inv.add("watcher %s: %s at resourceVersion %d delivered twice", w.Name, e.Key, e.RV)
			}
			seen[k] = true
		}
	}
	inv.Summary = fmt.Sprintf("%d watchers, %d events, %d duplicates", len(ws), n, inv.Count)
	return inv
}

// CheckWatchReliable: every change of a watcher's set between its start
// and the last event it got was delivered. ref is, by set, the reference:
// etcd's history of the set's revisions (ascending); a set without one
// (an external cluster: etcd is not reachable) is judged against the
// union of what every watcher of the set got, which catches an event one
// watcher missed that another saw.
func CheckWatchReliable(ws []WatcherLog, ref map[string][]int64) Invariant {
	inv := Invariant{Name: InvWatchReliable, Checked: len(ws) > 0}
	union := map[string][]int64{}
	for set := range setsOf(ws) {
		if _, ok := ref[set]; ok {
			continue
		}
		seen := map[int64]bool{}
		for _, w := range ws {
			if w.Set == set {
				for _, e := range w.Events {
					seen[e.RV] = true
				}
			}
		}
		union[set] = slices.Sorted(maps.Keys(seen))
	}
	against := 0
	for _, w := range ws {
		revs, fromEtcd := ref[w.Set]
		if !fromEtcd {
			revs = union[w.Set]
		}
		against = max(against, len(revs))
		if w.Relists > 0 {
			inv.add("watcher %s: could not resume %d time(s) (410 Gone): events in between unseen", w.Name, w.Relists)
		}
		seen := make(map[int64]bool, len(w.Events))
		for _, e := range w.Events {
			seen[e.RV] = true
		}
		last := w.last()
		missing, first := 0, int64(0)
		for _, r := range revs {
			if r > w.From && r <= last && !seen[r] {
				if missing == 0 {
					first = r
				}
				missing++
			}
		}
		if missing > 0 {
			inv.Count += missing - 1
			what := "etcd's history"
			if !fromEtcd {
				what = "what the other watchers of " + w.Set + " got"
			}
			inv.add("watcher %s: %d changes of %s never delivered (first %d)", w.Name, missing, what, first)
		}
	}
	src := "etcd's history"
	if len(union) > 0 {
		src = "the watchers' union (etcd not reachable)"
	}
	inv.Summary = fmt.Sprintf("%d watchers against %s (%d changes), %d missing", len(ws), src, against, inv.Count)
	return inv
}

func setsOf(ws []WatcherLog) map[string]bool {
	s := map[string]bool{}
	for _, w := range ws {
		s[w.Set] = true
	}
	return s
}

// CheckWatchBookmarkable: no bookmark is behind an event its watcher had
// already got, and a stream resumed from a bookmark's version missed
// nothing (the first change of the set after it, by ref as in
// CheckWatchReliable, is the next event delivered). Resumptions from
// bookmarks are checked by watch-resumable and counted here.
func CheckWatchBookmarkable(ws []WatcherLog, ref map[string][]int64, resumes []ResumeLog) Invariant {
	inv := Invariant{Name: InvWatchBookmarkable, Checked: len(ws) > 0}
	bookmarks, restarts := 0, 0
	for _, w := range ws {
		for _, b := range w.Bookmarks {
			bookmarks++
			if b.After > 0 && b.After <= len(w.Events) && b.RV < w.Events[b.After-1].RV {
				inv.add("watcher %s: bookmark at %d behind the event at %d already delivered", w.Name, b.RV, w.Events[b.After-1].RV)
			}
		}
		revs, ok := ref[w.Set]
		if !ok {
			continue
		}
		for _, s := range w.Starts {
			if !s.FromBookmark {
				continue
			}
			restarts++
			next := int64(0)
			for _, r := range revs {
				if r > s.From {
					next = r
					break
				}
			}
			if next == 0 || next > w.last() {
				continue // nothing changed after it while the watcher ran
			}
			if !delivered(w.Events, next) {
				inv.add("watcher %s: resumed from bookmark %d, the change at %d never delivered", w.Name, s.From, next)
			}
		}
	}
	fromBookmarks := 0
	for _, r := range resumes {
		if r.Why == "bookmark" {
			fromBookmarks++
		}
	}
	inv.Summary = fmt.Sprintf("%d bookmarks, none behind: %v; %d streams resumed from one; %d resumptions from one (watch-resumable)",
		bookmarks, inv.Count == 0, restarts, fromBookmarks)
	if bookmarks == 0 {
		inv.Checked = false
		inv.Detail = append(inv.Detail, "no watcher got a bookmark: nothing to check")
	}
	return inv
}

func delivered(evs []WatchEvent, rv int64) bool {
	lo, hi := 0, len(evs)
	for lo < hi {
		m := (lo + hi) / 2
		if evs[m].RV < rv {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(evs) && evs[lo].RV == rv
}

// CheckWatchResumable: every resumption replayed exactly the watcher's own
// events after its version (object, type and version, in order), up to
// the last the watcher had delivered when it began; a 410 is allowed (the
// version left the watch cache's window: compaction is held during a
// run) and counted; one a fault broke, or that did not get there while a
// fault disturbed the run (faults), is counted, not judged on what it did
// not get.
func CheckWatchResumable(ws []WatcherLog, resumes []ResumeLog, skipped int, faults []Window) (Invariant, WatchStats) {
	inv := Invariant{Name: InvWatchResumable, Checked: len(resumes) > 0}
	by := map[string]WatcherLog{}
	for _, w := range ws {
		by[w.Name] = w
	}
	var st WatchStats
	st.Skipped = skipped
	for _, r := range resumes {
		st.Resumes++
		w := by[r.Watcher]
		if r.Gone {
			st.Gone++
			continue
		}
		// What the watcher got after From.
		i := 0
		for i < len(w.Events) && w.Events[i].RV <= r.From {
			i++
		}
		want := w.Events[i:]
		bad := false
		for j, e := range r.Events {
			if j >= len(want) {
				if e.RV <= w.last() {
					inv.add("resume of %s from %d (%s): %s %s at %d, which the watcher never got", r.Watcher, r.From, r.Why, e.Type, e.Key, e.RV)
					bad = true
				}
				break
			}
			if e != want[j] {
				inv.add("resume of %s from %d (%s): event %d is %s %s at %d, the watcher got %s %s at %d", r.Watcher, r.From, r.Why, j+1,
					e.Type, e.Key, e.RV, want[j].Type, want[j].Key, want[j].RV)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		if r.Err != "" {
			st.Interrupted++
			continue
		}
		got := r.From
		if n := len(r.Events); n > 0 {
			got = r.Events[n-1].RV
		}
		if got < r.Upto && r.TimedOut && r.during(faults) {
			st.Interrupted++
			continue
		}
		if got < r.Upto && r.TimedOut && r.during(faults) {
			st.Interrupted++
			continue
		}
		if got < r.Upto && r.TimedOut {
			inv.add("resume of %s from %d (%s): replayed up to %d in %v, the watcher had %d", r.Watcher, r.From, r.Why, got, resumeWait, r.Upto)
		}
	}
	inv.Summary = fmt.Sprintf("%d resumptions (%d answered 410, %d broken by a fault, %d not made: queue full), %d replayed wrong",
		st.Resumes, st.Gone, st.Interrupted, st.Skipped, inv.Count)
	if !inv.Checked {
		inv.Detail = append(inv.Detail, "no resumption was made: nothing to check")
	}
	return inv, st
}
