package testenv

import (
	"context"
	"fmt"
	"io"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// Requests is how many requests the apiserver behind cs has answered with
// this verb on this resource and subresource, read from its /metrics; code
// "" counts every HTTP code, otherwise only that one ("409").
func Requests(t *testing.T, cs kubernetes.Interface, verb, resource, subresource, code string) float64 {
	t.Helper()
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(context.Background())
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	defer body.Close()
	fams, err := families(body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	var n float64
	f := fams["apiserver_request_total"]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["verb"] == verb && l["resource"] == resource && l["subresource"] == subresource && (code == "" || l["code"] == code) {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// Gauge is the value of the unlabelled gauge name in the Prometheus text r.
func Gauge(r io.Reader, name string) (float64, error) {
	fams, err := families(r)
	if err != nil {
		return 0, err
	}
	f := fams[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("no %s in its /metrics", name)
	}
	return f.GetMetric()[0].GetGauge().GetValue(), nil
}

func families(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}
