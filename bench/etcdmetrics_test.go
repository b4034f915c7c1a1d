package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func etcdFams(t *testing.T, leader, changes, committed float64, fsyncBuckets [3]uint64) map[string]*dto.MetricFamily {
	t.Helper()
	var b strings.Builder
	w := func(s string, a ...any) { b.WriteString(strings.TrimSpace(fmt.Sprintf(s, a...)) + "\n") }
	w("# TYPE etcd_server_is_leader gauge\netcd_server_is_leader %g", leader)
	w("# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total %g", changes)
	w("# TYPE etcd_server_proposals_committed_total gauge\netcd_server_proposals_committed_total %g", committed)
	w("# TYPE etcd_disk_wal_fsync_duration_seconds histogram")
	w(`etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} %d`, fsyncBuckets[0])
	w(`etcd_disk_wal_fsync_duration_seconds_bucket{le="0.002"} %d`, fsyncBuckets[1])
	w(`etcd_disk_wal_fsync_duration_seconds_bucket{le="+Inf"} %d`, fsyncBuckets[2])
	w("etcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count %d", fsyncBuckets[2])
	fams, err := parseMetrics(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// Counters and histograms are differenced over the load; a member that
// restarted in between counts from its start; empty histograms are 0, not
// NaN (run.json cannot hold NaN).
func TestEtcdStats(t *testing.T) {
	before := etcdSnapshot{
		"etcd-0": etcdFams(t, 1, 1, 100, [3]uint64{100, 100, 100}),
		"etcd-1": etcdFams(t, 0, 1, 100, [3]uint64{90, 100, 100}),
		"etcd-2": etcdFams(t, 0, 1, 100, [3]uint64{100, 100, 100}),
	}
	after := etcdSnapshot{
		// 100 more fsyncs, all between 1 and 2 ms: p50 1.5 ms.
		"etcd-0": etcdFams(t, 1, 1, 300, [3]uint64{100, 200, 200}),
		// Saw one election during the load.
		"etcd-1": etcdFams(t, 0, 2, 300, [3]uint64{90, 200, 200}),
		// Restarted: fewer proposals than before, so counted whole.
		"etcd-2": etcdFams(t, 0, 1, 40, [3]uint64{40, 40, 40}),
		// No before snapshot: counted whole.
		"etcd-3": etcdFams(t, 0, 1, 7, [3]uint64{0, 0, 0}),
	}
	got := etcdStats(before, after)
	if len(got) != 4 || got[0].Name != "etcd-0" || got[3].Name != "etcd-3" {
		t.Fatalf("members %+v", got)
	}
	e0, e1, e2, e3 := got[0], got[1], got[2], got[3]
	if !e0.Leader || e1.Leader || e0.LeaderChanges != 0 || e1.LeaderChanges != 1 {
		t.Errorf("leadership: %+v %+v", e0, e1)
	}
	if e0.ProposalsCommitted != 200 || e0.Fsyncs != 100 || math.Abs(e0.FsyncP50MS-1.5) > 1e-9 {
		t.Errorf("etcd-0 over the load: %+v", e0)
	}
	if e2.ProposalsCommitted != 40 || e2.Fsyncs != 40 || e2.LeaderChanges != 1 {
		t.Errorf("restarted member: %+v", e2)
	}
	if e3.ProposalsCommitted != 7 || e3.Fsyncs != 0 || e3.FsyncP99MS != 0 {
		t.Errorf("member without a before snapshot: %+v", e3)
	}
}

// The database figures are gauges: read, not differenced; bytes per key is
// in use after over the keys after.
func TestEtcdStatsDatabase(t *testing.T) {
	db := func(size, inUse, keys float64) map[string]*dto.MetricFamily {
		fams, err := parseMetrics(strings.NewReader(fmt.Sprintf(
			"# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes %g\n"+
				"# TYPE etcd_mvcc_db_total_size_in_use_in_bytes gauge\netcd_mvcc_db_total_size_in_use_in_bytes %g\n"+
				"# TYPE etcd_debugging_mvcc_keys_total gauge\netcd_debugging_mvcc_keys_total %g\n", size, inUse, keys)))
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	got := etcdStats(etcdSnapshot{"etcd-0": db(1<<20, 1<<19, 10)}, etcdSnapshot{"etcd-0": db(8<<20, 4<<20, 2048)})
	m := got[0]
	if m.DBSizeBefore != 1<<20 || m.DBInUseBefore != 1<<19 || m.DBSizeAfter != 8<<20 || m.DBInUseAfter != 4<<20 || m.Keys != 2048 || m.BytesPerKey != 2048 {
		t.Errorf("database figures %+v", m)
	}
}
