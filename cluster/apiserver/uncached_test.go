package apiserver_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func event(name, pod string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod, Namespace: "default"},
		Reason:         "Scheduled", Message: "bound", Type: corev1.EventTypeNormal}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10 s")
	}
	return watch.Event{}
}

func rvOf(t *testing.T, obj any) int64 {
	t.Helper()
	m, err := metav1Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func metav1Accessor(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// Events have no watch cache, as upstream's default has it: every verb
// reads etcd, and a watch is an etcd watch of the client's own with the
// watch cache's contract (types as the selector sees each change, resume
// from a version, the streaming list, bookmarks, 410 once compacted),
// through both the core and the events.k8s.io API, JSON and protobuf.
func TestEventsUncached(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for _, json := range []bool{false, true} {
		cfg := *e.api.Config
		name := "protobuf"
		if json {
			cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
			name = "json"
		}
		cs := kubernetes.NewForConfigOrDie(&cfg)
		t.Run(name, func(t *testing.T) {
			evs := cs.CoreV1().Events("default")
			first, err := evs.Create(ctx, event(name+"-a", "web-"+name), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// A get or a list at a version the client has seen, and a
			// list of any version, see it at once.
			got, err := evs.Get(ctx, first.Name, metav1.GetOptions{ResourceVersion: first.ResourceVersion})
			if err != nil || got.UID != first.UID {
				t.Fatalf("get at its version: %v %v", err, got)
			}
			for _, rv := range []string{"", "0", first.ResourceVersion} {
				l, err := evs.List(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "involvedObject.name=web-" + name})
				if err != nil || len(l.Items) != 1 || l.Items[0].Name != first.Name {
					t.Fatalf("list at %q: %v %v", rv, err, l)
				}
			}

			// A watch from the first version, selecting the pod: the
			// second Event is ADDED, its count change MODIFIED, a change
			// of its subject that leaves the selection DELETED, another
			// pod's Event nothing at all.
			sel := fields.OneTermEqualSelector("involvedObject.name", "web-"+name).String()
			w, err := evs.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, FieldSelector: sel})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if _, err := evs.Create(ctx, event(name+"-other", "db-"+name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			second, err := evs.Create(ctx, event(name+"-b", "web-"+name), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.Event).Name != second.Name {
				t.Fatalf("want ADDED %s, got %s %v", second.Name, ev.Type, ev.Object)
			}
			patched, err := evs.Patch(ctx, second.Name, types.MergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Modified || ev.Object.(*corev1.Event).Count != 2 || rvOf(t, ev.Object) != rvOf(t, patched) {
				t.Fatalf("want MODIFIED count 2 at %s, got %s %v", patched.ResourceVersion, ev.Type, ev.Object)
			}
			if _, err := evs.Patch(ctx, second.Name, types.MergePatchType, []byte(`{"involvedObject":{"name":"elsewhere"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Deleted || ev.Object.(*corev1.Event).InvolvedObject.Name != "web-"+name {
				t.Fatalf("want DELETED (left the selection, as last seen), got %s %v", ev.Type, ev.Object)
			}
			if err := evs.Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if ev := nextEvent(t, w); ev.Type != watch.Deleted || ev.Object.(*corev1.Event).Name != first.Name {
				t.Fatalf("want DELETED %s, got %s %v", first.Name, ev.Type, ev.Object)
			}

			// The streaming list: the current Events, then the bookmark
			// that ends them; then, idle, bookmarks (1 s in tests).
			sw, err := cs.EventsV1().Events("default").Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sw.Stop()
			initial := 0
			for {
				ev := nextEvent(t, sw)
				if ev.Type == watch.Bookmark {
					m, _ := metav1Accessor(ev.Object)
					if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
						t.Fatalf("first bookmark without %s", metav1.InitialEventsAnnotationKey)
					}
					break
				}
				if ev.Type != watch.Added {
					t.Fatalf("initial event %s", ev.Type)
				}
				initial++
			}
			if initial < 2 {
				t.Fatalf("%d initial events, want the namespace's Events (at least 2)", initial)
			}
			if ev := nextEvent(t, sw); ev.Type != watch.Bookmark {
				t.Fatalf("idle stream: want a BOOKMARK, got %s", ev.Type)
			}
		})
	}

	// Once compacted, a resume from before the compaction is 410 Gone.
	old, err := e.cs.CoreV1().Events("default").Create(ctx, event("old", "p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Events("default").Create(ctx, event("mid", "p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	last, err := e.cs.CoreV1().Events("default").Create(ctx, event("new", "p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.etcd.Compact(context.Background(), rvOf(t, last)); err != nil {
		t.Fatal(err)
	}
	w, err := e.cs.CoreV1().Events("default").Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
	if err == nil {
		ev := nextEvent(t, w)
		w.Stop()
		if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
			t.Fatalf("resume from a compacted version: want a 410 ERROR event, got %s %v", ev.Type, ev.Object)
		}
	} else if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("resume from a compacted version: %v, want 410", err)
	}
}
