// Package nodeunschedulable is the NodeUnschedulable filter: a cordoned node
// (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
//
// It owns the one check; it must not keep state or touch the apiserver.
package nodeunschedulable
