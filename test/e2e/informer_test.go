package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// An informer on apiserver 1 sees every change made through apiserver 0
// exactly once, in resourceVersion order, across a SIGKILL and restart of
// apiserver 1.
func TestInformerAcrossAPIServerRestart(t *testing.T) {
	inLane(t, hollowProcs)
	p := upProvider(t, 2)
	conf := p.Kubeconfig()
	writer := clientFor(t, conf, "kstep")
	reader := clientFor(t, conf, "kstep-apiserver-1")

	var mu sync.Mutex
	var got []string
	var last int64
	var order []string
	record := func(kind string, obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			mu.Lock()
			order = append(order, fmt.Sprintf("%s of %T", kind, obj))
			mu.Unlock()
			return
		}
		rv, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
		mu.Lock()
		defer mu.Unlock()
		if rv <= last {
			order = append(order, fmt.Sprintf("%s %s rv %d after %d", kind, pod.Name, rv, last))
		}
		last = rv
		got = append(got, kind+" "+pod.Name+" "+pod.ResourceVersion)
	}
	stop := make(chan struct{})
	defer close(stop)
	f := informers.NewSharedInformerFactory(reader, 0)
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { record("ADDED", o) },
		UpdateFunc: func(_, o any) { record("MODIFIED", o) },
		DeleteFunc: func(o any) { record("DELETED", o) },
	})
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("informer never synced")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pods := writer.CoreV1().Pods("default")
	var want []string
	write := func(from, to int) {
		for i := from; i < to; i++ {
			name := fmt.Sprintf("p%03d", i)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.kstep.local/app:v1"}}}}
			created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, "ADDED "+name+" "+created.ResourceVersion)
			created.Labels = map[string]string{"v": "2"}
			upd, err := pods.Update(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, "MODIFIED "+name+" "+upd.ResourceVersion)
			if i%4 == 0 {
				if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				// The deletion's revision is not returned to the writer.
				want = append(want, "DELETED "+name+" ?")
			}
		}
	}
	write(0, 30)
	if err := p.Stop(ctx, "apiserver-1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	write(30, 60) // while the informer's apiserver is dead
	if err := p.Start(ctx, "apiserver-1"); err != nil {
		t.Fatal(err)
	}
	write(60, 90)

	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // a duplicate would arrive now
	mu.Lock()
	defer mu.Unlock()
	if len(order) > 0 {
		t.Fatalf("events out of order or unexpected: %v", order)
	}
	if len(got) != len(want) {
		t.Fatalf("informer saw %d events, writer caused %d\nwant %v\ngot  %v", len(got), len(want), want, got)
	}
	for i := range want {
		g := got[i]
		if strings.HasSuffix(want[i], "?") {
			g = g[:strings.LastIndexByte(g, ' ')] + " ?"
		}
		if want[i] != g {
			t.Fatalf("event %d: want %q, got %q", i, want[i], got[i])
		}
	}
}
