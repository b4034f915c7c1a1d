package loadgen

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/trace"
)

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// The outside view stamps each of a pod's changes the first time the
// watch shows it, at the watch's own time: added, bound, Running, Ready,
// and the Endpoints listing; a repeated update stamps nothing again, and
// without Outside only Ready is stamped.
func TestOutsideStamps(t *testing.T) {
	for _, outside := range []bool{true, false} {
		buf := nopCloser{&bytes.Buffer{}}
		tr := trace.New(Actor, buf, 64)
		clock := time.Unix(100, 0)
		now := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
		w := &watcher{pods: map[types.UID]*podState{}, tracer: tr, now: now, outside: outside}
		eps := &endpointsWatch{listed: map[types.UID]bool{}}
		if outside {
			eps.tracer, eps.now = tr, now
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
		w.observe(pod.DeepCopy()) // added
		pod.Spec.NodeName = "n1"
		w.observe(pod.DeepCopy()) // bound
		w.observe(pod.DeepCopy()) // the same again
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		w.observe(pod.DeepCopy()) // Running and Ready in one update
		ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "u"}}}}}}
		eps.observe(ep)
		eps.observe(ep)
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		evs, _, err := trace.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.Step)
			if e.UID != "u" || e.Actor != Actor {
				t.Errorf("event %+v: want pod u, actor %s", e, Actor)
			}
		}
		want := []string{ClientPodAdded, ClientPodBound, ClientPodRunning, trace.PodReadyObserved, ClientEndpointsListed}
		if !outside {
			want = []string{trace.PodReadyObserved}
		}
		if len(got) != len(want) {
			t.Fatalf("outside %v: stamps %v, want %v", outside, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("outside %v: stamps %v, want %v", outside, got, want)
				break
			}
		}
		if outside && (evs[2].TS != evs[3].TS || evs[1].TS <= evs[0].TS) {
			t.Errorf("times %d %d %d %d: Running and Ready seen in one update share a time, bound after added", evs[0].TS, evs[1].TS, evs[2].TS, evs[3].TS)
		}
	}
}
