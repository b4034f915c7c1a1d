package storage

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// CompactRevKey is the key every apiserver's compactor agrees through
// (upstream's "compact_rev_key"): its value is the revision last compacted
// to, its version counts the compactions.
const CompactRevKey = "compact_rev_key"

// Compaction is the compactor's policy.
type Compaction struct {
	// Interval between compactions; <= 0: never.
	Interval time.Duration
	// After a compaction it did, the compactor defragments every member
	// whose file is more than DefragThreshold unused (0: never) and at
	// least DefragMinBytes large, one member at a time (each blocks while
	// it rewrites its file).
	DefragThreshold float64
	DefragMinBytes  int64
}

// Compact runs upstream's compactor until ctx ends: every interval it
// compacts etcd to the revision it saw one interval earlier, so the last
// interval of history stays for watches that resume and lists at a past
// revision. Any number of apiservers run it on one etcd; a transaction on
// CompactRevKey's version lets exactly one of them compact each interval
// (the others see the version moved and adopt it). interval <= 0: never.
// It returns the number of compactions this process did (for tests).
func (s *Store) Compact(ctx context.Context, c Compaction, log *slog.Logger) int {
	interval := c.Interval
	if interval <= 0 {
		return 0
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var version, rev int64 // CompactRevKey's version as last seen; the revision to compact to next
	done := 0
	for {
		select {
		case <-ctx.Done():
			return done
		case <-t.C:
		}
		v, cur, did, err := s.compactOnce(ctx, version, rev)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("etcd compaction", "rev", rev, "err", err)
			}
			// Start over from the key as it is: another apiserver may have
			// moved it meanwhile.
			version, rev = 0, 0
			continue
		}
		if did {
			done++
			log.Debug("etcd compacted", "rev", rev)
			if c.DefragThreshold > 0 {
				if err := s.defragFragmented(ctx, c.DefragThreshold, c.DefragMinBytes, log); err != nil && ctx.Err() == nil {
					log.Warn("etcd defragmentation", "err", err)
				}
			}
		}
		version, rev = v, cur
	}
}

// compactOnce claims the compaction of rev if CompactRevKey's version is
// still version, and compacts. It returns the key's version now, etcd's
// current revision (the next compaction's target) and whether it compacted.
func (s *Store) compactOnce(ctx context.Context, version, rev int64) (int64, int64, bool, error) {
	defer s.observe("compact", "/registry/", time.Now())
	actx, cancel := context.WithTimeout(ctx, s.retry.Budget)
	defer cancel()
	resp, err := s.cli.Txn(actx).If(
		clientv3.Compare(clientv3.Version(CompactRevKey), "=", version),
	).Then(
		clientv3.OpPut(CompactRevKey, strconv.FormatInt(rev, 10)), // the version moves on
	).Else(
		clientv3.OpGet(CompactRevKey),
	).Commit()
	if err != nil {
		return 0, 0, false, err
	}
	cur := resp.Header.Revision
	if !resp.Succeeded {
		// Another apiserver compacted (or claimed) this interval.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return 0, cur, false, nil
		}
		return kvs[0].Version, cur, false, nil
	}
	if rev == 0 {
		return version + 1, cur, false, nil // the first interval: nothing seen to compact to yet
	}
	if _, err := s.cli.Compact(actx, rev); err != nil && !etcdadmin.IsCompacted(err) {
		return version + 1, cur, false, err
	}
	return version + 1, cur, true, nil
}
