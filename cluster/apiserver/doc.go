// Package apiserver is kstep's API server: the one door every actor, kubectl
// and client-go use, and the only code that reaches the objects in etcd
// (through cluster/storage; what else talks to etcd, and why, is in
// cluster/storage's doc). It is stateless; any number run side by side.
//
// It owns the Kubernetes-compatible HTTP API for the resources of the
// resources table (resources.go): discovery, OpenAPI, the verbs (create,
// get, list, watch, update, patch, delete, deletecollection), the status,
// scale and binding subresources, pods/eviction against
// PodDisruptionBudgets (eviction.go; their status is the disruption
// controller's), list and watch semantics (selectors,
// pagination, resourceVersion matching, bookmarks, streaming lists, 410 for
// expired versions), content negotiation (JSON, YAML, server-side tables,
// and protobuf both ways: bodies in, and answers, lists and watch streams
// out when the client's Accept prefers it, as client-go's typed clients'
// does, on upstream's wire (protobuf.go); errors stay JSON), and the write
// chain of step ①: authentication →
// authorization → mutating admission → validation → validating admission →
// storage (chain.go). Every refusal is a metav1.Status and writes nothing,
// and quotes its input only in excerpts (status.go). Managed fields and
// server-side apply are apimachinery's field manager (managedfields.go),
// shown shallow copies of the stored and the new object, not deep ones,
// and without the top-level field the write never owns (a status write's
// spec): the managed fields it records are the same; maps of more than 64
// entries are compared in key order (sortedValue), so a ConfigMap of
// 100,000 keys costs n log n, not n². Validation refuses managed fields
// nested deeper than the object could need (no client could list it).
// Patches are applied by package patch, their work bounded by their input (patch.go); a request's
// line and headers are bounded too, with a 431 (headers.go).
// Admission plugins (admission.go and priority.go; their decisions in
// package admission) read LimitRanges, ResourceQuotas, PriorityClasses and
// webhook configurations from the watch caches; ResourceQuota charges a
// create to the quotas' status.used with a compare-and-swap in etcd before
// the object is written. Around every request: the audit log (audit.go) and the
// max-in-flight filter with its reserved system lane (inflight.go), which
// also runs every request that counts in a lane (all but watches and the
// connect subresources) on a worker of internal/util/gopool, whose stack
// earlier requests grew, instead of net/http's new goroutine per request.
// Authentication (authn.go: TLS client certificates, bearer tokens),
// impersonation (impersonation.go, authorized by RBAC's impersonate verb)
// and authorization (authz.go; rbac.go and node_authz.go answer from the
// watch caches, with NodeRestriction as validating admission; policy.go is
// the bootstrap RBAC policy; access_review.go answers
// SelfSubjectAccessReviews, SubjectAccessReviews (the kubelets' delegated
// authorization) and SelfSubjectReviews) are opt-in: with no client CA and
// no token file every caller is the admin.
//
// The connect subresources pods/log, exec, attach, portforward and
// nodes/proxy are proxied to the node's kubelet server (connect.go), SPDY
// and WebSocket upgrades alike, with the apiserver's own kubelet client
// certificate (kubelet.go, --kubelet-client-certificate); the kubelet
// authorizes that client by SubjectAccessReview. The resource metrics API,
// metrics.k8s.io/v1beta1 pods and nodes (resourcemetrics.go), is built in:
// each answer is made from the kubelets' /stats/summary at request time,
// bounded in concurrency, time and size, and nothing is stored.
//
// Step stamps (cluster/trace): rs.received and rs.persisted for a
// ReplicaSet's create, pod.persisted, pod.bound when etcd acknowledged a
// binding (write.go), and the watch-cache stamps (watchstamps.go) when this
// apiserver's etcd watch delivers a change, before any watcher gets it.
//
// What every cluster has from its first second: the system namespaces
// (namespaces.go), the bootstrap RBAC policy (policy.go), the system
// PriorityClasses (priority.go; readiness waits for them), and the
// default/kubernetes Service with its Endpoints and EndpointSlices, which
// every apiserver keeps listing the live apiservers through etcd leases
// (kubernetes_service.go, upstream's lease endpoint reconciler). Every
// apiserver also runs upstream's etcd compactor (storage.Compact) on
// --etcd-compaction-interval. A watch whose client stops reading is closed
// after --watch-stall-timeout, a deadline that bounds its writes and not
// its quiet (stall.go); a watch ends, cleanly, at its timeoutSeconds or
// after a random time in [--min-request-timeout, twice it) (read.go); and each watch cache's ring is
// bounded by bytes as well as events. etcd out of space (NOSPACE) is a 507
// with etcd's message; /readyz stays ready and /readyz?verbose names it.
//
// Object state lives in etcd only; the watch caches are derived from it.
// Events have none (resource.uncached, as upstream's default): their
// reads go to etcd and each of their watches is an etcd watch of its own.
// Objects are stored as protobuf, as upstream stores them
// (--storage-media-type=application/json for values etcdctl can read); a
// value in either medium is read (codec.go).
// This package must not run any controller logic (replica counts,
// scheduling, node health): those belong to the actors that watch it.
// Emptying a deleted namespace is the namespace controller's
// (cluster/controller/namespace); namespaces.go only creates the system
// namespaces, refuses writes into a namespace that is missing or
// terminating, and lets a Namespace go once nothing holds it. The
// failpoints it serves with Options.Failpoints (testing only) are named by
// cluster/failpoint, and its link by cluster/netfault.
package apiserver
