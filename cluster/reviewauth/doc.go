// Package reviewauth authenticates and authorizes the requests to kstep's
// own servers as upstream's secure ports do by delegation: the caller is
// the subject of the client certificate it presented, verified against the
// cluster's CA (user = CommonName, groups = Organizations, cluster/pki's
// convention), and what it asks is authorized by a SubjectAccessReview the
// server creates at the apiserver, whose RBAC decides. Answers are cached,
// allowed ones 5 min and denied ones 30 s (upstream's webhook authorizer),
// in a bounded LRU.
//
// Bearer tokens are not accepted: kstep's apiserver serves no TokenReview
// to delegate them to, and every reader of these ports (the harness, the
// apiservers' kubelet client) holds a certificate of the cluster's CA.
//
// Its users are the kubelet's server (cluster/kubelet/server: resource
// attributes on nodes) and every actor's operations port
// (cluster/opsserver: non-resource attributes, the URL path and the
// lower-case method as upstream's non-resource requests). It owns the
// cache and the mapping of a request to a review; it must not decide
// anything itself: an error reaching the apiserver is an error, never an
// answer.
package reviewauth
