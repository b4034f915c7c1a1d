package apiserver

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total", Help: "Requests by verb, group, resource, subresource and HTTP code.",
		}, []string{"verb", "group", "resource", "subresource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Latency of non-watch requests by verb, group, resource and subresource.",
			Buckets: []float64{.0005, .001, .002, .004, .008, .016, .032, .064, .128, .256, .512, 1.024, 2.048, 4.096, 8.192},
		}, []string{"verb", "group", "resource", "subresource"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests", Help: "Requests being served, by kind (readOnly, mutating, watch).",
		}, []string{"kind"}),
	}
	reg.MustRegister(m.requests, m.latency, m.inflight)
	return m
}

// recorder captures the status code of a response.
type recorder struct {
	http.ResponseWriter
	code int
	// started, when set, is called once with the code, before the
	// response begins (the audit log's ResponseStarted).
	started func(code int)
}

func (r *recorder) start(code int) {
	if r.code == 0 {
		r.code = code
		if r.started != nil {
			r.started(code)
		}
	}
}

func (r *recorder) WriteHeader(code int) {
	r.start(code)
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.start(http.StatusOK)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	r.start(http.StatusOK)
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

// observe records a request. ri holds only served names (serveResource)
// and a verb of parseRequestInfo's few; the code is an HTTP status, one of
// at most 500.
func (m *metrics) observe(ri *requestInfo, code int, start time.Time) {
	verb := ri.Verb
	m.requests.WithLabelValues(verb, ri.Group, ri.Resource, ri.Subresource, codeLabel(code)).Inc()
	if verb != "watch" {
		m.latency.WithLabelValues(verb, ri.Group, ri.Resource, ri.Subresource).Observe(time.Since(start).Seconds())
	}
}

func inflightKind(verb string) string {
	switch verb {
	case "get", "list":
		return "readOnly"
	case "watch":
		return "watch"
	}
	return "mutating"
}

// codeLabel is a response code as a label: an HTTP status (100-599; a
// proxied kubelet's answer is passed on as it came), anything else "0".
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return "0"
	}
	return strconv.Itoa(code)
}
