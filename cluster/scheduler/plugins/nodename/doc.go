// Package nodename is the NodeName filter: a pod that names its node
// (spec.nodeName) fits only that node.
//
// It owns the one check; it must not keep state or touch the apiserver.
package nodename
