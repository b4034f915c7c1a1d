package deployment

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func progressing(st appsv1.DeploymentStatus) (corev1.ConditionStatus, string) {
	c := getCondition(st, appsv1.DeploymentProgressing)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

func TestCalculateStatus(t *testing.T) {
	d := rolling(10, 2, 1)
	d.Generation = 3
	old := rs("old", 6, 6, 0)
	nrs := rs("new", 6, 4, 1)
	nrs.Status.ReadyReplicas = 5
	old.Status.TerminatingReplicas = ptr.To[int32](2)
	st := calculateStatus(d, []*appsv1.ReplicaSet{old, nrs}, nrs, t0)
	want := appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 12, UpdatedReplicas: 6, ReadyReplicas: 11,
		AvailableReplicas: 10, UnavailableReplicas: 2, TerminatingReplicas: ptr.To[int32](2)}
	st.Conditions, want.Conditions = nil, nil
	if !equalStatus(st, want) {
		t.Errorf("status %+v\nwant   %+v", st, want)
	}
	// Available: 10 >= 10-1.
	if c := getCondition(calculateStatus(d, []*appsv1.ReplicaSet{old, nrs}, nrs, t0), appsv1.DeploymentAvailable); c == nil ||
		c.Status != corev1.ConditionTrue || c.Reason != ReasonMinimumReplicasAvailable {
		t.Errorf("Available = %+v", c)
	}
	old.Status.AvailableReplicas = 4 // 8 < 9
	if c := getCondition(calculateStatus(d, []*appsv1.ReplicaSet{old, nrs}, nrs, t0), appsv1.DeploymentAvailable); c == nil ||
		c.Status != corev1.ConditionFalse || c.Reason != ReasonMinimumReplicasUnavailable {
		t.Errorf("Available = %+v", c)
	}
	// More available than asked for (scaling down): never negative.
	over := calculateStatus(rolling(2, 1, 1), []*appsv1.ReplicaSet{rs("x", 1, 1, 0), func() *appsv1.ReplicaSet { r := rs("y", 0, 0, 1); r.Status.AvailableReplicas = 3; return r }()}, nil, t0)
	if over.UnavailableReplicas != 0 || over.UpdatedReplicas != 0 {
		t.Errorf("unavailable %d updated %d", over.UnavailableReplicas, over.UpdatedReplicas)
	}
}

func equalStatus(a, b appsv1.DeploymentStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Replicas == b.Replicas && a.UpdatedReplicas == b.UpdatedReplicas &&
		a.ReadyReplicas == b.ReadyReplicas && a.AvailableReplicas == b.AvailableReplicas &&
		a.UnavailableReplicas == b.UnavailableReplicas && ptr.Deref(a.TerminatingReplicas, -1) == ptr.Deref(b.TerminatingReplicas, -1)
}

// The Progressing condition through a rollout: created, progressing,
// complete; a deadline missed without progress; a paused one never times
// out.
func TestRolloutStatusProgressing(t *testing.T) {
	now := t0.Add(time.Hour)
	d := rolling(3, 1, 0)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](60)
	created := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetCreated, "Created", now.Add(-10*time.Second))
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, Conditions: []appsv1.DeploymentCondition{created}}

	old, nrs := rs("old", 3, 3, 0), rs("new", 1, 0, 1)
	st := rolloutStatus(d, []*appsv1.ReplicaSet{old, nrs}, nrs, now)
	if s, r := progressing(st); s != corev1.ConditionTrue || r != ReasonReplicaSetUpdated {
		t.Fatalf("after the first new pod: %s %s", s, r)
	}
	c := getCondition(st, appsv1.DeploymentProgressing)
	if !c.LastUpdateTime.Time.Equal(now) || !c.LastTransitionTime.Equal(&created.LastTransitionTime) {
		t.Errorf("progress must refresh lastUpdateTime only: %+v", c)
	}

	d.Status = st
	old, nrs = rs("old", 0, 0, 0), rs("new", 3, 3, 1)
	st = rolloutStatus(d, []*appsv1.ReplicaSet{old, nrs}, nrs, now)
	if s, r := progressing(st); s != corev1.ConditionTrue || r != ReasonNewReplicaSetAvailable {
		t.Fatalf("complete: %s %s", s, r)
	}
	if progressCheckAfter(d, &st, now) != -1 {
		t.Error("a complete rollout scheduled a deadline check")
	}

	// No progress for longer than the deadline.
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3,
		Conditions: []appsv1.DeploymentCondition{newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, "", now.Add(-30*time.Second))}}
	stuck := []*appsv1.ReplicaSet{rs("old", 3, 3, 0), rs("new", 1, 0, 1)}
	st = rolloutStatus(d, stuck, stuck[1], now)
	if _, r := progressing(st); r != ReasonReplicaSetUpdated {
		t.Fatalf("30 s of a 60 s deadline: %s", r)
	}
	// The stored time is whole seconds: the deadline counts from the end
	// of that second (60 s + 1 s after it), never before 60 s have passed.
	if after := progressCheckAfter(d, &st, now); after != 31*time.Second {
		t.Errorf("deadline check in %v, want 31s", after)
	}
	st = rolloutStatus(d, stuck, stuck[1], now.Add(30500*time.Millisecond))
	if _, r := progressing(st); r == ReasonProgressDeadlineExceeded {
		t.Fatalf("60.5 s after a progress stored at a whole second (it may have come up to 0.99 s later): deadline reported early")
	}
	st = rolloutStatus(d, stuck, stuck[1], now.Add(31*time.Second))
	if s, r := progressing(st); s != corev1.ConditionFalse || r != ReasonProgressDeadlineExceeded {
		t.Fatalf("past the deadline: %s %s", s, r)
	}
	if after := progressCheckAfter(d, &st, now.Add(30500*time.Millisecond)); after != 0 {
		t.Errorf("less than a second left: check in %v, want now", after)
	}

	// Paused: Progressing=Unknown DeploymentPaused, and the deadline is
	// not checked while the condition says so.
	d.Spec.Paused = true
	if !pausedCondition(d, now) {
		t.Fatal("pause not recorded")
	}
	if s, r := progressing(d.Status); s != corev1.ConditionUnknown || r != ReasonDeploymentPaused {
		t.Fatalf("paused: %s %s", s, r)
	}
	if pausedCondition(d, now) {
		t.Error("pause recorded twice")
	}
	d.Spec.Paused = false
	if !pausedCondition(d, now) {
		t.Fatal("resume not recorded")
	}
	if s, r := progressing(d.Status); s != corev1.ConditionUnknown || r != ReasonDeploymentResumed {
		t.Fatalf("resumed: %s %s", s, r)
	}
	// A timeout is never overwritten by pause.
	d.Status.Conditions = []appsv1.DeploymentCondition{newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, "", now)}
	d.Spec.Paused = true
	if pausedCondition(d, now) {
		t.Error("pause replaced ProgressDeadlineExceeded")
	}
}

func TestRolloutStatusNoDeadlineDropsProgressing(t *testing.T) {
	d := rolling(1, 1, 0)
	d.Spec.ProgressDeadlineSeconds = nil
	d.Status.Conditions = []appsv1.DeploymentCondition{newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, "", t0)}
	st := rolloutStatus(d, []*appsv1.ReplicaSet{rs("a", 1, 1, 0)}, nil, t0)
	if c := getCondition(st, appsv1.DeploymentProgressing); c != nil {
		t.Errorf("Progressing kept without a deadline: %+v", c)
	}
}

func TestReplicaFailureCopied(t *testing.T) {
	d := rolling(1, 1, 0)
	nrs := rs("new", 1, 0, 1)
	nrs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
		Reason: "FailedCreate", Message: "quota", LastTransitionTime: metav1.NewTime(t0)}}
	st := rolloutStatus(d, []*appsv1.ReplicaSet{nrs}, nrs, t0)
	if c := getCondition(st, appsv1.DeploymentReplicaFailure); c == nil || c.Reason != "FailedCreate" {
		t.Fatalf("ReplicaFailure = %+v", c)
	}
	nrs.Status.Conditions = nil
	d.Status = st
	if c := getCondition(rolloutStatus(d, []*appsv1.ReplicaSet{nrs}, nrs, t0), appsv1.DeploymentReplicaFailure); c != nil {
		t.Errorf("ReplicaFailure kept after it cleared: %+v", c)
	}
}

// Upstream's cleanupDeployment cases.
func TestCleanupCandidates(t *testing.T) {
	empty := func(name string, age int) *appsv1.ReplicaSet { return withRevision(rs(name, 0, 0, age), age+1) }
	deleting := empty("gone", 0)
	deleting.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	statusPods := empty("b", 1)
	statusPods.Status.Replicas = 1
	asked := empty("c", 2)
	asked.Spec.Replicas = ptr.To[int32](1)
	behind := empty("d", 3)
	behind.Generation = 2
	for _, tc := range []struct {
		name  string
		limit int32
		old   []*appsv1.ReplicaSet
		want  []string
	}{
		{"keep 1 of 3", 1, []*appsv1.ReplicaSet{empty("a", 0), empty("b", 1), empty("c", 2)}, []string{"a", "b"}},
		{"only empty ones", 0, []*appsv1.ReplicaSet{empty("a", 0), statusPods, asked, behind}, []string{"a"}},
		{"already deleting", 0, []*appsv1.ReplicaSet{deleting}, nil},
		{"unlimited", 1<<31 - 1, []*appsv1.ReplicaSet{empty("a", 0), empty("b", 1), empty("c", 2)}, nil},
		{"lowest revisions go", 1, []*appsv1.ReplicaSet{withRevision(rs("r5", 0, 0, 0), 5), withRevision(rs("r2", 0, 0, 1), 2)}, []string{"r2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rolling(1, 1, 0)
			d.Spec.RevisionHistoryLimit = ptr.To(tc.limit)
			var got []string
			for _, r := range cleanupCandidates(tc.old, d) {
				got = append(got, r.Name)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("deleted %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("deleted %v, want %v", got, tc.want)
				}
			}
		})
	}
}
