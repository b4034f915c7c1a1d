// Package endpoints is the Endpoints controller: step ⑧'s
// `endpoints.updated`. For each Service with a selector it keeps an
// Endpoints object of the same name listing the pods the selector matches
// in the Service's namespace: Ready pods' IPs in addresses, the others in
// notReadyAddresses (each with a targetRef to the pod and its nodeName),
// the ports the Service's ports resolve to on each pod (targetPort by
// number, or by a named container port), subsets grouped by port set and
// sorted so that nothing changed means nothing written. Pods without an IP,
// finished or being deleted are left out (unless the Service publishes
// not-ready addresses). When the Service goes, its Endpoints go.
//
// For each pod newly in addresses it stamps trace.EndpointsUpdated (kind
// Pod, the pod's UID) once the apiserver has acknowledged the write, unless
// Options.EndpointsStamp gives that stamp to the EndpointSlice controller
// (then it stamps nothing).
//
// It owns the Endpoints of Services with a selector. It must not touch the
// Endpoints of Services without one (their users write them) while the
// Service exists, nor write Services or pods. It writes only through the
// apiserver.
package endpoints
