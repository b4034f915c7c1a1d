package eventsink_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/eventsink"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

func client(t *testing.T) kubernetes.Interface {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	return kubernetes.NewForConfigOrDie(api.Config)
}

func eventsOf(t *testing.T, cs kubernetes.Interface) []corev1.Event {
	t.Helper()
	l, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
}

// Events recorded in a burst are written once the burst is quiet, not
// while it lasts; an Event repeated in the burst is one create carrying
// the count; Stop writes what still waits.
func TestBurstWrittenWhenQuietAndAggregated(t *testing.T) {
	cs := client(t)
	opts := eventsink.DefaultOptions()
	opts.Quiet, opts.MaxHold = 300*time.Millisecond, 5*time.Second
	r := eventsink.Start(context.Background(), cs, opts, nil)
	rec := r.Recorder(corev1.EventSource{Component: "test"})
	p := pod("web")
	for i := range 10 {
		rec.Eventf(p, corev1.EventTypeNormal, "Started", "container %d started", i)
		rec.Event(p, corev1.EventTypeNormal, "Pulled", "image already present")
	}
	time.Sleep(100 * time.Millisecond)
	if got := eventsOf(t, cs); len(got) != 0 {
		t.Fatalf("%d Events written while the burst was not yet quiet", len(got))
	}
	deadline := time.Now().Add(10 * time.Second)
	var got []corev1.Event
	for time.Now().Before(deadline) {
		if got = eventsOf(t, cs); len(got) >= 11 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pulled, started := 0, 0
	for _, e := range got {
		switch e.Reason {
		case "Pulled":
			pulled++
			if e.Count != 10 {
				t.Errorf("Pulled: count %d, want 10 (the repeats folded into the one create)", e.Count)
			}
		case "Started":
			started++
		}
	}
	if pulled != 1 || started != 10 {
		t.Fatalf("got %d Pulled and %d Started Events, want 1 and 10", pulled, started)
	}
	r.Stop()

	// What waits when the sink stops is written: handed to the sink
	// itself, not through the broadcaster, whose own hand-off a stop may
	// overtake.
	sink := eventsink.NewSink(cs.CoreV1(), opts, nil)
	if _, err := sink.Create(event("web.last", "BackOff")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sink.Run(ctx); close(done) }()
	cancel()
	<-done
	found := false
	for _, e := range eventsOf(t, cs) {
		found = found || e.Reason == "BackOff"
	}
	if !found {
		t.Fatal("an Event waiting at Stop was not written")
	}
}

func event(name, reason string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"},
		Reason:         reason, Message: "last words", Type: corev1.EventTypeWarning}
}

// An actor that never goes quiet still has its Events written within
// MaxHold, in batches.
func TestBusyActorWrittenWithinMaxHold(t *testing.T) {
	cs := client(t)
	opts := eventsink.DefaultOptions()
	opts.Quiet, opts.MaxHold = time.Second, 300*time.Millisecond
	r := eventsink.Start(context.Background(), cs, opts, nil)
	defer r.Stop()
	rec := r.Recorder(corev1.EventSource{Component: "test"})
	start := time.Now()
	var first time.Duration
	for i := 0; time.Since(start) < 3*time.Second; i++ {
		rec.Event(pod(fmt.Sprintf("p%d", i)), corev1.EventTypeNormal, "Scheduled", "bound")
		if first == 0 && len(eventsOf(t, cs)) > 0 {
			first = time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first == 0 || first > 2*time.Second {
		t.Fatalf("first Event of a busy actor written after %v, want within MaxHold (300 ms) and a generous margin", first)
	}
	t.Logf("first Event of a busy actor written after %v", first)
}
