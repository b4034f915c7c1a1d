package leader

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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
