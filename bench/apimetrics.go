package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/results"
)

// The apiserver's metrics this report reads (cluster/apiserver/metrics.go).
const (
	metricDuration     = "apiserver_request_duration_seconds"
	metricRequests     = "apiserver_request_total"
	metricEtcdDuration = "etcd_request_duration_seconds"
)

// scrapeAPIServers reads /metrics from the apiserver of every context of the
// kubeconfig, with that context's credentials. Each apiserver's families are
// returned in context order.
func scrapeAPIServers(ctx context.Context, kubeconfig string) ([]map[string]*dto.MetricFamily, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []map[string]*dto.MetricFamily
	for _, n := range names {
		rc, err := clientcmd.NewNonInteractiveClientConfig(*raw, n, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("context %s: %w", n, err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, err
		}
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
		if err != nil {
			return nil, fmt.Errorf("context %s: /metrics: %w", n, err)
		}
		fams, err := parseMetrics(body)
		body.Close()
		if err != nil {
			return nil, fmt.Errorf("context %s: /metrics: %w", n, err)
		}
		out = append(out, fams)
	}
	return out, nil
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// apiLatency sums the request-duration histograms of every apiserver by verb
// and resource and estimates p50 and p99 from the merged buckets. Rows are
// ordered by request count, busiest first.
func apiLatency(servers []map[string]*dto.MetricFamily) []results.APILatency {
	key := func(l map[string]string) [2]string {
		res := l["resource"]
		if l["group"] != "" {
			res = l["group"] + "/" + res
		}
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		return [2]string{l["verb"], res}
	}
	rows := mergeHistograms(servers, metricDuration, key)
	for _, fams := range servers {
		f := fams[metricRequests]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labels(m)
			if code := l["code"]; strings.HasPrefix(code, "5") || code == "429" {
				if a := rows[key(l)]; a != nil {
					a.errors += uint64(m.GetCounter().GetValue())
				}
			}
		}
	}
	return latencyRows(rows)
}

// etcdLatency sums every apiserver's own etcd request histograms
// (cluster/storage's etcd_request_duration_seconds) by operation and
// resource type: Verb is the operation, Resource the type.
func etcdLatency(servers []map[string]*dto.MetricFamily) []results.APILatency {
	return latencyRows(mergeHistograms(servers, metricEtcdDuration, func(l map[string]string) [2]string {
		return [2]string{l["operation"], l["type"]}
	}))
}

// histogram is one row's histograms merged over every apiserver.
type histogram struct {
	count, errors uint64
	sum           float64
	bounds        []float64
	cum           []uint64
}

func (a *histogram) add(h *dto.Histogram) {
	a.count += h.GetSampleCount()
	a.sum += h.GetSampleSum()
	for i, b := range h.GetBucket() {
		if i == len(a.bounds) {
			a.bounds = append(a.bounds, b.GetUpperBound())
			a.cum = append(a.cum, 0)
		}
		a.cum[i] += b.GetCumulativeCount()
	}
}

// mergeHistograms merges family's histograms of every apiserver into rows
// keyed by key(labels).
func mergeHistograms(servers []map[string]*dto.MetricFamily, family string, key func(map[string]string) [2]string) map[[2]string]*histogram {
	rows := map[[2]string]*histogram{}
	for _, fams := range servers {
		f := fams[family]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			if h == nil {
				continue
			}
			k := key(labels(m))
			a := rows[k]
			if a == nil {
				a = &histogram{}
				rows[k] = a
			}
			a.add(h)
		}
	}
	return rows
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

// latencyRows are the rows with requests, busiest first.
func latencyRows(rows map[[2]string]*histogram) []results.APILatency {
	out := make([]results.APILatency, 0, len(rows))
	for k, a := range rows {
		if a.count == 0 {
			continue
		}
		out = append(out, results.APILatency{
			Verb: k[0], Resource: k[1], Count: a.count, Errors: a.errors,
			MeanMS: 1000 * a.sum / float64(a.count),
			P50MS:  1000 * bucketQuantile(0.50, a.bounds, a.cum, a.count),
			P99MS:  1000 * bucketQuantile(0.99, a.bounds, a.cum, a.count),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Verb+out[i].Resource < out[j].Verb+out[j].Resource
	})
	return out
}

// bucketQuantile is Prometheus's histogram_quantile: find the bucket holding
// rank q·total and interpolate linearly inside it. A rank beyond the last
// finite bound returns that bound (the +Inf bucket has no width).
func bucketQuantile(q float64, bounds []float64, cum []uint64, total uint64) float64 {
	if total == 0 || len(bounds) == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	lo, prev := 0.0, uint64(0)
	for i, ub := range bounds {
		if float64(cum[i]) >= rank {
			if math.IsInf(ub, 1) {
				return lo
			}
			in := float64(cum[i] - prev)
			if in == 0 {
				return ub
			}
			return lo + (ub-lo)*(rank-float64(prev))/in
		}
		lo, prev = ub, cum[i]
	}
	return lo // rank falls in the implicit +Inf bucket
}
