package storage_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// The watch cache keeps decoded only as many of its newest events as
// CacherConfig.DecodedBytes of stored bytes allow, however many
// DecodedEvents would: updates of a large object (thousands of managers'
// managed fields) are held as bytes past that, not as decoded objects. The
// newest event stays decoded whatever its size.
func TestCacherDecodedBytesBound(t *testing.T) {
	_, cli := testenv.Etcd(t)
	store := storage.NewStore(cli, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "/registry/configmaps/default/big"
	value := func(i int) []byte {
		// Every version the same size: the data's value only changes.
		v, _ := json.Marshal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
			Data: map[string]string{"k": strings.Repeat(string(rune('a'+i%26)), 10<<10)}})
		return v
	}
	size := int64(len(value(0)))
	const keep, updates = 10, 40
	// An update's event carries two versions: keep of them fit, with
	// half a version to spare.
	cm := storage.NewCacher(store, storage.CacherConfig{Resource: "configmaps", Prefix: "/registry/configmaps/",
		Codec: configMapCodec{}, DecodedEvents: 1000, DecodedBytes: keep*2*size + size/2, DictBytes: -1})
	go cm.Run(ctx)
	created, err := store.Create(ctx, key, value(0))
	if err != nil {
		t.Fatal(err)
	}
	rev := created
	for i := 1; i <= updates; i++ {
		if rev, _, err = store.Update(ctx, key, value(i), rev); err != nil {
			t.Fatal(err)
		}
	}
	if err := cm.WaitFor(ctx, rev); err != nil {
		t.Fatal(err)
	}
	w, err := cm.Watch(ctx, storage.WatchOptions{FromRV: created})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var decoded []bool
	for range updates {
		it, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, it.Entry.Decoded())
	}
	// The newest keep updates' versions are decoded, every older one
	// compacted (the version an event replaced is compacted with it).
	for i, d := range decoded {
		if want := i >= updates-keep; d != want {
			t.Fatalf("update %d of %d: decoded %v, want %v (decoded: %v)", i+1, updates, d, want, decoded)
		}
	}

	// One version larger than the bound stays decoded while it is the
	// newest.
	huge, _ := json.Marshal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
		Data: map[string]string{"k": strings.Repeat("z", int(keep*2*size))}})
	if rev, _, err = store.Update(ctx, key, huge, rev); err != nil {
		t.Fatal(err)
	}
	if err := cm.WaitFor(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if e, ok := cm.Get(key); !ok || !e.Decoded() {
		t.Fatalf("the newest version, larger than the bound, is not kept decoded (found %v)", ok)
	}
}
