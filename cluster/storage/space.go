package storage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MemberSpace is one etcd member's database as its Status reports it.
type MemberSpace struct {
	Endpoint string `json:"endpoint"`
	MemberID uint64 `json:"member_id"`
	// DBSize is the backend file's size; DBSizeInUse what its live pages
	// take. The difference is what a defragmentation gives back.
	DBSize      int64 `json:"db_size"`
	DBSizeInUse int64 `json:"db_size_in_use"`
	// NoSpace: the member's NOSPACE alarm is raised (it refuses writes).
	NoSpace bool `json:"no_space"`
}

// Fragmentation is the share of the file not in use.
func (m MemberSpace) Fragmentation() float64 {
	if m.DBSize <= 0 {
		return 0
	}
	return float64(m.DBSize-m.DBSizeInUse) / float64(m.DBSize)
}

// Space reads every endpoint's Status and the cluster's alarms.
func (s *Store) Space(ctx context.Context) ([]MemberSpace, error) {
	ids, err := s.NoSpaceAlarms(ctx)
	if err != nil {
		return nil, err
	}
	nospace := map[uint64]bool{}
	for _, id := range ids {
		nospace[id] = true
	}
	var out []MemberSpace
	for _, ep := range s.cli.Endpoints() {
		st, err := s.cli.Status(ctx, ep)
		if err != nil {
			return out, fmt.Errorf("etcd status %s: %w", ep, err)
		}
		out = append(out, MemberSpace{Endpoint: ep, MemberID: st.Header.MemberId, DBSize: st.DbSize,
			DBSizeInUse: st.DbSizeInUse, NoSpace: nospace[st.Header.MemberId]})
	}
	return out, nil
}

// NoSpaceAlarms are the members whose NOSPACE alarm is raised.
func (s *Store) NoSpaceAlarms(ctx context.Context) ([]uint64, error) {
	alarms, err := s.cli.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcd alarms: %w", err)
	}
	var out []uint64
	for _, a := range alarms.Alarms {
		if a.Alarm == etcdserverpb.AlarmType_NOSPACE {
			out = append(out, a.MemberID)
		}
	}
	return out, nil
}

// Recovery is what Recover did.
type Recovery struct {
	CompactedTo int64         `json:"compacted_to"`
	Before      []MemberSpace `json:"before"`
	After       []MemberSpace `json:"after"`
	Disarmed    int           `json:"disarmed"`
}

// Recover brings an etcd whose space quota filled back to accepting
// writes, etcd's documented procedure: compact the whole history up to rev
// (0: the current revision; watches resuming from before it get 410 and
// relist; a caller that must read the history first names the revision it
// read up to),
// defragment each member in turn (each blocks while it rewrites its file),
// then disarm the NOSPACE alarms. Objects are untouched: compaction drops
// only superseded versions.
func (s *Store) Recover(ctx context.Context, rev int64, log *slog.Logger) (Recovery, error) {
	var r Recovery
	var err error
	if r.Before, err = s.Space(ctx); err != nil {
		return r, err
	}
	r.CompactedTo = rev
	if rev == 0 {
		resp, err := s.cli.Get(ctx, CompactRevKey)
		if err != nil {
			return r, fmt.Errorf("etcd revision: %w", err)
		}
		r.CompactedTo = resp.Header.Revision
	}
	if _, err := s.cli.Compact(ctx, r.CompactedTo, clientv3.WithCompactPhysical()); err != nil && !isCompacted(err) {
		return r, fmt.Errorf("compact to %d: %w", r.CompactedTo, err)
	}
	log.Info("etcd compacted", "rev", r.CompactedTo)
	for _, ep := range s.cli.Endpoints() {
		if _, err := s.cli.Defragment(ctx, ep); err != nil {
			return r, fmt.Errorf("defragment %s: %w", ep, err)
		}
		log.Info("etcd member defragmented", "endpoint", ep)
	}
	ids, err := s.NoSpaceAlarms(ctx)
	if err != nil {
		return r, err
	}
	for _, id := range ids {
		if _, err := s.cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: id, Alarm: etcdserverpb.AlarmType_NOSPACE}); err != nil {
			return r, fmt.Errorf("disarm NOSPACE on member %x: %w", id, err)
		}
		r.Disarmed++
	}
	if r.After, err = s.Space(ctx); err != nil {
		return r, err
	}
	return r, nil
}

// defragFragmented defragments, one at a time, the members whose file is
// more than threshold unused and at least minBytes large.
func (s *Store) defragFragmented(ctx context.Context, threshold float64, minBytes int64, log *slog.Logger) error {
	ms, err := s.Space(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Fragmentation() <= threshold || m.DBSize < minBytes {
			continue
		}
		start := time.Now()
		if _, err := s.cli.Defragment(ctx, m.Endpoint); err != nil {
			return fmt.Errorf("defragment %s: %w", m.Endpoint, err)
		}
		s.defrags.Inc()
		log.Info("etcd member defragmented", "endpoint", m.Endpoint, "db", m.DBSize, "inUse", m.DBSizeInUse,
			"fragmented", fmt.Sprintf("%.0f%%", 100*m.Fragmentation()), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
