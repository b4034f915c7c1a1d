package main

import (
	"context"

	"github.com/spf13/pflag"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/kstep-dev/kstep/cluster/opsserver"
)

// opsTLSFlags adds the flags of a secure ops port (--metrics-listen's):
// its serving certificate and the CA of its callers' client certificates.
func opsTLSFlags(f *pflag.FlagSet, t *opsserver.TLS) {
	f.StringVar(&t.CertFile, "metrics-tls-cert-file", "", "serving certificate of the --metrics-listen port: with it, the port serves TLS and /metrics, /debug/pprof and kstep's controls need a client certificate of --metrics-client-ca-file that the apiserver authorizes (SubjectAccessReview); /healthz, /readyz and /livez stay open")
	f.StringVar(&t.KeyFile, "metrics-tls-private-key-file", "", "key of --metrics-tls-cert-file")
	f.StringVar(&t.ClientCAFile, "metrics-client-ca-file", "", "CA the --metrics-listen port's callers' client certificates must chain to")
}

// serveOps serves an actor's operations port on addr until ctx ends
// (cluster/opsserver): /healthz and /readyz (the provider's readiness
// probe: 200, or 503 while healthy, when given, returns an error), /livez,
// /metrics (the default Prometheus registry), /debug/pprof/ and the
// actor's extra handlers; with tls, the guarded paths authorized by
// SubjectAccessReviews created through reviews (the actor's own client).
// An empty addr serves nothing.
func serveOps(ctx context.Context, addr string, tls opsserver.TLS, reviews authorizationclient.SubjectAccessReviewsGetter, healthy func() error, extra ...opsserver.Handler) error {
	return opsserver.Serve(ctx, opsserver.Config{Addr: addr, TLS: tls, Reviews: reviews, Healthy: healthy, Handlers: extra})
}
