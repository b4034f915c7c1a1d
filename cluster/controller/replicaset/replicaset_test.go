package replicaset_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// start runs the ReplicaSet controller in-process against a real apiserver.
func start(t *testing.T, opts controller.Options) kubernetes.Interface {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(cs, 0)
	c := replicaset.New(&controller.Context{
		Client: cs, Informers: f, Recorder: record.NewFakeRecorder(10000),
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Now: time.Now, Options: opts,
	})
	f.Start(ctx.Done())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
	_ = scheme.Scheme
	return cs
}

func newRS(name string, replicas int32) *appsv1.ReplicaSet {
	l := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}}}},
	}
}

// ownedActive counts the active pods rs owns, from a fresh list.
func ownedActive(t *testing.T, cs kubernetes.Interface, rs string) int {
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + rs})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Name == rs && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func TestCreateReplaceScale(t *testing.T) {
	cs := start(t, controller.DefaultOptions())
	ctx := context.Background()
	rss := cs.AppsV1().ReplicaSets("default")
	if _, err := rss.Create(ctx, newRS("web", 20), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "20 pods", func() bool { return ownedActive(t, cs, "web") == 20 })
	l, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	for _, p := range l.Items[:5] {
		if err := cs.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, "replacements", func() bool { return ownedActive(t, cs, "web") == 20 })
	for _, n := range []int32{5, 30} {
		if _, err := rss.Patch(ctx, "web", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, fmt.Sprint(n, " pods"), func() bool { return ownedActive(t, cs, "web") == int(n) })
	}
	testenv.Eventually(t, 30*time.Second, "status", func() bool {
		rs, err := rss.Get(ctx, "web", metav1.GetOptions{})
		return err == nil && rs.Status.Replicas == 30 && rs.Status.FullyLabeledReplicas == 30 && rs.Status.ObservedGeneration == rs.Generation
	})
	// Every pod is owned as a controller with blockOwnerDeletion.
	l, _ = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	for _, p := range l.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || !ptr.Deref(ref.BlockOwnerDeletion, false) || ref.Kind != "ReplicaSet" {
			t.Fatalf("pod %s owner reference: %+v", p.Name, p.OwnerReferences)
		}
	}
}

func TestAdoptAndRelease(t *testing.T) {
	cs := start(t, controller.DefaultOptions())
	ctx := context.Background()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "ad"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, newRS("ad", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "3 pods including the adopted orphan", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "orphan", metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(p) != nil && ownedActive(t, cs, "ad") == 3
	})
	// Relabel it: released, and replaced.
	if _, err := cs.CoreV1().Pods("default").Patch(ctx, "orphan", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"other"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "release and replacement", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "orphan", metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(p) == nil && ownedActive(t, cs, "ad") == 3
	})
}

// With every pod event delivered 500 ms late, the controller's cache lags
// its own creates; expectations keep it from creating again while syncs
// keep being triggered.
func TestNeverOverCreatesWithSlowWatch(t *testing.T) {
	opts := controller.DefaultOptions()
	opts.PodWatchDelay = 500 * time.Millisecond
	cs := start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=slow"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	live := map[types.UID]bool{}
	maxSeen := 0
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
				delete(live, p.UID)
			} else {
				live[p.UID] = true
			}
			maxSeen = max(maxSeen, len(live))
			mu.Unlock()
		}
	}()
	const replicas = 30
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, newRS("slow", replicas), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Trigger sync after sync while the cache is behind.
	for i := range 30 {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"poke":"%d"}}}`, i)
		if _, err := cs.AppsV1().ReplicaSets("default").Patch(ctx, "slow", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	testenv.Eventually(t, 30*time.Second, "30 pods", func() bool { return ownedActive(t, cs, "slow") == replicas })
	time.Sleep(2 * time.Second) // anything extra would be created by now
	mu.Lock()
	defer mu.Unlock()
	if maxSeen > replicas {
		t.Fatalf("a watcher saw %d pods of a ReplicaSet of %d", maxSeen, replicas)
	}
	if n := ownedActive(t, cs, "slow"); n != replicas {
		t.Fatalf("%d pods at the end", n)
	}
}

// Each ReplicaSet's status is written once when its pod shows up and once
// when the pod is Ready, and never conflicts: a sync never writes a status
// its cache cannot show yet (pods it just created), and reads its own last
// write when the watch has not delivered it (controller.WriteCache). Every
// conflict would be one more etcd round trip under load.
func TestStatusWrittenOnlyWhenItChanges(t *testing.T) {
	cs := start(t, controller.DefaultOptions())
	ctx := context.Background()
	const n = 30
	for i := range n {
		if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, newRS(fmt.Sprint("rs-", i), 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	statusIs := func(ready int32) func() bool {
		return func() bool {
			l, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) != n {
				return false
			}
			for _, rs := range l.Items {
				if rs.Status.Replicas != 1 || rs.Status.ReadyReplicas != ready || rs.Status.ObservedGeneration != rs.Generation {
					return false
				}
			}
			return true
		}
	}
	testenv.Eventually(t, 30*time.Second, "every status to count its pod", statusIs(0))
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != n {
		t.Fatalf("%d pods, %v", len(pods.Items), err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, "every status to count its pod Ready", statusIs(1))
	if c := testenv.Requests(t, cs, "update", "replicasets", "status", "409"); c != 0 {
		t.Errorf("%v status updates conflicted", c)
	}
	if w := testenv.Requests(t, cs, "update", "replicasets", "status", ""); w > 2*n {
		t.Errorf("%v status updates for %d ReplicaSets, want at most 2 each", w, n)
	}
}
