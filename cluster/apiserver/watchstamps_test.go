package apiserver_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// Every apiserver stamps its watch cache's receipt of each change from
// etcd, and a watcher served by that apiserver receives the change only
// after the stamp: the causal start of ②, ④, ⑥ and ⑧. pod.bound is the
// binding apiserver's, when etcd acknowledged the binding.
func TestWatchCacheStampsPrecedeWatchers(t *testing.T) {
	url, _ := testenv.Etcd(t)
	dir := t.TempDir()
	traced := func(name string) (*testenv.APIServer, string) {
		file := filepath.Join(dir, name+".jsonl")
		return testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.Name, o.TraceFile = name, file }), file
	}
	a0, trace0 := traced("apiserver-0")
	a1, trace1 := traced("apiserver-1")
	c0, c1 := kubernetes.NewForConfigOrDie(a0.Config), kubernetes.NewForConfigOrDie(a1.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A watcher on apiserver-1 notes when each change reaches it.
	w, err := c1.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	received := map[string]time.Time{} // "ADDED", "bound", "ready"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			at := time.Now()
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			switch {
			case ev.Type == watch.Added:
				received["ADDED"] = at
			case ev.Type == watch.Modified && p.Spec.NodeName != "" && received["bound"].IsZero():
				received["bound"] = at
			case ev.Type == watch.Modified && len(p.Status.Conditions) > 0 && received["ready"].IsZero():
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						received["ready"] = at
						return
					}
				}
			}
		}
	}()

	one := int32(1)
	rs, err := c0.AppsV1().ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app:v1"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := c0.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app:v1"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err = c1.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	if _, err := c1.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the watcher saw %v", received)
	}

	// The sinks flush as soon as their queue is empty: wait for the stamps.
	want := map[string]map[string]types.UID{
		"apiserver-0": {trace.RSCached: rs.UID, trace.PodCached: pod.UID, trace.PodBoundCached: pod.UID, trace.PodReadyCached: pod.UID,
			trace.RSReceived: rs.UID, trace.RSPersisted: rs.UID, trace.PodPersisted: pod.UID},
		"apiserver-1": {trace.RSCached: rs.UID, trace.PodCached: pod.UID, trace.PodBoundCached: pod.UID, trace.PodReadyCached: pod.UID,
			trace.PodBound: pod.UID},
	}
	got := map[string]map[string]trace.Event{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		complete := true
		for name, file := range map[string]string{"apiserver-0": trace0, "apiserver-1": trace1} {
			evs, _, err := trace.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got[name] = map[string]trace.Event{}
			for _, e := range evs {
				if _, dup := got[name][e.Step]; dup {
					t.Errorf("%s stamped %s twice", name, e.Step)
				}
				got[name][e.Step] = e
			}
			for step, uid := range want[name] {
				if got[name][step].UID != uid {
					complete = false
				}
			}
		}
		if complete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stamps: got %v, want %v", got, want)
		}
	}
	for what, step := range map[string]string{"ADDED": trace.PodCached, "bound": trace.PodBoundCached, "ready": trace.PodReadyCached} {
		stamped := time.Unix(0, got["apiserver-1"][step].TS)
		if rec := received[what]; rec.Before(stamped) {
			t.Errorf("the watcher on apiserver-1 received %s at %v, before apiserver-1's %s at %v", what, rec, step, stamped)
		}
	}
	if _, ok := got["apiserver-0"][trace.PodBound]; ok {
		t.Error("apiserver-0 stamped pod.bound for a binding apiserver-1 served")
	}
}
