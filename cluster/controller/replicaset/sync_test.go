package replicaset

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func TestSlowStart(t *testing.T) {
	var calls atomic.Int32
	done, err := slowStart(10, 1, func() error { calls.Add(1); return nil })
	if err != nil || done != 10 || calls.Load() != 10 {
		t.Fatalf("all succeed: done %d calls %d err %v", done, calls.Load(), err)
	}
	// Failing from the first call: one batch of one, then stop.
	calls.Store(0)
	done, err = slowStart(10, 1, func() error { calls.Add(1); return errors.New("no") })
	if err == nil || done != 0 || calls.Load() != 1 {
		t.Fatalf("failing: done %d calls %d err %v", done, calls.Load(), err)
	}
	// Failing after 3 successes: batches 1, 2, then 4 with failures.
	calls.Store(0)
	done, _ = slowStart(10, 1, func() error {
		if calls.Add(1) > 3 {
			return errors.New("no")
		}
		return nil
	})
	if done != 3 || calls.Load() != 7 {
		t.Fatalf("partial: done %d calls %d", done, calls.Load())
	}
}

func pod(name, node string, phase corev1.PodPhase, ready bool, age time.Duration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func TestPickVictims(t *testing.T) {
	pods := []*corev1.Pod{
		pod("running-ready-old", "n1", corev1.PodRunning, true, time.Hour),
		pod("running-ready-new", "n1", corev1.PodRunning, true, time.Minute),
		pod("running-notready", "n1", corev1.PodRunning, false, time.Hour),
		pod("pending-bound", "n1", corev1.PodPending, false, time.Hour),
		pod("unscheduled", "", corev1.PodPending, false, time.Hour),
	}
	want := []string{"unscheduled", "pending-bound", "running-notready", "running-ready-new", "running-ready-old"}
	got := pickVictims(pods, 5)
	for i := range want {
		if got[i].Name != want[i] {
			t.Fatalf("position %d: got %s, want %s (order %v)", i, got[i].Name, want[i], names(got))
		}
	}
	if len(pickVictims(pods, 2)) != 2 {
		t.Fatal("n not honoured")
	}
}

func names(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// A create whose answer is lost is sent again under the same name until the
// answer is definite: it never becomes a second pod, and a definite refusal
// is not retried.
func TestCreateSettlesLostAnswers(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs-uid"},
		Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}}
	for _, tc := range []struct {
		name string
		// fail answers the nth create (from 0) instead of the apiserver;
		// landed says whether that create was stored all the same.
		fail     func(n int) (err error, landed bool)
		wantErr  bool
		wantPods int
		creates  int
	}{
		{"etcd timed out after storing it", func(n int) (error, bool) {
			if n == 0 {
				return apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true
			}
			return nil, false
		}, false, 1, 2},
		{"connection broke before it was served", func(n int) (error, bool) {
			if n < 2 {
				return errors.New("connection refused"), false
			}
			return nil, false
		}, false, 1, 3},
		{"a definite refusal", func(int) (error, bool) {
			return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil), false
		}, true, 0, 1},
		{"a name taken by someone else's pod", func(int) (error, bool) {
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "x"), false
		}, true, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			var creates atomic.Int32
			cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				n := int(creates.Add(1)) - 1
				err, landed := tc.fail(n)
				if err == nil {
					return false, nil, nil // the tracker answers
				}
				if landed {
					if terr := cs.Tracker().Create(corev1.SchemeGroupVersion.WithResource("pods"), a.(k8stesting.CreateAction).GetObject(), "ns"); terr != nil {
						t.Fatal(terr)
					}
				}
				return true, nil, err
			})
			rec := record.NewFakeRecorder(10)
			r := &Controller{client: cs, recorder: rec, owners: replicaSets{client: cs}, ownerKind: rsKind.Kind, ownerAPIVersion: "apps/v1"}
			err := r.createPod(context.Background(), rs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("createPod = %v, want error %v", err, tc.wantErr)
			}
			want := "Normal SuccessfulCreate"
			if tc.wantErr {
				want = "Warning FailedCreate"
			}
			select {
			case ev := <-rec.Events:
				if !strings.HasPrefix(ev, want) {
					t.Errorf("event %q, want %s", ev, want)
				}
			default:
				t.Errorf("no event, want %s", want)
			}
			l, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			if len(l.Items) != tc.wantPods || int(creates.Load()) != tc.creates {
				t.Fatalf("%d pods after %d creates, want %d after %d", len(l.Items), creates.Load(), tc.wantPods, tc.creates)
			}
		})
	}
}
