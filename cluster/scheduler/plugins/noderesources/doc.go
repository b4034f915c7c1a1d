// Package noderesources holds the resource plugins: NodeResourcesFit
// (filter: the pod's requests — with upstream's init-container and sidecar
// rule and pod overhead — fit the node's allocatable minus what its pods
// request, and the pod count fits; score: LeastAllocated) and
// NodeResourcesBalancedAllocation (score: prefer nodes whose cpu and memory
// use stay balanced).
//
// It owns the arithmetic; it must not keep state across cycles or touch the
// apiserver.
package noderesources
