package bench

import (
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
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
	var servers []map[string]*dto.MetricFamily
	for _, text := range []string{server0, server1} {
		f, err := parseMetrics(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, f)
	}
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
