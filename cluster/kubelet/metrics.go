package kubelet

import "github.com/prometheus/client_golang/prometheus"

// The kubelet's metrics. Hollow kubelets in one process share them: they
// describe the process, not one node.
var (
	syncDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kstep_kubelet_pod_sync_duration_seconds",
		Help:    "Duration of one pod sync (runtime reads, CRI actions, status computation).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
	})
	statusWriteDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kstep_kubelet_status_write_duration_seconds",
		Help:    "Latency of pods/status patches.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	})
	statusWriteErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_kubelet_status_write_errors_total",
		Help: "pods/status patches that failed.",
	})
	relistDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kstep_kubelet_relist_duration_seconds",
		Help:    "Duration of one relist of the runtime's sandboxes and containers.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	leaseRenewals = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_kubelet_lease_renewals_total",
		Help: "Node Lease renewals acknowledged.",
	})
	containerRestarts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_kubelet_container_restarts_total",
		Help: "Containers restarted (crash, liveness or startup failure).",
	})
)

func init() {
	prometheus.MustRegister(syncDuration, statusWriteDuration, statusWriteErrors, relistDuration, leaseRenewals, containerRestarts)
}
