package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Attempt results, as upstream's scheduler_schedule_attempts_total.
const (
	resultScheduled     = "scheduled"
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

// Metrics are the scheduler's Prometheus series. One Metrics outlives the
// terms of leadership: the gauges read whichever Scheduler runs now. A nil
// *Metrics records nothing.
type Metrics struct {
	attempts        *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	e2e             prometheus.Histogram
	bindings        *prometheus.CounterVec
	bindDuration    prometheus.Histogram
	leader          prometheus.Gauge
	preemptions     prometheus.Counter
	victims         prometheus.Histogram

	current atomic.Pointer[Scheduler]
}

var latencyBuckets = []float64{.0005, .001, .002, .004, .008, .016, .032, .064, .128, .256, .512, 1.024, 2.048, 4.096, 8.192, 16.384, 32.768}

// NewMetrics registers the scheduler's series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Scheduling cycles by result (scheduled, unschedulable, error) and profile.",
		}, []string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Duration of one scheduling cycle (snapshot, filter, score, assume), by result.",
			Buckets: latencyBuckets,
		}, []string{"result"}),
		e2e: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_pod_scheduling_sli_duration_seconds",
			Help:    "End-to-end scheduling latency of a pod: from the scheduler first seeing it pending to its binding succeeding, across attempts.",
			Buckets: latencyBuckets,
		}),
		bindings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_bindings_total",
			Help: "pods/binding calls by result (success, error).",
		}, []string{"result"}),
		bindDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_binding_duration_seconds",
			Help:    "Latency of the binding call.",
			Buckets: latencyBuckets,
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "scheduler_leader",
			Help: "1 while this scheduler holds the lease and schedules.",
		}),
	}
	m.preemptions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scheduler_preemption_attempts_total",
		Help: "Total preemption attempts in the cluster till now (runs of the preemption PostFilter), as upstream's.",
	})
	m.victims = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "scheduler_preemption_victims",
		Help:    "Number of selected preemption victims, as upstream's.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 7),
	})
	reg.MustRegister(m.attempts, m.attemptDuration, m.e2e, m.bindings, m.bindDuration, m.leader, m.preemptions, m.victims)
	for _, q := range []string{"active", "backoff", "unschedulable"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scheduler_pending_pods", Help: "Pods waiting, by queue (active, backoff, unschedulable).",
			ConstLabels: prometheus.Labels{"queue": q},
		}, func() float64 {
			s := m.current.Load()
			if s == nil {
				return 0
			}
			a, b, u := s.queue.Len()
			return float64(map[string]int{"active": a, "backoff": b, "unschedulable": u}[q])
		}))
	}
	for _, t := range []string{"nodes", "pods", "assumed_pods"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scheduler_cache_size", Help: "Objects in the scheduler's cache, by type (nodes, pods, assumed_pods).",
			ConstLabels: prometheus.Labels{"type": t},
		}, func() float64 {
			s := m.current.Load()
			if s == nil {
				return 0
			}
			n, p, a := s.cache.Counts()
			return float64(map[string]int{"nodes": n, "pods": p, "assumed_pods": a}[t])
		}))
	}
	return m
}

func (m *Metrics) attempt(result, profile string, d time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(result, profile).Inc()
	m.attemptDuration.WithLabelValues(result).Observe(d.Seconds())
}

func (m *Metrics) bound(ok bool, call, e2e time.Duration) {
	if m == nil {
		return
	}
	if !ok {
		m.bindings.WithLabelValues("error").Inc()
		return
	}
	m.bindings.WithLabelValues("success").Inc()
	m.bindDuration.Observe(call.Seconds())
	m.e2e.Observe(e2e.Seconds())
}

// PreemptionAttempt implements framework.MetricsRecorder.
func (m *Metrics) PreemptionAttempt() {
	if m != nil {
		m.preemptions.Inc()
	}
}

// PreemptionVictims implements framework.MetricsRecorder.
func (m *Metrics) PreemptionVictims(n int) {
	if m != nil {
		m.victims.Observe(float64(n))
	}
}

func (m *Metrics) setLeader(leading bool) {
	if m == nil {
		return
	}
	if leading {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

func (m *Metrics) setCurrent(s *Scheduler) {
	if m != nil {
		m.current.Store(s)
	}
}
