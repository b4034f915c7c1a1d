// Package tainttoleration is the TaintToleration plugin: filter out nodes
// with a NoSchedule or NoExecute taint the pod does not tolerate, and score
// down nodes with PreferNoSchedule taints it does not tolerate.
//
// It owns the matching; it must not keep state across cycles or touch the
// apiserver.
package tainttoleration
