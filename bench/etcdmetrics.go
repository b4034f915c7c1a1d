package bench

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

// The etcd metrics the report reads (etcd's own names).
const (
	etcdLeaderChanges = "etcd_server_leader_changes_seen_total"
	etcdIsLeader      = "etcd_server_is_leader"
	etcdCommitted     = "etcd_server_proposals_committed_total"
	etcdFailed        = "etcd_server_proposals_failed_total"
	etcdHeartbeatFail = "etcd_server_heartbeat_send_failures_total"
	etcdSlowApplies   = "etcd_server_slow_apply_total"
	etcdFsync         = "etcd_disk_wal_fsync_duration_seconds"
	etcdBackendCommit = "etcd_disk_backend_commit_duration_seconds"
	etcdDBSize        = "etcd_mvcc_db_total_size_in_bytes"
	etcdDBInUse       = "etcd_mvcc_db_total_size_in_use_in_bytes"
	etcdKeys          = "etcd_debugging_mvcc_keys_total"
)

// etcdSnapshot is every etcd member's metric families at one moment, by
// actor name.
type etcdSnapshot map[string]map[string]*dto.MetricFamily

// scrapeEtcd reads /metrics from every running etcd member: its plain
// metrics URL (a secure cluster's, whose client URL takes only etcd's
// certificates), else its client URL. A member that cannot be read is
// left out and named in the error; the others are still returned.
func scrapeEtcd(ctx context.Context, actors []provider.Actor) (etcdSnapshot, error) {
	out := etcdSnapshot{}
	var failed []string
	for _, a := range actors {
		if a.Role != provider.RoleEtcd || !a.Running() || a.Endpoint == "" {
			continue
		}
		base := a.Endpoint
		if a.MetricsURL != "" {
			base = a.MetricsURL
		}
		fams, err := getMetrics(ctx, strings.TrimSuffix(base, "/")+"/metrics")
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", a.Name, err))
			continue
		}
		out[a.Name] = fams
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("etcd /metrics: %s", strings.Join(failed, "; "))
	}
	return out, nil
}

func getMetrics(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// etcdStats is what each member did between two snapshots (the load phase):
// counters and histograms are differenced, so cluster bootstrap is not
// counted. A member missing from before (or restarted: its counters went
// down) is counted from its start.
func etcdStats(before, after etcdSnapshot) []results.EtcdMember {
	out := make([]results.EtcdMember, 0, len(after))
	for name, a := range after {
		b := before[name]
		if b != nil && scalar(a, etcdCommitted) < scalar(b, etcdCommitted) {
			b = nil // restarted in between
		}
		fsync, commit := histDelta(a[etcdFsync], b[etcdFsync]), histDelta(a[etcdBackendCommit], b[etcdBackendCommit])
		m := results.EtcdMember{
			Name:               name,
			Leader:             scalar(a, etcdIsLeader) == 1,
			LeaderChanges:      uint64(scalar(a, etcdLeaderChanges) - scalar(b, etcdLeaderChanges)),
			ProposalsCommitted: uint64(scalar(a, etcdCommitted) - scalar(b, etcdCommitted)),
			ProposalsFailed:    uint64(scalar(a, etcdFailed) - scalar(b, etcdFailed)),
			HeartbeatFailures:  uint64(scalar(a, etcdHeartbeatFail) - scalar(b, etcdHeartbeatFail)),
			SlowApplies:        uint64(scalar(a, etcdSlowApplies) - scalar(b, etcdSlowApplies)),
			Fsyncs:             fsync.count,
			FsyncP50MS:         1000 * fsync.quantile(0.50),
			FsyncP99MS:         1000 * fsync.quantile(0.99),
			BackendCommitP99MS: 1000 * commit.quantile(0.99),
			DBSizeBefore:       int64(scalar(b, etcdDBSize)),
			DBSizeAfter:        int64(scalar(a, etcdDBSize)),
			DBInUseBefore:      int64(scalar(b, etcdDBInUse)),
			DBInUseAfter:       int64(scalar(a, etcdDBInUse)),
			Keys:               int64(scalar(a, etcdKeys)),
		}
		if m.Keys > 0 {
			m.BytesPerKey = float64(m.DBInUseAfter) / float64(m.Keys)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// scalar is the sum of a counter or gauge family's values; 0 when absent.
func scalar(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var v float64
	for _, m := range f.GetMetric() {
		switch {
		case m.GetCounter() != nil:
			v += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			v += m.GetGauge().GetValue()
		}
	}
	return v
}

// hist is one histogram's cumulative buckets.
type hist struct {
	bounds []float64
	cum    []uint64
	count  uint64
}

// quantile is 0 for an empty histogram (run.json has no NaN).
func (h hist) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	return bucketQuantile(q, h.bounds, h.cum, h.count)
}

// histDelta is after − before for a single-series histogram family; before
// may be nil.
func histDelta(after, before *dto.MetricFamily) hist {
	var h hist
	if after == nil || len(after.GetMetric()) == 0 || after.GetMetric()[0].GetHistogram() == nil {
		return h
	}
	ah := after.GetMetric()[0].GetHistogram()
	h.count = ah.GetSampleCount()
	for _, b := range ah.GetBucket() {
		h.bounds = append(h.bounds, b.GetUpperBound())
		h.cum = append(h.cum, b.GetCumulativeCount())
	}
	if before == nil || len(before.GetMetric()) == 0 || before.GetMetric()[0].GetHistogram() == nil {
		return h
	}
	bh := before.GetMetric()[0].GetHistogram()
	if len(bh.GetBucket()) != len(h.cum) || bh.GetSampleCount() > h.count {
		return h
	}
	h.count -= bh.GetSampleCount()
	for i, b := range bh.GetBucket() {
		h.cum[i] -= b.GetCumulativeCount()
	}
	return h
}
