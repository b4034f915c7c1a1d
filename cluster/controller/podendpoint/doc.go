// Package podendpoint is what a pod contributes to the endpoints of a
// Service that selects it, shared by the Endpoints controller
// (core/v1 Endpoints) and the EndpointSlice controller (discovery.k8s.io/v1
// EndpointSlices) so that both say the same thing about the same pod:
// whether it is an endpoint at all (Included), whether it is Ready, its IP
// of a family, the ports the Service's ports resolve to on it (a named
// targetPort may be a different number on different pods), and whether a
// change of the pod changes any of that (Changed); and the pod event
// handlers both controllers enqueue by (Handlers).
//
// Everything here is a pure function of the objects it is given. It must
// not read caches, call the apiserver or know either object it feeds.
package podendpoint
