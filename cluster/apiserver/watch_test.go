package apiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// seen is what an informer's handlers observed, in order.
type seen struct {
	mu   sync.Mutex
	evs  []string // "ADDED p1 17"
	rvs  []int64
	errs []string
}

func (s *seen) add(kind string, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			p, _ = d.Obj.(*corev1.Pod)
			kind = "DELETED-UNKNOWN"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
	if n := len(s.rvs); n > 0 && rv <= s.rvs[n-1] {
		s.errs = append(s.errs, fmt.Sprintf("%s %s rv %d after %d", kind, p.Name, rv, s.rvs[n-1]))
	}
	s.rvs = append(s.rvs, rv)
	s.evs = append(s.evs, fmt.Sprintf("%s %s %d", kind, p.Name, rv))
}

func (s *seen) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.evs...)
}

func watchPods(t *testing.T, cs kubernetes.Interface, stop chan struct{}) *seen {
	s := &seen{}
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.add("ADDED", o) },
		UpdateFunc: func(_, o any) { s.add("MODIFIED", o) },
		DeleteFunc: func(o any) { s.add("DELETED", o) },
	})
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("informer never synced")
	}
	return s
}

// writeLog drives creates, updates and deletes and returns the events they
// must cause, in resourceVersion order.
func writeLog(t *testing.T, ctx context.Context, cs kubernetes.Interface, n int) []string {
	pods := cs.CoreV1().Pods("default")
	var log []string
	for i := range n {
		name := fmt.Sprintf("w%03d", i)
		p, err := pods.Create(ctx, testPod(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, "ADDED "+name+" "+p.ResourceVersion)
		p.Labels["v"] = "2"
		p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, "MODIFIED "+name+" "+p.ResourceVersion)
		if i%3 == 0 {
			// The DELETED event carries the deletion's revision.
			if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			log = append(log, "DELETED "+name+" ?")
		}
	}
	return log
}

func matchLog(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("informer saw %d events, writer caused %d\nwant %v\ngot  %v", len(got), len(want), want, got)
	}
	for i := range want {
		w, g := want[i], got[i]
		if len(w) > 2 && w[len(w)-1] == '?' {
			g = g[:len(g)-len(g[lastSpace(g):])] + " ?"
		}
		if w != g {
			t.Fatalf("event %d: want %q got %q", i, want[i], got[i])
		}
	}
}

func lastSpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return i
		}
	}
	return 0
}

func TestInformerSeesEveryChangeOnceInOrder(t *testing.T) {
	url, _ := testenv.Etcd(t)
	a0 := testenv.StartAPIServer(t, url, nil)
	a1 := testenv.StartAPIServer(t, url, nil)
	writer, _ := kubernetes.NewForConfig(a0.Config)
	reader, _ := kubernetes.NewForConfig(a1.Config)
	stop := make(chan struct{})
	defer close(stop)
	s := watchPods(t, reader, stop)
	want := writeLog(t, ctxT(t), writer, 40)
	deadline := time.Now().Add(20 * time.Second)
	for len(s.snapshot()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // anything extra would show now
	matchLog(t, want, s.snapshot())
	if len(s.errs) > 0 {
		t.Fatalf("out of order: %v", s.errs)
	}
}

// A watch from a resourceVersion the cache no longer holds gets 410 Gone
// (reason Expired), and a reflector that gets it relists.
func TestWatchExpiredAndReflectorRelists(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.WatchCacheSize = 16 })
	cs, _ := kubernetes.NewForConfig(api.Config)
	ctx := ctxT(t)
	first, err := cs.CoreV1().Pods("default").Create(ctx, testPod("first"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Pods("default").Patch(ctx, "first", "application/merge-patch+json", []byte(fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i)), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	w.Stop()
	if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Fatalf("want an ERROR event with 410 Expired, got %v %v", ev.Type, ev.Object)
	}

	// A reflector whose watch resumes from that stale version relists. Its
	// first sync (a streaming list, or a list) is cut short after the
	// initial events so that it resumes with a plain watch, which is then
	// pointed at the stale version.
	var syncs atomic.Int32
	injected := false
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			syncs.Add(1)
			return cs.CoreV1().Pods("default").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				n := syncs.Add(1)
				w, err := cs.CoreV1().Pods("default").Watch(ctx, o)
				if err != nil || n > 1 {
					return w, err
				}
				return endAfterInitialEvents(w), nil
			}
			if !injected {
				injected = true
				o.ResourceVersion = first.ResourceVersion
			}
			return cs.CoreV1().Pods("default").Watch(ctx, o)
		},
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflector(lw, &corev1.Pod{}, store, 0)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.RunWithContext(rctx)
	deadline := time.Now().Add(20 * time.Second)
	for syncs.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !injected || syncs.Load() < 2 {
		t.Fatalf("reflector did not relist after 410 (stale watch sent: %v, syncs: %d)", injected, syncs.Load())
	}
	if _, ok, _ := store.GetByKey("default/first"); !ok {
		t.Fatal("relisted store lacks the pod")
	}
}

// Many watchers of one resource cost one etcd watch: read etcd's own gauge.
func TestWatchersShareOneEtcdWatch(t *testing.T) {
	e := newEnv(t)
	// A cache is ready once listed; its etcd watch opens a moment later.
	// Count once every cache's watch is open: the gauge holds still.
	before := etcdWatchers(t)
	for stable := 0; stable < 5; time.Sleep(100 * time.Millisecond) {
		if now := etcdWatchers(t); now == before {
			stable++
		} else {
			before, stable = now, 0
		}
	}
	var resps []*http.Response
	for range 200 {
		resp, err := http.Get(e.api.URL + "/api/v1/pods?watch=true&resourceVersion=0")
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	defer func() {
		for _, r := range resps {
			r.Body.Close()
		}
	}()
	ctx := ctxT(t)
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, testPod("fan"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Every watcher gets the event.
	for i, r := range resps {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.NewDecoder(bufio.NewReader(r.Body)).Decode(&ev); err != nil || ev.Type != "ADDED" {
			t.Fatalf("watcher %d: %v %s", i, err, ev.Type)
		}
	}
	if after := etcdWatchers(t); after != before {
		t.Fatalf("etcd watchers went from %v to %v with 200 client watches", before, after)
	}
}

func etcdWatchers(t *testing.T) float64 {
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_debugging_mvcc_watcher_total" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("etcd_debugging_mvcc_watcher_total not found")
	return 0
}

// Watch semantics the informers rely on: filters that start or stop
// matching see ADDED/DELETED, bookmarks arrive, a watch-list ends its
// initial events with the annotated bookmark.
func TestWatchSemantics(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1", AllowWatchBookmarks: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Target: corev1.ObjectReference{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	var types []watch.EventType
	timeout := time.After(10 * time.Second)
	for len(types) < 3 {
		select {
		case ev := <-w.ResultChan():
			types = append(types, ev.Type)
		case <-timeout:
			t.Fatalf("events so far: %v", types)
		}
	}
	sort.Slice(types, func(i, j int) bool { return false })
	if types[0] != watch.Added || types[1] != watch.Deleted || types[2] != watch.Bookmark {
		t.Fatalf("want ADDED (bound to n1), DELETED, BOOKMARK; got %v", types)
	}

	// Streaming list: initial ADDED events, then the initial-events-end bookmark.
	if _, err := pods.Create(ctx, testPod("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	send := true
	wl, err := pods.Watch(ctx, metav1.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Stop()
	ev := <-wl.ResultChan()
	if ev.Type != watch.Added || ev.Object.(*corev1.Pod).Name != "b" {
		t.Fatalf("first: %v", ev)
	}
	ev = <-wl.ResultChan()
	if ev.Type != watch.Bookmark || ev.Object.(*corev1.Pod).Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("second: want the initial-events-end bookmark, got %v %v", ev.Type, ev.Object)
	}
}

// endAfterInitialEvents passes a streaming list's events through and ends
// the watch after its initial-events-end bookmark.
func endAfterInitialEvents(w watch.Interface) watch.Interface {
	ch := make(chan watch.Event)
	go func() {
		defer close(ch)
		defer w.Stop()
		for ev := range w.ResultChan() {
			ch <- ev
			if ev.Type == watch.Bookmark {
				if p, ok := ev.Object.(*corev1.Pod); ok && p.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					// Outlive the reflector's "very short watch" guard, so
					// that it resumes with a plain watch rather than relists.
					time.Sleep(1500 * time.Millisecond)
					return
				}
			}
		}
	}()
	return watch.NewProxyWatcher(ch)
}

// After etcd compacts, reads and watches from before the compaction get 410
// Expired: an exact list, and a watch on an apiserver whose cache started
// after the compaction (its history cannot reach back past it).
func TestCompactedResourceVersion(t *testing.T) {
	url, etcdCli := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs, _ := kubernetes.NewForConfig(api.Config)
	ctx := ctxT(t)
	first, err := cs.CoreV1().Pods("default").Create(ctx, testPod("old"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := cs.CoreV1().Pods("default").Patch(ctx, "old", "application/merge-patch+json", []byte(fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i)), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	if _, err := etcdCli.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("exact list at a compacted revision: want 410, got %v", err)
	}
	fresh := testenv.StartAPIServer(t, url, nil)
	cs2, _ := kubernetes.NewForConfig(fresh.Config)
	w, err := cs2.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Fatalf("watch from a compacted revision: want ERROR 410, got %v %v", ev.Type, ev.Object)
	}
	// A version after the compaction resumes fine on the fresh apiserver.
	w2, err := cs2.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if _, err := cs.CoreV1().Pods("default").Patch(ctx, "old", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"n":"after"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w2.ResultChan():
		if ev.Type != watch.Modified {
			t.Fatalf("resume after compaction: %v %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after resuming")
	}
}

// TestIdleWatchIsFlushedAtOnce: a watch stream with nothing more queued is
// flushed as soon as an event is written, however recently it was flushed
// last. The flush interval is set far above the test's ceiling, so a stream
// that waited out the interval (a lone event arriving soon after the
// previous flush) fails it.
func TestIdleWatchIsFlushedAtOnce(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.WatchFlushInterval = time.Minute })
	cs, err := kubernetes.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	pods := cs.CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const ceiling = 5 * time.Second // generous; the interval is a minute
	for i := range 5 {
		name := fmt.Sprintf("flush-%d", i)
		start := time.Now()
		if _, err := pods.Create(ctx, testPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if p, ok := ev.Object.(*corev1.Pod); !ok || ev.Type != watch.Added || p.Name != name {
				t.Fatalf("event %d: %v %v", i, ev.Type, ev.Object)
			}
			t.Logf("event %d delivered %v after its create began", i, time.Since(start))
		case <-time.After(ceiling):
			t.Fatalf("event %d not delivered within %v: the idle stream waited for the flush interval", i, ceiling)
		}
	}
}
