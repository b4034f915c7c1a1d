package storage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// Space reads every member's Status and the cluster's alarms
// (etcdadmin.Space on the store's client).
func (s *Store) Space(ctx context.Context) ([]etcdadmin.MemberSpace, error) {
	return etcdadmin.Space(ctx, s.cli)
}

// NoSpaceAlarms are the members whose NOSPACE alarm is raised
// (etcdadmin.NoSpaceAlarms on the store's client).
func (s *Store) NoSpaceAlarms(ctx context.Context) ([]uint64, error) {
	return etcdadmin.NoSpaceAlarms(ctx, s.cli)
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
