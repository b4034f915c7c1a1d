package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func TestStoreTransactions(t *testing.T) {
	_, cli := testenv.Etcd(t)
	s := storage.NewStore(cli, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "/registry/things/ns/a"

	rev, err := s.Create(ctx, key, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, key, []byte("again")); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	kv, err := s.Get(ctx, key)
	if err != nil || kv.ModRev != rev || string(kv.Value) != "v1" {
		t.Fatalf("get: %+v %v", kv, err)
	}
	rev2, _, err := s.Update(ctx, key, []byte("v2"), rev)
	if err != nil || rev2 <= rev {
		t.Fatalf("update: %d %v", rev2, err)
	}
	// A writer holding the old revision conflicts and learns the current one.
	_, cur, err := s.Update(ctx, key, []byte("stale"), rev)
	if !errors.Is(err, storage.ErrConflict) || cur.ModRev != rev2 || string(cur.Value) != "v2" {
		t.Fatalf("stale update: %v %+v", err, cur)
	}
	if _, _, err := s.Delete(ctx, key, rev); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale delete: %v", err)
	}
	if _, _, err := s.Delete(ctx, key, rev2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, _, err := s.Update(ctx, key, []byte("x"), rev2); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update of a deleted key: %v", err)
	}

	// Paged lists at one revision, and compaction.
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if _, err := s.Create(ctx, "/registry/things/ns/"+k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.List(ctx, "/registry/things/", "", 0, 2)
	if err != nil || len(page.KVs) != 2 || !page.More {
		t.Fatalf("first page: %+v %v", page, err)
	}
	if _, err := s.Create(ctx, "/registry/things/ns/f", []byte("f")); err != nil {
		t.Fatal(err)
	}
	rest, err := s.List(ctx, "/registry/things/", page.KVs[1].Key+"\x00", page.Rev, 0)
	if err != nil || len(rest.KVs) != 3 {
		t.Fatalf("rest at the first page's revision should not see f: %d %v", len(rest.KVs), err)
	}
	now, _ := s.Revision(ctx)
	if _, err := cli.Compact(ctx, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "/registry/things/", "", page.Rev, 0); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("list at a compacted revision: %v", err)
	}
}
