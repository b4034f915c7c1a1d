// Package server is the kubelet's HTTPS server (upstream's port 10250):
// what the apiserver proxies pods/log, pods/exec, pods/attach,
// pods/portforward and nodes/proxy to, and where the metrics API reads
// summary stats.
//
// One Server serves one kubelet, or every node of a hollow-nodes process:
// the node is the TLS SNI server name (the apiserver dials a kubelet with
// ServerName = node name); with one node any or no server name picks it;
// an unknown one is 404.
//
// Callers authenticate by a client certificate signed by the client CA
// (user = CN, groups = O, cluster/pki's convention); none is 401. Each
// request is then authorized as upstream's kubelet does, by a
// SubjectAccessReview the node's own client creates: resource nodes, name
// the node, subresource by path (/stats → stats, /metrics → metrics,
// /logs → log, /spec → spec, anything else → proxy), verb by method.
// Authentication and the cached review are cluster/reviewauth's, the one
// mechanism every kstep server shares; denied is 403 with the reason.
//
// Paths: /healthz; /pods (the node's pods from the kubelet's informer);
// /stats/summary (k8s.io/kubelet stats/v1alpha1: pods and containers from
// CRI ListPodSandboxStats and ListContainerStats, the node from the host's
// cgroup or /proc, or on a hollow node the sum of its pods);
// /containerLogs/{ns}/{pod}/{container} (the CRI log file, through the
// kubelet's LogReader, with follow, tailLines read from the file's end,
// sinceSeconds, sinceTime, timestamps, previous and limitBytes); and
// /exec, /attach (…/{ns}/{pod}[/{uid}]/{container}) and /portForward
// (…/{ns}/{pod}[/{uid}]): CRI Exec, Attach and PortForward give a URL on
// the runtime's stream server and the caller's upgraded connection (SPDY
// or WebSocket) is proxied there with apimachinery's UpgradeAwareHandler,
// upstream's non-redirect mode. A hollow node's runtime answers those
// Unimplemented, which is 501 with its message. Bad input is a 400 naming
// the parameter.
//
// It owns its listener and its authorization cache (a
// reviewauth.Authorizer). It reads the kubelet (kubelet.Kubelet's
// accessors) and its runtime and must not change either: no pod, container
// or node state is written here, and nothing reaches the apiserver but
// SubjectAccessReviews.
package server
