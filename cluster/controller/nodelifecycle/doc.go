// Package nodelifecycle watches node heartbeats and acts when a node stops
// sending them: a node whose Lease (kube-node-lease/<node>) has not been
// renewed within the grace period gets Ready=Unknown and the
// node.kubernetes.io/unreachable:NoExecute taint (not-ready:NoExecute when a
// kubelet reports Ready=False); pods on a NoExecute-tainted node are deleted
// once their toleration of the taint runs out, so their controllers replace
// them on healthy nodes. Taints come off when the node reports Ready again.
//
// Upstream's full-disruption mode: when every node is unhealthy at once (the
// likelier cause is the control plane or the network: etcd out of space,
// every apiserver unreachable), nodes are still declared Ready=Unknown and
// tainted NoSchedule, but the NoExecute taints are lifted and no pod is
// evicted until a node is healthy again. Leaving it, every node gets a full
// grace period from then (upstream resets its timers), during which none
// is declared Unknown or condemned: after an outage the nodes renew one
// after another, and the first back must not get the others evicted.
//
// Its decisions (which node is stale, which taints a node needs, when a pod
// must go) are pure functions of the objects and the clock; the controller
// only reads caches and writes the results through the apiserver.
//
// It must not schedule, create pods, or touch the kubelet's own status
// fields other than the Ready condition it declares Unknown.
package nodelifecycle
