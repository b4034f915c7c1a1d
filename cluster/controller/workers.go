package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// RunWorkers is every controller's Run: wait for the caches, then sync keys
// from queue with workers goroutines until ctx ends. A key that syncs is
// forgotten by the rate limiter; one that fails is requeued with backoff
// (not after ctx ended: the next leader resyncs it). The workqueue
// guarantees no key is synced by two workers at once.
func RunWorkers[K comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[K], workers int,
	synced []cache.InformerSynced, syncKey func(context.Context, K) error, log *slog.Logger) {
	defer utilruntime.HandleCrash()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for processNext(ctx, queue, syncKey, log) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}

func processNext[K comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[K], syncKey func(context.Context, K) error, log *slog.Logger) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	err := syncKey(ctx, key)
	switch {
	case err == nil:
		queue.Forget(key)
	case ctx.Err() != nil:
	default:
		log.Debug("sync failed, requeued", "key", fmt.Sprint(key), "err", err)
		queue.AddRateLimited(key)
	}
	return true
}
