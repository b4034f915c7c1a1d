package bench

import (
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/kstep-dev/kstep/results"
)

const server0 = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.001"} 0
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.002"} 50
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.004"} 90
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="+Inf"} 100
apiserver_request_duration_seconds_sum{group="",resource="pods",subresource="",verb="create"} 0.25
apiserver_request_duration_seconds_count{group="",resource="pods",subresource="",verb="create"} 100
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="status",verb="update",le="0.001"} 2
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="status",verb="update",le="0.002"} 2
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="status",verb="update",le="0.004"} 2
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="status",verb="update",le="+Inf"} 2
apiserver_request_duration_seconds_sum{group="",resource="pods",subresource="status",verb="update"} 0.001
apiserver_request_duration_seconds_count{group="",resource="pods",subresource="status",verb="update"} 2
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",group="",resource="pods",subresource="",verb="create"} 97
apiserver_request_total{code="503",group="",resource="pods",subresource="",verb="create"} 3
`

const server1 = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{group="apps",resource="replicasets",subresource="",verb="create",le="0.001"} 0
apiserver_request_duration_seconds_bucket{group="apps",resource="replicasets",subresource="",verb="create",le="0.002"} 0
apiserver_request_duration_seconds_bucket{group="apps",resource="replicasets",subresource="",verb="create",le="0.004"} 0
apiserver_request_duration_seconds_bucket{group="apps",resource="replicasets",subresource="",verb="create",le="+Inf"} 0
apiserver_request_duration_seconds_sum{group="apps",resource="replicasets",subresource="",verb="create"} 0
apiserver_request_duration_seconds_count{group="apps",resource="replicasets",subresource="",verb="create"} 0
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.001"} 0
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.002"} 50
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="0.004"} 90
apiserver_request_duration_seconds_bucket{group="",resource="pods",subresource="",verb="create",le="+Inf"} 100
apiserver_request_duration_seconds_sum{group="",resource="pods",subresource="",verb="create"} 0.25
apiserver_request_duration_seconds_count{group="",resource="pods",subresource="",verb="create"} 100
`

// Two apiservers' histograms merge bucket by bucket; quantiles interpolate
// inside the bucket as histogram_quantile does; 5xx count as errors; a
// verb with no requests is not a row.
func TestAPILatencyMergesAndInterpolates(t *testing.T) {
	servers := parseServers(t, server0, server1)
	rows := apiLatency(servers)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	c := rows[0]
	if c.Verb != "create" || c.Resource != "pods" || c.Count != 200 || c.Errors != 3 {
		t.Fatalf("busiest row %+v", c)
	}
	// 200 samples: 100 in (1,2] ms, 80 in (2,4], 20 beyond. p50 = rank 100
	// = the top of (1,2]; p99 = rank 198 lies in +Inf: the last finite bound.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(c.P50MS, 2) || !near(c.P99MS, 4) || !near(c.MeanMS, 2.5) {
		t.Fatalf("p50 %v p99 %v mean %v", c.P50MS, c.P99MS, c.MeanMS)
	}
	if u := rows[1]; u.Resource != "pods/status" || u.Count != 2 || !near(u.P50MS, 0.5) {
		t.Fatalf("status row %+v", u)
	}
}

// eventsServer is an apiserver's /metrics after hollow kubelets wrote
// Events: creates of new Events, patches of repeated ones' counts.
const eventsServer = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="create",le="0.002"} 8
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="create",le="+Inf"} 8
apiserver_request_duration_seconds_sum{group="",resource="events",subresource="",verb="create"} 0.008
apiserver_request_duration_seconds_count{group="",resource="events",subresource="",verb="create"} 8
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="patch",le="0.002"} 2
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="patch",le="+Inf"} 2
apiserver_request_duration_seconds_sum{group="",resource="events",subresource="",verb="patch"} 0.002
apiserver_request_duration_seconds_count{group="",resource="events",subresource="",verb="patch"} 2
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="list",le="0.002"} 5
apiserver_request_duration_seconds_bucket{group="",resource="events",subresource="",verb="list",le="+Inf"} 5
apiserver_request_duration_seconds_sum{group="",resource="events",subresource="",verb="list"} 0.002
apiserver_request_duration_seconds_count{group="",resource="events",subresource="",verb="list"} 5
`

// The apiservers' Event creates and patches, summed over servers, are a
// row of the run's writes per pod beside the pods' own writes; reads are
// not writes.
func TestEventsAmongWritesPerPod(t *testing.T) {
	servers := parseServers(t, server0, eventsServer, eventsServer)
	r := &results.Run{API: apiLatency(servers), Pods: 10}
	rows, total, events := r.Writes()
	// server0: 100 pod creates, 2 status updates; two servers' 8+2 Event
	// writes each.
	if total != 122 || events != 20 {
		t.Fatalf("writes %d, events %d, want 122 and 20: %+v", total, events, rows)
	}
	if rows[1].Resource != "events" || rows[1].Creates != 16 || rows[1].Patches != 4 || !rows[1].IsEvents() {
		t.Fatalf("events row %+v", rows[1])
	}
	if md := results.Markdown(r); !strings.Contains(md, "| events (Events) | 16 | 0 | 4 | 0 | 20 | 2.00 | 16.4 % |") ||
		!strings.Contains(md, "Writes per pod: 12.20, of which Events 2.00 (16.4 %); 10.20 without Events.") {
		t.Errorf("report.md:\n%s", md)
	}
}

// etcdServer is an apiserver's own etcd request histograms
// (cluster/storage's etcd_request_duration_seconds).
const etcdServer = `# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_bucket{operation="create",type="pods",le="0.002"} 1
etcd_request_duration_seconds_bucket{operation="create",type="pods",le="0.004"} 4
etcd_request_duration_seconds_bucket{operation="create",type="pods",le="+Inf"} 4
etcd_request_duration_seconds_sum{operation="create",type="pods"} 0.012
etcd_request_duration_seconds_count{operation="create",type="pods"} 4
etcd_request_duration_seconds_bucket{operation="get",type="leases",le="0.002"} 0
etcd_request_duration_seconds_bucket{operation="get",type="leases",le="0.004"} 0
etcd_request_duration_seconds_bucket{operation="get",type="leases",le="+Inf"} 0
etcd_request_duration_seconds_sum{operation="get",type="leases"} 0
etcd_request_duration_seconds_count{operation="get",type="leases"} 0
`

// Every apiserver's etcd requests merge by operation and resource type,
// bucket by bucket; a pair with no requests is not a row; the apiservers'
// request histograms are not etcd's.
func TestEtcdLatencyMergesServers(t *testing.T) {
	servers := parseServers(t, etcdServer, etcdServer, server0)
	rows := etcdLatency(servers)
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	// 8 samples: 2 in (0,2] ms, 6 in (2,4]; p50 = rank 4, inside (2,4].
	r := rows[0]
	if r.Verb != "create" || r.Resource != "pods" || r.Count != 8 || math.Abs(r.MeanMS-3) > 1e-9 || math.Abs(r.P50MS-(2+2*2.0/6)) > 1e-9 {
		t.Fatalf("row %+v", r)
	}
}

// parseServers parses each apiserver's /metrics text.
func parseServers(t *testing.T, texts ...string) []map[string]*dto.MetricFamily {
	t.Helper()
	var servers []map[string]*dto.MetricFamily
	for _, text := range texts {
		f, err := parseMetrics(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, f)
	}
	return servers
}
