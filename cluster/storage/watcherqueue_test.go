package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// configMapCodec stores ConfigMaps as JSON: enough of a Codec for the
// cache's own tests.
type configMapCodec struct{}

func (configMapCodec) Decode(_ string, value []byte, rev int64) (runtime.Object, error) {
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(value, cm); err != nil {
		return nil, err
	}
	cm.ResourceVersion = strconv.FormatInt(rev, 10)
	return cm, nil
}

func (configMapCodec) DecodeProtobuf(msg []byte, rev int64) (runtime.Object, error) {
	cm := &corev1.ConfigMap{}
	if err := cm.Unmarshal(msg); err != nil {
		return nil, err
	}
	cm.ResourceVersion = strconv.FormatInt(rev, 10)
	return cm, nil
}

func (configMapCodec) Encode(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) }

func (configMapCodec) EncodeProtobuf(obj runtime.Object) ([]byte, error) {
	return obj.(*corev1.ConfigMap).Marshal()
}

func (configMapCodec) Bookmark(rev int64, _ bool) runtime.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatInt(rev, 10)}}
}

func (configMapCodec) Attrs(obj runtime.Object) storage.Attrs {
	cm := obj.(*corev1.ConfigMap)
	return storage.Attrs{Namespace: cm.Namespace, Labels: storage.PairsOf(cm.Labels),
		Fields: storage.PairsOf(map[string]string{"metadata.name": cm.Name, "metadata.namespace": cm.Namespace})}
}

// A watcher's queue grows with a burst up to WatcherBuffer items and holds
// nothing once drained; a watcher that falls further behind than that is
// closed (after what was queued) and counted.
func TestWatcherQueue(t *testing.T) {
	_, cli := testenv.Etcd(t)
	store := storage.NewStore(cli, nil)
	const buffer = 100
	metrics := storage.NewCacheMetrics(nil)
	cm := storage.NewCacher(store, storage.CacherConfig{Resource: "configmaps", Prefix: "/registry/configmaps/",
		Codec: configMapCodec{}, WatcherBuffer: buffer, Metrics: metrics})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go cm.Run(ctx)
	w, err := cm.Watch(ctx, storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	put := func(i int) {
		t.Helper()
		v, _ := json.Marshal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "default"}})
		if _, err := store.Create(ctx, fmt.Sprintf("/registry/configmaps/default/c%d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	// fill writes n objects from next on and waits until the cache has
	// them all (offered to the watcher, which reads nothing meanwhile).
	next := 0
	fill := func(n int) {
		t.Helper()
		for range n {
			put(next)
			next++
		}
		rev, err := store.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cm.WaitFor(ctx, rev); err != nil {
			t.Fatal(err)
		}
	}
	take := func(n, from int) {
		t.Helper()
		for i := range n {
			it, err := w.Next(ctx)
			if err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
			if got := it.Entry.Object().(*corev1.ConfigMap).Name; got != fmt.Sprintf("c%d", from+i) {
				t.Fatalf("item %d is %s, want c%d", i, got, from+i)
			}
		}
	}

	// A burst of exactly the bound is held, in order, and let go once
	// taken (a queue larger than a few dozen items is not kept).
	fill(buffer)
	if got := w.Pending(); got != buffer {
		t.Fatalf("%d pending after a burst of %d", got, buffer)
	}
	take(buffer, 0)
	if w.QueueCap() != 0 || w.Pending() != 0 {
		t.Fatalf("drained queue still holds %d slots, %d pending", w.QueueCap(), w.Pending())
	}
	// Small bursts reuse the queue.
	fill(3)
	take(3, buffer)

	// One more than the bound closes the watcher: it still gets what was
	// queued, then storage.ErrWatchClosed.
	from := next
	fill(buffer + 1)
	take(buffer, from)
	if _, err := w.Next(ctx); !errors.Is(err, storage.ErrWatchClosed) {
		t.Fatalf("after falling behind: %v, want storage.ErrWatchClosed", err)
	}
	if got := testutil.ToFloat64(metrics.Terminated.WithLabelValues("configmaps")); got != 1 {
		t.Fatalf("terminated watchers: %v, want 1", got)
	}
}
