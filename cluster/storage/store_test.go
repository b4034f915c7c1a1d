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

// CreateWith writes the object and its side keys in one transaction, or
// nothing: a side key held by another object fails it with ErrSideExists,
// the object's own key with ErrExists, and neither failure writes (etcd's
// revision stays). Delete with sides removes them all at one revision.
func TestCreateWithSidesIsOneTransaction(t *testing.T) {
	s, ctx, revision, modRev := sidesStore(t)
	const a, b, ip = "/registry/things/ns/a", "/registry/things/ns/b", "/registry/serviceips/10.96.0.9"

	rev, err := s.CreateWith(ctx, a, []byte("A"), storage.KV{Key: ip, Value: []byte("ns/a")})
	if err != nil {
		t.Fatal(err)
	}
	if modRev(a) != rev || modRev(ip) != rev {
		t.Fatalf("object at %d, side at %d, create answered %d: want one revision", modRev(a), modRev(ip), rev)
	}
	before := revision()
	if _, err := s.CreateWith(ctx, b, []byte("B"), storage.KV{Key: ip, Value: []byte("ns/b")}); !errors.Is(err, storage.ErrSideExists) || errors.Is(err, storage.ErrExists) {
		t.Fatalf("create beside a held side key: %v, want ErrSideExists", err)
	}
	if _, err := s.CreateWith(ctx, a, []byte("A2"), storage.KV{Key: "/registry/serviceips/10.96.0.10", Value: []byte("ns/a")}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("create of a present key: %v, want ErrExists", err)
	}
	if after := revision(); after != before || modRev(b) != 0 || modRev("/registry/serviceips/10.96.0.10") != 0 {
		t.Fatalf("failed creates wrote: revision %d → %d, b at %d", before, after, modRev(b))
	}
	if _, _, err := s.Delete(ctx, a, rev-1, ip); !errors.Is(err, storage.ErrConflict) || modRev(ip) != rev {
		t.Fatalf("stale delete: %v, side at %d (want it kept at %d)", err, modRev(ip), rev)
	}
	drev, _, err := s.Delete(ctx, a, rev, ip, "/registry/serviceips/absent")
	if err != nil {
		t.Fatal(err)
	}
	if modRev(a) != 0 || modRev(ip) != 0 || revision() != drev {
		t.Fatalf("delete at %d left object at %d, side at %d", drev, modRev(a), modRev(ip))
	}
	if _, err := s.CreateWith(ctx, b, []byte("B"), storage.KV{Key: ip, Value: []byte("ns/b")}); err != nil {
		t.Fatalf("the freed side key: %v", err)
	}
}

// UpdateWith takes side keys (absent ones only) and removes others in the
// update's own transaction; a held side key fails it with ErrSideExists
// and nothing is written, and a stale update is still ErrConflict.
func TestUpdateWithSidesIsOneTransaction(t *testing.T) {
	s, ctx, revision, modRev := sidesStore(t)
	const key, held, free = "/registry/things/ns/svc", "/registry/serviceips/10.96.0.20", "/registry/serviceips/10.96.0.21"
	rev, err := s.CreateWith(ctx, key, []byte("v1"), storage.KV{Key: held, Value: []byte("ns/svc")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/registry/serviceips/10.96.0.22", []byte("ns/other")); err != nil {
		t.Fatal(err)
	}
	before := revision()
	_, _, err = s.UpdateWith(ctx, key, []byte("v2"), rev, []storage.KV{{Key: "/registry/serviceips/10.96.0.22", Value: []byte("ns/svc")}}, []string{held})
	if !errors.Is(err, storage.ErrSideExists) {
		t.Fatalf("update taking a held side key: %v, want ErrSideExists", err)
	}
	if after := revision(); after != before {
		t.Fatalf("the refused update wrote: revision %d → %d", before, after)
	}
	if _, _, err := s.UpdateWith(ctx, key, []byte("stale"), rev-1, []storage.KV{{Key: free, Value: []byte("ns/svc")}}, nil); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	rev2, _, err := s.UpdateWith(ctx, key, []byte("v2"), rev, []storage.KV{{Key: free, Value: []byte("ns/svc")}}, []string{held})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{key: rev2, free: rev2, held: 0} {
		if got := modRev(k); got != want {
			t.Fatalf("%s at revision %d, want %d (0: absent)", k, got, want)
		}
	}
}

// sidesStore is a Store on a fresh etcd, a context for the test, and
// readers of etcd's revision and of a key's mod revision (0: absent).
func sidesStore(t *testing.T) (*storage.Store, context.Context, func() int64, func(string) int64) {
	_, cli := testenv.Etcd(t)
	s := storage.NewStore(cli, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	revision := func() int64 {
		t.Helper()
		r, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	modRev := func(key string) int64 {
		t.Helper()
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0
		}
		return resp.Kvs[0].ModRevision
	}
	return s, ctx, revision, modRev
}
