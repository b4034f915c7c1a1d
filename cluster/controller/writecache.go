package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// WriteCache layers an informer's store with the objects a controller wrote
// itself, the newer resourceVersion winning (client-go's MutationCache). A
// sync that runs before the watch has delivered the controller's own last
// write then sees that write, not the older cached copy, so it neither
// repeats the write nor sends one bound to fail with a 409 Conflict. Each
// such conflict costs an etcd round trip, a retry and often an Event:
// write amplification that lands on step ①'s latency for everyone.
//
// Record every object the apiserver returned from a successful create or
// update; read with GetByKey. Deletions are learnt from the informer only:
// a tombstone for an object the store still holds would be newer than it
// and be returned as the object. With adds, an object the controller created
// is returned before its informer has seen it (the Endpoints controller's
// create, which would otherwise be repeated into an AlreadyExists).
type WriteCache struct{ mc cache.MutationCache }

// writeCacheSize bounds how many written objects are remembered: a
// controller's writes are seen by its informer within milliseconds, so only
// the burst in between needs holding.
const writeCacheSize = 16384

// NewWriteCache layers inf's store; the informer's own events prune entries
// it has caught up with.
func NewWriteCache(inf cache.SharedIndexInformer, adds bool) *WriteCache {
	mc := cache.NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), inf.GetStore(), cache.MutationCacheOptions{
		TTL: time.Minute, IncludeAdds: adds, MaxCacheSize: writeCacheSize, Indexer: inf.GetIndexer(),
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onAddOrUpdate(mc, obj) },
		UpdateFunc: func(_, obj any) { onAddOrUpdate(mc, obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if o, ok := obj.(runtime.Object); ok {
				mc.OnDelete(o)
			}
		},
	})
	return &WriteCache{mc: mc}
}

func onAddOrUpdate(mc cache.MutationCache, obj any) {
	if o, ok := obj.(runtime.Object); ok {
		mc.OnAddOrUpdate(o)
	}
}

// GetByKey returns the newer of the informer's copy and the last write.
func (w *WriteCache) GetByKey(key string) (any, bool, error) { return w.mc.GetByKey(key) }

// ByIndex is the informer's index lookup with the same layering: the
// newer copy of each object, and (with adds) the objects written but not
// yet seen that the index function puts under key.
func (w *WriteCache) ByIndex(index, key string) ([]any, error) { return w.mc.ByIndex(index, key) }

// Wrote records an object the apiserver returned from a write.
func (w *WriteCache) Wrote(obj runtime.Object) { w.mc.Mutation(obj) }
