package apiserver_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// The watch cache keeps only the newest events' replaced versions decoded
// (Options.WatchCacheDecodedEvents); older ones are kept as one byte form:
// their protobuf wire form when a protobuf watcher had asked for it
// ("wire"), else the value etcd stored ("stored"). A watch that resumes
// from far back gets from those bytes exactly what the writers were
// answered: every version, with its resourceVersion, in JSON and in
// protobuf, and the DELETED object at the deletion's version. Each form is
// held as it is, or compressed with a dictionary made from the first
// version compacted (Options.WatchCacheDictBytes).
func TestWatchFromCompactedHistory(t *testing.T) {
	for _, live := range []bool{false, true} {
		for _, compress := range []bool{false, true} {
			name := map[bool]string{false: "stored", true: "wire"}[live] + map[bool]string{false: "", true: "-compressed"}[compress]
			t.Run(name, func(t *testing.T) { testCompactedHistory(t, live, compress) })
		}
	}
}

func testCompactedHistory(t *testing.T, live, compress bool) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) {
		o.WatchCacheDecodedEvents = 1
		o.WatchCacheDictBytes = -1
		if compress {
			o.WatchCacheDictBytes = 1 // the first version compacted
		}
	})
	pb, js, _, _ := clients(t, api)
	ctx := ctxT(t)
	pods := js.CoreV1().Pods("default")
	start, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// written waits, with a live protobuf watcher, until it has the
	// change just written: its wire form is then made before the next
	// change compacts it.
	written := func() {}
	if live {
		lw, err := pb.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer lw.Stop()
		written = func() {
			t.Helper()
			select {
			case <-lw.ResultChan():
			case <-time.After(10 * time.Second):
				t.Fatal("the live watcher did not get the change")
			}
		}
	}
	type version struct {
		typ watch.EventType
		obj *corev1.Pod // nil: a deletion, checked against the last version
	}
	var want []version
	last := map[string]*corev1.Pod{}
	for i := range 6 {
		name := fmt.Sprintf("h%d", i)
		p, err := pods.Create(ctx, testPod(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written()
		want = append(want, version{watch.Added, p})
		for j := range 3 {
			p, err = pods.Patch(ctx, name, types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"labels":{"n":"%d"}}}`, j), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			written()
			want = append(want, version{watch.Modified, p})
		}
		last[name] = p
		if i%2 == 0 {
			if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			written()
			want = append(want, version{watch.Deleted, nil})
		}
	}
	// Current versions are compacted too once older than the window: a
	// list, a get and the next write read them from their stored bytes.
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 3 {
		t.Fatalf("list: %d pods, want 3", len(l.Items))
	}
	for i := range l.Items {
		same(t, "list "+l.Items[i].Name, last[l.Items[i].Name], &l.Items[i])
	}
	g, err := pb.CoreV1().Pods("default").Get(ctx, "h1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "get h1", last["h1"], g)
	p, err := pods.Patch(ctx, "h1", types.MergePatchType, []byte(`{"metadata":{"labels":{"late":"yes"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels["n"] != "2" || p.Labels["app"] != "web" || p.Labels["late"] != "yes" || rv(p.ResourceVersion) <= rv(last["h1"].ResourceVersion) {
		t.Fatalf("patch of a compacted pod: labels %v at %s (was %s)", p.Labels, p.ResourceVersion, last["h1"].ResourceVersion)
	}
	written()
	want = append(want, version{watch.Modified, p})

	readers := []struct {
		name string
		cs   *kubernetes.Clientset
	}{{"json", js}, {"protobuf", pb}}

	// A watcher selecting n in (0,1) sees each pod ADDED at n=0, MODIFIED
	// at n=1 and DELETED when n=2 leaves its selection: the n=1 version at
	// the n=2 patch's revision, made from compacted history.
	for _, c := range readers {
		w, err := c.cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion, LabelSelector: "n in (0,1)"})
		if err != nil {
			t.Fatal(err)
		}
		var n1 *corev1.Pod
		for _, v := range want {
			if v.obj == nil || v.obj.Labels["n"] == "" || v.obj.Labels["late"] != "" {
				continue
			}
			var ev watch.Event
			select {
			case ev = <-w.ResultChan():
			case <-time.After(10 * time.Second):
				t.Fatalf("%s selected watch: no event for %s n=%s", c.name, v.obj.Name, v.obj.Labels["n"])
			}
			got, _ := ev.Object.(*corev1.Pod)
			if got == nil {
				t.Fatalf("%s selected watch: %v %T", c.name, ev.Type, ev.Object)
			}
			switch v.obj.Labels["n"] {
			case "0":
				if ev.Type != watch.Added {
					t.Fatalf("%s selected watch: %v, want ADDED", c.name, ev.Type)
				}
				same(t, c.name+" selected ADDED", v.obj, got)
			case "1":
				if ev.Type != watch.Modified {
					t.Fatalf("%s selected watch: %v, want MODIFIED", c.name, ev.Type)
				}
				same(t, c.name+" selected MODIFIED", v.obj, got)
				n1 = v.obj
			case "2":
				if ev.Type != watch.Deleted {
					t.Fatalf("%s selected watch: %v, want DELETED", c.name, ev.Type)
				}
				gone := n1.DeepCopy()
				gone.ResourceVersion = v.obj.ResourceVersion
				same(t, c.name+" selected DELETED", gone, got)
			}
		}
		w.Stop()
	}

	for _, c := range readers {
		// Twice: the second reader decodes the compacted versions again.
		for round := range 2 {
			w, err := c.cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			var prevRV string
			for i, v := range want {
				var ev watch.Event
				select {
				case ev = <-w.ResultChan():
				case <-time.After(10 * time.Second):
					t.Fatalf("%s round %d: event %d of %d never came", c.name, round, i, len(want))
				}
				got, ok := ev.Object.(*corev1.Pod)
				if ev.Type != v.typ || !ok {
					t.Fatalf("%s round %d: event %d is %v %T, want %v", c.name, round, i, ev.Type, ev.Object, v.typ)
				}
				if v.obj != nil {
					same(t, fmt.Sprintf("%s round %d event %d", c.name, round, i), v.obj, got)
					prevRV = got.ResourceVersion
					continue
				}
				// A DELETED event carries the last version at the
				// deletion's revision.
				if rv(got.ResourceVersion) <= rv(prevRV) {
					t.Fatalf("%s: DELETED %s at %s, not after its last version %s", c.name, got.Name, got.ResourceVersion, prevRV)
				}
				lastV := last[got.Name].DeepCopy()
				lastV.ResourceVersion = got.ResourceVersion
				same(t, fmt.Sprintf("%s round %d DELETED %s", c.name, round, got.Name), runtime.Object(lastV), got)
			}
			w.Stop()
		}
	}

	// What the compacted versions hold: less than their byte forms when
	// compressed, exactly those otherwise.
	compacted := metric(t, api.URL, `kstep_watch_cache_compacted_bytes_total{resource="pods"}`)
	held := metric(t, api.URL, `kstep_watch_cache_compacted_held_bytes_total{resource="pods"}`)
	if compacted == 0 || (compress && held >= compacted) || (!compress && held != compacted) {
		t.Fatalf("compacted pods: %.0f bytes held as %.0f", compacted, held)
	}
	t.Logf("compacted pods: %.0f bytes held as %.0f", compacted, held)
}

func rv(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
