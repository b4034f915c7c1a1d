package controller

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// PodInformer is the pod informer every controller of this Context must
// use. A factory holds one informer per type and the first to ask decides
// which: going through here, the slow-watch failpoint (Options.PodWatchDelay)
// applies to all controllers whatever order they are built in.
func (c *Context) PodInformer() cache.SharedIndexInformer {
	delay := c.Options.PodWatchDelay
	if delay <= 0 {
		return c.Informers.Core().V1().Pods().Informer()
	}
	client := c.Client
	return c.Informers.InformerFor(&corev1.Pod{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return client.CoreV1().Pods("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				w, err := client.CoreV1().Pods("").Watch(ctx, o)
				if err != nil {
					return nil, err
				}
				return delayWatch(w, delay), nil
			},
		}
		return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
}

// delayWatch passes w's events on in order, each d after it arrived.
func delayWatch(w watch.Interface, d time.Duration) watch.Interface {
	type due struct {
		ev watch.Event
		at time.Time
	}
	in := make(chan due, 4096)
	p := &delayed{w: w, ch: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(in)
		for ev := range w.ResultChan() {
			in <- due{ev, time.Now().Add(d)}
		}
	}()
	go func() {
		defer close(p.ch)
		for x := range in {
			time.Sleep(time.Until(x.at))
			select {
			case p.ch <- x.ev:
			case <-p.stop: // the reader is gone: drain w and end
			}
		}
	}()
	return p
}

type delayed struct {
	w    watch.Interface
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (p *delayed) Stop() {
	p.once.Do(func() { close(p.stop) })
	p.w.Stop()
}

func (p *delayed) ResultChan() <-chan watch.Event { return p.ch }

// PodReady reports whether the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodAvailable reports whether the pod has been Ready for minReady seconds
// at now (upstream's podutil.IsPodAvailable): what ReplicaSets and
// DaemonSets count as available.
func PodAvailable(p *corev1.Pod, minReady int32, now time.Time) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return minReady == 0 || !c.LastTransitionTime.Add(time.Duration(minReady)*time.Second).After(now)
		}
	}
	return false
}
