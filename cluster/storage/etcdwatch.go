package storage

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"
)

// Stream is a watch a client reads: a Cacher's Watcher, or an EtcdWatcher
// for a resource without a watch cache.
type Stream interface {
	// Next returns the next item, blocking until there is one, a bookmark
	// is due, ctx ends or the watch closes.
	Next(ctx context.Context) (Item, error)
	// Pending is how many items are ready without blocking.
	Pending() int
	// Stop ends the watch; safe to call more than once.
	Stop()
}

var (
	_ Stream = (*Watcher)(nil)
	_ Stream = (*EtcdWatcher)(nil)
)

// EtcdWatcher is one client's watch served straight from etcd: one etcd
// watch (on a gRPC stream of its own) per client watch, each change decoded
// once for its one watcher. It is for a resource the apiserver keeps no
// watch cache of — Events, as upstream has them: a cache would hold every
// Event etcd holds, and decode every Event written, for the rare client
// that watches them. It keeps the Cacher's contract: ADDED, MODIFIED and
// DELETED as the filter sees the object before and after each change, a
// resume from a compacted revision is ErrCompacted (410), SendInitial
// streams the current objects (at one revision, sorted by key) first, and
// bookmarks come from etcd's progress notifications, so a bookmark is never
// ahead of a change not yet delivered.
type EtcdWatcher struct {
	codec  Codec
	opts   WatchOptions
	watch  clientv3.Watcher
	wch    clientv3.WatchChan
	wctx   context.Context
	cancel context.CancelFunc

	pend     []Item
	lastRV   int64 // the last revision delivered
	covered  int64 // changes at or below this were delivered before the watch began
	bookmark *time.Timer
	asked    bool // a progress notification was requested and not yet answered
}

// WatchEtcd starts a watch of the keys under prefix, decoded with codec.
// A FromRV older than etcd's compacted revision returns ErrCompacted.
func (s *Store) WatchEtcd(ctx context.Context, prefix string, codec Codec, o WatchOptions) (*EtcdWatcher, error) {
	rev, err := s.Revision(ctx)
	if err != nil {
		return nil, err
	}
	w := &EtcdWatcher{codec: codec, opts: o}
	switch {
	case o.FromRV == 0 || o.SendInitial:
		if o.SendInitial {
			if err := w.listInitial(ctx, s, prefix, rev); err != nil {
				return nil, err
			}
		}
		if o.InitialEventsEnd {
			w.pend = append(w.pend, Item{Type: watch.Bookmark, Entry: newEntry(codec, "", codec.Bookmark(rev, true), rev, nil)})
		}
		w.lastRV = rev
	default:
		if o.FromRV < rev {
			// Still in etcd's history? A read at the next revision says.
			if _, err := s.List(ctx, prefix, "", o.FromRV+1, 1); err != nil {
				return nil, err
			}
		}
		w.lastRV = o.FromRV
	}
	// etcd answers a progress request (a bookmark) only for watches that
	// start at or below its revision: one starting at the next revision
	// would wait for a write. So the watch starts at most at rev, and what
	// it replays at or below what is already covered is skipped.
	w.covered = w.lastRV
	start := min(w.lastRV+1, rev)
	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	w.watch = clientv3.NewWatcher(s.cli)
	// The stream is found by its context's metadata: progress requests
	// must carry the same.
	w.wctx = clientv3.WithRequireLeader(wctx)
	w.wch = w.watch.Watch(w.wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(start), clientv3.WithPrevKV())
	return w, nil
}

// listInitial queues the objects under prefix at rev as ADDED, a page at a
// time, in key order.
func (w *EtcdWatcher) listInitial(ctx context.Context, s *Store, prefix string, rev int64) error {
	start := ""
	for {
		page, err := s.List(ctx, prefix, start, rev, 500)
		if err != nil {
			return err
		}
		for _, kv := range page.KVs {
			obj, err := w.codec.Decode(kv.Key, kv.Value, kv.ModRev)
			if err != nil {
				return fmt.Errorf("decode %s: %w", kv.Key, err)
			}
			if e := newEntry(w.codec, kv.Key, obj, kv.ModRev, kv.Value); w.opts.Filter.matches(e) {
				w.pend = append(w.pend, Item{Type: watch.Added, Entry: e})
			}
		}
		if !page.More || len(page.KVs) == 0 {
			return nil
		}
		start = page.KVs[len(page.KVs)-1].Key + "\x00"
	}
}

// Next returns the next item.
func (w *EtcdWatcher) Next(ctx context.Context) (Item, error) {
	var tick <-chan time.Time
	for {
		if len(w.pend) > 0 {
			return popItem(&w.pend, &w.lastRV), nil
		}
		if tick == nil && w.opts.Bookmarks && w.opts.BookmarkInterval > 0 && !w.asked {
			w.bookmark = resetTimer(w.bookmark, w.opts.BookmarkInterval)
			tick = w.bookmark.C
		}
		select {
		case resp, ok := <-w.wch:
			if !ok {
				return Item{}, ErrWatchClosed
			}
			if err := w.take(resp); err != nil {
				return Item{}, err
			}
		case <-tick:
			// etcd answers on this watch's stream once every change up to
			// its current revision has been sent on it.
			tick = nil
			if err := w.watch.RequestProgress(w.wctx); err == nil {
				w.asked = true
			}
		case <-ctx.Done():
			return Item{}, ctx.Err()
		}
	}
}

// take turns one etcd watch response into items.
func (w *EtcdWatcher) take(resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		return fmt.Errorf("watch from %d, compacted at %d: %w", w.lastRV, resp.CompactRevision, ErrCompacted)
	}
	if err := resp.Err(); err != nil {
		return fmt.Errorf("etcd watch: %w", err)
	}
	if resp.IsProgressNotify() {
		w.asked = false
		if rev := resp.Header.Revision; w.opts.Bookmarks && rev >= w.lastRV {
			w.pend = append(w.pend, Item{Type: watch.Bookmark, Entry: newEntry(w.codec, "", w.codec.Bookmark(rev, false), rev, nil)})
		}
		return nil
	}
	for _, ev := range resp.Events {
		key := string(ev.Kv.Key)
		rev := ev.Kv.ModRevision
		if rev <= w.covered {
			continue
		}
		var cur, prev *Entry
		if ev.Type == clientv3.EventTypePut {
			obj, err := w.codec.Decode(key, ev.Kv.Value, rev)
			if err != nil {
				return fmt.Errorf("decode %s: %w", key, err)
			}
			cur = newEntry(w.codec, key, obj, rev, ev.Kv.Value)
		}
		if ev.PrevKv != nil {
			obj, err := w.codec.Decode(key, ev.PrevKv.Value, ev.PrevKv.ModRevision)
			if err != nil {
				return fmt.Errorf("decode %s: %w", key, err)
			}
			prev = newEntry(w.codec, key, obj, ev.PrevKv.ModRevision, ev.PrevKv.Value)
		}
		curOK, prevOK := w.opts.Filter.matches(cur), w.opts.Filter.matches(prev)
		switch {
		case curOK && prevOK:
			w.pend = append(w.pend, Item{Type: watch.Modified, Entry: cur})
		case curOK:
			w.pend = append(w.pend, Item{Type: watch.Added, Entry: cur})
		case prevOK:
			gone := prev.at(rev)
			w.pend = append(w.pend, Item{Type: watch.Deleted, Entry: gone})
		}
	}
	return nil
}

// Pending is how many items are ready without blocking.
func (w *EtcdWatcher) Pending() int { return len(w.pend) }

// Stop ends the etcd watch.
func (w *EtcdWatcher) Stop() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
		_ = w.watch.Close()
	}
	if w.bookmark != nil {
		w.bookmark.Stop()
	}
}
