package etcdadmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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

// ErrNoSpace: etcd refused a write because its space quota is full (its
// NOSPACE alarm is raised); reads still work. Writes fail until the
// history is compacted, the members defragmented and the alarm disarmed
// (Recover). The message is etcd's own.
var ErrNoSpace = errors.New("etcdserver: mvcc: database space exceeded")

// Space reads every endpoint of cli's Status and the cluster's alarms.
func Space(ctx context.Context, cli *clientv3.Client) ([]MemberSpace, error) {
	ids, err := NoSpaceAlarms(ctx, cli)
	if err != nil {
		return nil, err
	}
	nospace := map[uint64]bool{}
	for _, id := range ids {
		nospace[id] = true
	}
	var out []MemberSpace
	for _, ep := range cli.Endpoints() {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			return out, fmt.Errorf("etcd status %s: %w", ep, err)
		}
		out = append(out, MemberSpace{Endpoint: ep, MemberID: st.Header.MemberId, DBSize: st.DbSize,
			DBSizeInUse: st.DbSizeInUse, NoSpace: nospace[st.Header.MemberId]})
	}
	return out, nil
}

// NoSpaceAlarms are the members whose NOSPACE alarm is raised.
func NoSpaceAlarms(ctx context.Context, cli *clientv3.Client) ([]uint64, error) {
	alarms, err := cli.AlarmList(ctx)
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
func Recover(ctx context.Context, cli *clientv3.Client, rev int64, log *slog.Logger) (Recovery, error) {
	var r Recovery
	var err error
	if r.Before, err = Space(ctx, cli); err != nil {
		return r, err
	}
	r.CompactedTo = rev
	if rev == 0 {
		// Any key's answer carries the store's revision in its header.
		resp, err := cli.Get(ctx, "/", clientv3.WithCountOnly())
		if err != nil {
			return r, fmt.Errorf("etcd revision: %w", err)
		}
		r.CompactedTo = resp.Header.Revision
	}
	if _, err := cli.Compact(ctx, r.CompactedTo, clientv3.WithCompactPhysical()); err != nil && !IsCompacted(err) {
		return r, fmt.Errorf("compact to %d: %w", r.CompactedTo, err)
	}
	log.Info("etcd compacted", "rev", r.CompactedTo)
	for _, ep := range cli.Endpoints() {
		if _, err := cli.Defragment(ctx, ep); err != nil {
			return r, fmt.Errorf("defragment %s: %w", ep, err)
		}
		log.Info("etcd member defragmented", "endpoint", ep)
	}
	ids, err := NoSpaceAlarms(ctx, cli)
	if err != nil {
		return r, err
	}
	for _, id := range ids {
		if _, err := cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: id, Alarm: etcdserverpb.AlarmType_NOSPACE}); err != nil {
			return r, fmt.Errorf("disarm NOSPACE on member %x: %w", id, err)
		}
		r.Disarmed++
	}
	if r.After, err = Space(ctx, cli); err != nil {
		return r, err
	}
	return r, nil
}

// IsCompacted reports whether err is etcd's answer for a revision
// compacted away.
func IsCompacted(err error) bool {
	return err == rpctypes.ErrCompacted || strings.Contains(err.Error(), rpctypes.ErrCompacted.Error())
}
