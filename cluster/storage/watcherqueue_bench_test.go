package storage

import (
	"context"
	"testing"
)

// BenchmarkWatcherQueue is one item through a watcher's queue: queued by
// the fan-out (under the cache's lock in the cache) and taken by the
// watch's reader on another goroutine, as a live watch does.
func BenchmarkWatcherQueue(b *testing.B) {
	w := &Watcher{c: &Cacher{}, ready: make(chan struct{}, 1), done: make(chan struct{})}
	e := &Entry{RV: 1}
	ctx := context.Background()
	b.ReportAllocs()
	go func() {
		for range b.N {
			for !w.queue(Item{Entry: e}, 4096) {
				// full: the reader catches up
			}
		}
	}()
	for range b.N {
		if _, err := w.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
