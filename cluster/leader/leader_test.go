package leader

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
)

// client-go's release reads the Lease and then writes an empty holder; the
// write happens only when the read showed this candidate as the holder, so
// a candidate whose renewal failed cannot empty the lease a standby has
// just taken.
func TestReleaseOnlyOwnLease(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		holder, want string
	}{
		{holder: "b", want: "b"}, // taken by the standby: left alone
		{holder: "a", want: ""},  // ours: released
	} {
		cs := fake.NewClientset(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "l"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(tc.holder), LeaseDurationSeconds: ptr.To[int32](2), RenewTime: &metav1.MicroTime{Time: time.Now()}},
		})
		l := &releaseOwnLock{Interface: &resourcelock.LeaseLock{
			LeaseMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "l"}, Client: cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: "a"},
		}}
		if _, _, err := l.Get(ctx); err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		if err := l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now}); err != nil {
			t.Fatal(err)
		}
		got, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "l", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := ptr.Deref(got.Spec.HolderIdentity, ""); h != tc.want {
			t.Errorf("lease held by %q, release by a: holder %q, want %q", tc.holder, h, tc.want)
		}
	}
}

// The leader's work stops at its own renew deadline, counted from the last
// renewal it sent, even when client-go's release then hangs (etcd
// unreachable: a standby may take the lease once it expires), and the
// release is written only after the work has returned.
func TestWorkStopsAtRenewDeadline(t *testing.T) {
	cs := fake.NewClientset()
	var mu sync.Mutex
	failing := false
	var lastRenew, released time.Time
	cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		mu.Lock()
		defer mu.Unlock()
		if ptr.Deref(l.Spec.HolderIdentity, "") == "" {
			released = time.Now()
			return false, nil, nil
		}
		if failing {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		lastRenew = time.Now()
		return false, nil, nil
	})
	cs.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		slow := failing
		mu.Unlock()
		if slow {
			time.Sleep(300 * time.Millisecond) // a read that waits on a dead etcd
		}
		return false, nil, nil
	})
	cfg := Config{Namespace: "kube-system", Name: "l", Identity: "a",
		LeaseDuration: 800 * time.Millisecond, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopped := make(chan time.Time, 1)
	go func() {
		_ = Run(ctx, cs, cfg, slog.New(slog.DiscardHandler), func(wctx context.Context) {
			time.Sleep(300 * time.Millisecond) // lead a while, renewing
			mu.Lock()
			failing = true
			mu.Unlock()
			<-wctx.Done()
			stopped <- time.Now()
			cancel() // one term is enough for the test
		}, nil)
	}()
	var at time.Time
	select {
	case at = <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the work never stopped")
	}
	time.Sleep(time.Second) // let the release happen, if it does
	mu.Lock()
	defer mu.Unlock()
	if lastRenew.IsZero() {
		t.Fatal("no renewal seen")
	}
	if late := at.Sub(lastRenew); late > cfg.RenewDeadline+150*time.Millisecond {
		t.Errorf("work stopped %v after the last renewal, past the renew deadline %v", late, cfg.RenewDeadline)
	}
	if !released.IsZero() && released.Before(at) {
		t.Errorf("lease released at %v, before the work stopped at %v", released, at)
	}
}
