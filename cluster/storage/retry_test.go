package storage_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// lossyStore is a Store whose etcd client talks through a link proxy, so
// a test can hold a request or its answer; direct is a client that does
// not.
func lossyStore(t *testing.T) (*storage.Store, *netfault.Proxy, *clientv3.Client, *prometheus.Registry) {
	s, ps, direct, reg := lossyStoreN(t, 1)
	return s, ps[0], direct, reg
}

// lossyStoreN is a Store whose client has n endpoints, each a link proxy
// to the same member: as many doors into etcd as a cluster has members.
func lossyStoreN(t *testing.T, n int) (*storage.Store, []*netfault.Proxy, *clientv3.Client, *prometheus.Registry) {
	t.Helper()
	endpoint, direct := testenv.Etcd(t)
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*netfault.Proxy
	var eps []string
	for range n {
		p, err := netfault.Listen("etcd-client", "127.0.0.1:0", u.Host, netfault.Senders{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		ps = append(ps, p)
		eps = append(eps, "http://"+p.Addr().String())
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	reg := prometheus.NewRegistry()
	s := storage.NewStore(cli, reg)
	s.SetRetry(storage.Retry{Attempt: 300 * time.Millisecond, Budget: 5 * time.Second})
	return s, ps, direct, reg
}

// A write sent to a member that never answers (a follower that forwarded
// it to a dead leader) is answered through another member soon after the
// attempt bound, not at etcd's own request timeout.
func TestWriteToAMemberThatNeverAnswersIsAnsweredByAnother(t *testing.T) {
	s, ps, direct, _ := lossyStoreN(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		if _, err := s.Create(ctx, "/registry/things/ns/warm-"+string(rune('a'+i)), []byte("w")); err != nil {
			t.Fatal(err)
		}
	}
	// The first door answers nothing for 20 s, requests or answers.
	if err := ps[0].Set([]netfault.Rule{{Name: "dead", Up: netfault.Fault{Blackhole: true}, Down: netfault.Fault{Blackhole: true}, For: netfault.Duration{Duration: 20 * time.Second}}}); err != nil {
		t.Fatal(err)
	}
	held := 0
	for i := range 6 {
		key := "/registry/things/ns/w-" + string(rune('a'+i))
		start := time.Now()
		rev, err := s.Create(ctx, key, []byte("mine"))
		took := time.Since(start)
		if err != nil {
			t.Fatalf("create %s: %v after %v", key, err, took)
		}
		if took > 3*time.Second {
			t.Fatalf("create %s answered after %v, attempt bound 300 ms", key, took)
		}
		got, err := direct.Get(ctx, key)
		if err != nil || len(got.Kvs) != 1 || got.Kvs[0].CreateRevision != rev {
			t.Fatalf("%s stored %+v, create answered %d", key, got.Kvs, rev)
		}
		if took >= 250*time.Millisecond {
			held++
			t.Logf("create %s went to the silent member first: answered after %v", key, took)
		}
	}
	if held == 0 {
		t.Fatal("no create went to the silent member; the client never used it")
	}
}

func hold(t *testing.T, p *netfault.Proxy, d netfault.Direction, hold time.Duration) {
	t.Helper()
	f := netfault.Fault{Blackhole: true}
	r := netfault.Rule{Name: "hold", For: netfault.Duration{Duration: hold}}
	if d == netfault.Up {
		r.Up = f
	} else {
		r.Down = f
	}
	if err := p.Set([]netfault.Rule{r}); err != nil {
		t.Fatal(err)
	}
}

func retried(reg *prometheus.Registry, op, outcome string) float64 {
	return counter(reg, "kstep_etcd_retried_requests_total", map[string]string{"operation": op, "outcome": outcome})
}

// counter is the value of the counter name whose labels include labels.
func counter(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if l[k] != v {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// A create whose answer is lost applied all the same: its retry finds the
// key holding exactly what it wrote and answers success, not AlreadyExists.
func TestCreateWhoseAnswerWasLostSucceeds(t *testing.T) {
	s, p, direct, reg := lossyStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "/registry/things/ns/lost-answer"
	if _, err := s.Create(ctx, "/registry/things/ns/warm", []byte("w")); err != nil {
		t.Fatal(err)
	}
	hold(t, p, netfault.Down, 700*time.Millisecond)
	start := time.Now()
	rev, err := s.Create(ctx, key, []byte("mine"))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("create: %v (after %v)", err, took)
	}
	got, err := direct.Get(ctx, key)
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "mine" || got.Kvs[0].CreateRevision != rev {
		t.Fatalf("stored %+v (%v), create answered rev %d", got, err, rev)
	}
	if n := retried(reg, "create", "answered"); n != 1 {
		t.Fatalf("retried creates answered: %v", n)
	}
	t.Logf("answered after %v", took)
}

// An update that was retried and whose precondition another writer broke
// in the meantime answers ErrUnavailable: never ErrConflict, which would
// tell the client nothing was written without the store knowing that.
func TestRetriedUpdateOvertakenIsUnavailableNotConflict(t *testing.T) {
	s, p, direct, reg := lossyStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "/registry/things/ns/overtaken"
	rev, err := s.Create(ctx, key, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	// Nothing reaches etcd until the other writer has written: the
	// update's attempts go unanswered (at least one times out), then the
	// held bytes arrive after the other write, whatever the machine's load.
	if err := p.Set([]netfault.Rule{{Name: "hold", Up: netfault.Fault{Blackhole: true}}}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := s.Update(ctx, key, []byte("mine"), rev)
		errc <- err
	}()
	if _, err := direct.Put(ctx, key, "theirs"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // more than one attempt's bound
	if err := p.Set(nil); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrConflict) {
		t.Fatalf("update overtaken after an unanswered attempt: %v", err)
	}
	got, _ := direct.Get(ctx, key)
	if string(got.Kvs[0].Value) != "theirs" {
		t.Fatalf("stored %q", got.Kvs[0].Value)
	}
	if n := retried(reg, "update", "unknown"); n != 1 {
		t.Fatalf("retried updates of unknown outcome: %v", n)
	}
	// Without an unanswered attempt a stale update is still a plain
	// conflict.
	if _, _, err := s.Update(ctx, key, []byte("stale"), rev); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale update: %v", err)
	}
}

// An update and a delete whose answers are lost are recognised as the
// first change after the revision they read.
func TestUpdateAndDeleteWhoseAnswersWereLostSucceed(t *testing.T) {
	s, p, direct, reg := lossyStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "/registry/things/ns/chain"
	rev, err := s.Create(ctx, key, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	hold(t, p, netfault.Down, 700*time.Millisecond)
	rev2, _, err := s.Update(ctx, key, []byte("v2"), rev)
	if err != nil || rev2 <= rev {
		t.Fatalf("update: %d %v", rev2, err)
	}
	if got, _ := direct.Get(ctx, key); got.Kvs[0].ModRevision != rev2 {
		t.Fatalf("stored at %d, update answered %d", got.Kvs[0].ModRevision, rev2)
	}
	hold(t, p, netfault.Down, 700*time.Millisecond)
	if _, _, err := s.Delete(ctx, key, rev2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got, _ := direct.Get(ctx, key); len(got.Kvs) != 0 {
		t.Fatal("still there")
	}
	for _, op := range []string{"update", "delete"} {
		if n := retried(reg, op, "answered"); n != 1 {
			t.Fatalf("retried %s answered: %v", op, n)
		}
	}
}

// Without etcd, an operation ends at its budget with ErrUnavailable.
func TestUnansweredOperationEndsAtItsBudget(t *testing.T) {
	s, p, _, reg := lossyStore(t)
	s.SetRetry(storage.Retry{Attempt: 200 * time.Millisecond, Budget: time.Second})
	ctx := context.Background()
	if err := p.Set([]netfault.Rule{{Name: "down", Up: netfault.Fault{Blackhole: true}}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := s.Create(ctx, "/registry/things/ns/never", []byte("x"))
	took := time.Since(start)
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("create without etcd: %v, want ErrOutcomeUnknown (an ErrUnavailable)", err)
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %v with a 1 s budget", took)
	}
	if retried(reg, "create", "unavailable") != 1 {
		t.Fatal("the unavailable create was not counted")
	}
}

// A slow etcd (every answer a second late, as an overloaded one queues
// proposals) still settles writes: the first attempt, unanswered past its
// 300 ms bound, is not abandoned, and its answer is the operation's. Before,
// each resend was cancelled before its own late answer came and the writes
// ended at the budget unavailable though they had applied (a binding a
// client then sent again, to be told the pod was already bound).
func TestSlowEtcdSettlesWrites(t *testing.T) {
	s, p, direct, reg := lossyStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := "/registry/things/ns/slow"
	if _, err := s.Create(ctx, "/registry/things/ns/warm", []byte("w")); err != nil {
		t.Fatal(err)
	}
	if err := p.Set([]netfault.Rule{{Name: "slow", Down: netfault.Fault{Delay: netfault.Duration{Duration: time.Second}}}}); err != nil {
		t.Fatal(err)
	}
	timed := func(what string, f func() (int64, error)) int64 {
		t.Helper()
		start := time.Now()
		rev, err := f()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s through a slow etcd: %v after %v", what, err, took)
		}
		if took < 900*time.Millisecond {
			t.Fatalf("%s answered after %v: the answers are not late", what, took)
		}
		t.Logf("%s answered after %v", what, took)
		return rev
	}
	rev := timed("create", func() (int64, error) { return s.Create(ctx, key, []byte("one")) })
	rev = timed("update", func() (int64, error) {
		r, _, err := s.Update(ctx, key, []byte("two"), rev)
		return r, err
	})
	got, err := direct.Get(ctx, key)
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "two" || got.Kvs[0].ModRevision != rev {
		t.Fatalf("after the update etcd holds %+v (err %v), the update answered revision %d", got.Kvs, err, rev)
	}
	timed("delete", func() (int64, error) {
		r, _, err := s.Delete(ctx, key, rev)
		return r, err
	})
	if got, err := direct.Get(ctx, key); err != nil || len(got.Kvs) != 0 {
		t.Fatalf("after the delete etcd holds %+v (err %v)", got.Kvs, err)
	}
	for _, op := range []string{"create", "update", "delete"} {
		if n := retried(reg, op, "unavailable") + retried(reg, op, "unknown"); n != 0 {
			t.Errorf("%s: %v operations counted unavailable or unknown", op, n)
		}
	}
}

// A create with a side key whose answer is lost applied all the same: the
// retry finds its object (and so its side key, written with it) and
// answers success, not ErrSideExists or ErrExists.
func TestCreateWithSideWhoseAnswerWasLostSucceeds(t *testing.T) {
	s, p, direct, reg := lossyStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key, side = "/registry/things/ns/lost-side", "/registry/serviceips/10.96.0.7"
	if _, err := s.Create(ctx, "/registry/things/ns/warm", []byte("w")); err != nil {
		t.Fatal(err)
	}
	hold(t, p, netfault.Down, 700*time.Millisecond)
	rev, err := s.CreateWith(ctx, key, []byte("mine"), storage.KV{Key: side, Value: []byte("ns/lost-side")})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for _, k := range []string{key, side} {
		got, err := direct.Get(ctx, k)
		if err != nil || len(got.Kvs) != 1 || got.Kvs[0].CreateRevision != rev {
			t.Fatalf("%s: %+v (%v), create answered rev %d", k, got, err, rev)
		}
	}
	if n := retried(reg, "create", "answered"); n != 1 {
		t.Fatalf("retried creates answered: %v", n)
	}
}
