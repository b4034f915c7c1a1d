// Package opsserver is an actor's operations port (the controller-manager's,
// the scheduler's, a kubelet's, the hollow-nodes actor's): /healthz,
// /readyz and /livez, open to anyone as upstream's (the providers' readiness
// probes read them); /metrics, /debug/pprof/ and the actor's own controls
// (the hollow-nodes actor's /kstep/kubelets) behind authentication and
// authorization.
//
// A secure port (Config.TLS set, kstep's default cluster) serves TLS with
// the actor's serving certificate, authenticates the caller by a client
// certificate of the cluster's CA and authorizes the URL path and the
// lower-case method by SubjectAccessReview at the apiserver, as upstream's
// secure ports delegate (cluster/reviewauth): none is 401, denied is 403,
// both metav1.Status. The bootstrap policy lets system:monitoring get
// /metrics and pprof; the admin (system:masters) may do anything. A port
// without TLS (an --insecure cluster) serves every path to anyone over
// plain HTTP, as before.
//
// It owns the listener and the routes. It must not know what the actor
// does: health, metrics and controls are handlers the actor passes.
package opsserver
