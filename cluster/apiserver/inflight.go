package apiserver

import (
	"net/http"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/internal/util/gopool"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Overload protection, upstream's max-in-flight filter with one addition:
// a reserved lane. User requests share two pools, read-only
// (--max-requests-inflight) and mutating (--max-mutating-requests-inflight);
// a request over its pool's limit gets 429 with Retry-After at once, never
// a queue. Requests from the cluster's own actors go through a third pool of
// their own (the two limits summed), so a user flood never starves node
// Lease renewals, kubelets, the scheduler or the controller-manager:
//
//   - users system:node:<name>, system:kube-scheduler,
//     system:kube-controller-manager, and group system:nodes;
//   - any write to a Lease in kube-node-lease (node heartbeats keep their
//     lane even before identities exist, when every caller is the admin).
//
// system:masters is deliberately not in the lane: the admin is a user, and
// an admin's script is exactly the flood the lane protects against.
// Watches and the connect subresources are long-running and count in no
// pool.
//
// Every request that counts in a lane ends, so it runs on a pooled worker
// goroutine whose stack earlier requests have grown. net/http's new
// goroutine per request starts with a small stack and doubles it, copying
// every frame, three or four times in a write (stack growth was 6-11 % of
// an apiserver's CPU at saturation; see gopool).
type inflight struct {
	pools    map[string]chan struct{} // lane → semaphore (nil: unlimited)
	workers  *gopool.Pool
	current  *prometheus.GaugeVec
	rejected *prometheus.CounterVec
	gauges   map[string]prometheus.Gauge
	drops    map[string]prometheus.Counter
}

// The lanes.
const (
	laneReadOnly = "readOnly"
	laneMutating = "mutating"
	laneSystem   = "system"
)

func newInflight(opts Options, reg prometheus.Registerer) *inflight {
	f := &inflight{
		pools:  map[string]chan struct{}{},
		gauges: map[string]prometheus.Gauge{},
		drops:  map[string]prometheus.Counter{},
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_inflight_lane_requests", Help: "Non-watch requests being served, by max-in-flight lane (readOnly, mutating, system).",
		}, []string{"lane"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_dropped_requests_total", Help: "Requests refused with 429 because their max-in-flight lane was full, by lane.",
		}, []string{"lane"}),
	}
	reg.MustRegister(f.current, f.rejected)
	size := map[string]int{laneReadOnly: opts.MaxRequestsInflight, laneMutating: opts.MaxMutatingRequestsInflight}
	if opts.MaxRequestsInflight > 0 && opts.MaxMutatingRequestsInflight > 0 {
		size[laneSystem] = opts.MaxRequestsInflight + opts.MaxMutatingRequestsInflight
	}
	workers := 0
	for lane, n := range size {
		if n > 0 {
			f.pools[lane] = make(chan struct{}, n)
			workers += n
		}
	}
	if len(f.pools) < 3 { // a lane without a limit
		workers += maxUnlimitedWorkers
	}
	f.workers = gopool.New(workers, workerIdle)
	for _, lane := range []string{laneReadOnly, laneMutating, laneSystem} {
		f.gauges[lane] = f.current.WithLabelValues(lane)
		f.drops[lane] = f.rejected.WithLabelValues(lane)
	}
	return f
}

const (
	// maxUnlimitedWorkers bounds the workers of unlimited lanes; requests
	// beyond run on net/http's own goroutine.
	maxUnlimitedWorkers = 1024
	// workerIdle: a worker with no request for this long ends.
	workerIdle = 10 * time.Second
)

// systemUser reports whether u is one of the cluster's own actors.
func systemUser(u User) bool {
	switch {
	case strings.HasPrefix(u.Name, "system:node:"), u.Name == "system:kube-scheduler", u.Name == "system:kube-controller-manager":
		return true
	}
	return contains(u.Groups, "system:nodes")
}

// longRunningSubresource: the connect subresources (connect.go) last as
// long as their stream, like watches, and count in no pool either, as
// upstream's long-running check.
var longRunningSubresource = map[string]bool{"log": true, "exec": true, "attach": true, "portforward": true, "proxy": true}

// laneOf picks a request's lane; "" for requests that count in none.
func laneOf(ri *requestInfo, u User) string {
	if ri.Verb == "watch" || longRunningSubresource[ri.Subresource] {
		return ""
	}
	if systemUser(u) || (ri.Group == "coordination.k8s.io" && ri.Resource == "leases" && ri.Namespace == "kube-node-lease") {
		return laneSystem
	}
	if ri.Verb == "get" || ri.Verb == "list" {
		return laneReadOnly
	}
	return laneMutating
}

// limit wraps next with the max-in-flight filter.
func (f *inflight) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := parseRequestInfo(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		u, _ := userFrom(r.Context())
		lane := laneOf(ri, u)
		if lane == "" {
			next.ServeHTTP(w, r)
			return
		}
		if pool := f.pools[lane]; pool != nil {
			select {
			case pool <- struct{}{}:
				defer func() { <-pool }()
			default:
				f.drops[lane].Inc()
				writeError(w, apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
				return
			}
		}
		g := f.gauges[lane]
		g.Inc()
		defer g.Dec()
		f.workers.Run(func() { next.ServeHTTP(w, r) })
	})
}
