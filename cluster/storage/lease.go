package storage

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// KeepKey holds key = value under an etcd lease of ttl for as long as ctx
// lives: granted, written, kept alive, and granted and written again
// whenever the lease is lost (etcd unreachable past the ttl, a partition,
// a restarted cluster). If the process dies, etcd deletes the key within
// ttl; when ctx ends the lease is revoked and the key goes at once. It
// returns when ctx ends.
func (s *Store) KeepKey(ctx context.Context, key string, value []byte, ttl time.Duration) {
	secs := max(int64(ttl/time.Second), 1)
	for ctx.Err() == nil {
		id, err := s.putWithLease(ctx, key, value, secs)
		if err != nil {
			sleepCtx(ctx, time.Second)
			continue
		}
		alive, err := s.cli.KeepAlive(ctx, id)
		if err == nil {
			for range alive { // closes when the lease is lost or ctx ends
			}
		}
		if ctx.Err() != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_, _ = s.cli.Revoke(rctx, id)
			cancel()
			return
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

func (s *Store) putWithLease(ctx context.Context, key string, value []byte, secs int64) (clientv3.LeaseID, error) {
	defer s.observe("lease", key, time.Now())
	actx, cancel := context.WithTimeout(ctx, s.retry.Attempt)
	defer cancel()
	g, err := s.cli.Grant(actx, secs)
	if err != nil {
		return 0, err
	}
	if _, err := s.cli.Put(actx, key, string(value), clientv3.WithLease(g.ID)); err != nil {
		_, _ = s.cli.Revoke(context.WithoutCancel(actx), g.ID)
		return 0, err
	}
	return g.ID, nil
}

// Changes sends on the returned channel (capacity one, so changes coalesce)
// whenever a key under prefix is written or deleted, and once at the start
// and after every watch restart, when changes may have been missed. It
// stops when ctx ends.
func (s *Store) Changes(ctx context.Context, prefix string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	notify := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		for ctx.Err() == nil {
			// The watch starts after the revision the notice covers: what
			// the receiver reads after it is at least that new.
			head, err := s.cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err != nil {
				sleepCtx(ctx, 200*time.Millisecond)
				continue
			}
			notify()
			wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
			for resp := range s.cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(head.Header.Revision+1)) {
				if resp.Err() != nil {
					break
				}
				if len(resp.Events) > 0 {
					notify()
				}
			}
			cancel()
			sleepCtx(ctx, 200*time.Millisecond)
		}
	}()
	return ch
}
