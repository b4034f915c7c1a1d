package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/trace"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// Controller is one reconcile loop. Run blocks until ctx ends; it starts its
// own workers and waits for its caches itself.
type Controller interface {
	Name() string
	Run(ctx context.Context)
}

// Context is what a controller is built from. One Context serves one term of
// leadership: its informers are fresh, so a new leader never acts on a
// previous term's cache.
type Context struct {
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	// Recorder writes core/v1 Events about objects (reason, message).
	Recorder record.EventRecorder
	// Tracer stamps the steps controllers perform (rs.observed,
	// pod.create.sent). Nil records nothing.
	Tracer *trace.Tracer
	Log    *slog.Logger
	// Now is the clock; tests inject one.
	Now     func() time.Time
	Options Options
	// RootCA is the PEM bundle that verifies the apiservers (the root CA
	// publisher puts it in every namespace); empty over plain HTTP.
	RootCA []byte
}

// Options are the controllers' tunables, set by controller-manager flags.
type Options struct {
	// Workers is how many keys each controller syncs concurrently.
	Workers int
	// NodeMonitorGracePeriod: a node whose Lease is not renewed for this
	// long is marked Ready=Unknown and tainted unreachable (upstream 50 s).
	NodeMonitorGracePeriod time.Duration
	// NodeMonitorPeriod is how often node health is checked.
	NodeMonitorPeriod time.Duration
	// PodEvictionTimeout is how long pods stay on an unreachable node before
	// they are deleted, unless they tolerate the taint longer (upstream
	// 300 s via the default toleration).
	PodEvictionTimeout time.Duration
	// ExpectationsTTL bounds how long a controller waits for the watch to
	// confirm its own creates and deletes before it trusts its cache again.
	ExpectationsTTL time.Duration
	// PodWatchDelay delays every pod event a controller sees: a failpoint
	// for tests that prove expectations hold under a slow watch. Zero in
	// production.
	PodWatchDelay time.Duration
	// NoExpectations is a failpoint: the ReplicaSet controller (and the
	// ReplicationController controller, which runs its code) ignores its
	// expectations and trusts whatever its cache shows, so a slow watch
	// makes it create too many pods. The chaos engine's gate-failure test
	// turns it on to prove the gate catches it. Never set in production.
	NoExpectations bool
	// EndpointsStamp says which controller stamps step ⑧'s
	// endpoints.updated: StampEndpoints (the Endpoints controller, also
	// when empty) or StampEndpointSlices (the EndpointSlice controller).
	// Exactly one does; the other stamps nothing and pays nothing for it.
	EndpointsStamp string
	// MaxEndpointsPerSlice bounds the endpoints of each EndpointSlice the
	// EndpointSlice and mirroring controllers write (upstream 100; 0 is
	// 100).
	MaxEndpointsPerSlice int
}

// The values of Options.EndpointsStamp: the object whose acknowledged write
// listing a pod as ready is step ⑧'s endpoints.updated.
const (
	StampEndpoints      = "endpoints"
	StampEndpointSlices = "endpointslices"
)

// StampsEndpointSlices reports whether the EndpointSlice controller, not
// the Endpoints controller, stamps endpoints.updated.
func (o Options) StampsEndpointSlices() bool { return o.EndpointsStamp == StampEndpointSlices }

// ValidateEndpointsStamp refuses a value of Options.EndpointsStamp that
// names neither controller.
func ValidateEndpointsStamp(v string) error {
	switch v {
	case "", StampEndpoints, StampEndpointSlices:
		return nil
	}
	return fmt.Errorf("endpoints stamp %q: want %s or %s", v, StampEndpoints, StampEndpointSlices)
}

// DefaultOptions are kstep's: detection within 10 s and replacement within
// 20 s of a node's death (upstream: 50 s + 300 s).
func DefaultOptions() Options {
	return Options{
		Workers:                32,
		NodeMonitorGracePeriod: 8 * time.Second,
		NodeMonitorPeriod:      time.Second,
		PodEvictionTimeout:     10 * time.Second,
		ExpectationsTTL:        5 * time.Minute,
		EndpointsStamp:         StampEndpoints,
		MaxEndpointsPerSlice:   100,
	}
}
