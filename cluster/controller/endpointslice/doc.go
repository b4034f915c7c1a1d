// Package endpointslice holds the two controllers that keep
// discovery.k8s.io/v1 EndpointSlices, as upstream's
// pkg/controller/endpointslice and endpointslicemirroring do.
//
// The EndpointSlice controller (New, `endpointslice`): for each Service
// with a selector (not ExternalName), slices labelled
// kubernetes.io/service-name=<svc> and endpointslice.kubernetes.io/
// managed-by=endpointslice-controller.k8s.io, controlled by the Service,
// named <svc>-<random>, one address type per Service IP family (IPv4 when
// it names none). Each pod the selector matches that has an IP and is not
// finished is an endpoint: addresses [podIP], conditions serving (its
// Ready condition), terminating (deletionTimestamp set), ready (serving
// and not terminating; publishNotReadyAddresses makes ready and serving
// true), nodeName, zone from the node's topology.kubernetes.io/zone,
// hostname, targetRef to the pod. Pods whose Service ports resolve to
// different port sets go into different slices (podendpoint decides what
// a pod contributes, as for the Endpoints controller). A terminating pod
// stays until it is gone.
//
// The mirroring controller (NewMirroring, `endpointslicemirroring`): for
// each Service without a selector, the Endpoints its user wrote, mirrored
// (at most 1000 addresses, ready ones of a subset first) into slices
// managed-by endpointslicemirroring-controller.k8s.io, controlled by the
// Service. Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true
// are not mirrored (the apiserver writes the default/kubernetes Endpoints
// and its slice itself).
//
// Both plan their writes with one pure reconciler (reconcile.go):
// existing slices updated in place, slices with room filled before new
// ones are made, slices left empty deleted, at most
// Options.MaxEndpointsPerSlice endpoints a slice, nothing written when
// nothing changed. Each reads its slices through its own acknowledged
// writes (controller.WriteCache plus the slices it deleted), so a sync
// before the watch delivers them neither repeats nor contradicts them.
//
// When Options.EndpointsStamp is StampEndpointSlices, the EndpointSlice
// controller, not the Endpoints controller, stamps step ⑧'s
// trace.EndpointsUpdated (kind Pod, the pod's UID) for each pod an
// acknowledged slice write lists as ready that no slice of the Service
// listed as ready before.
//
// Each controller touches only the slices labelled managed-by itself. They
// must not write Services, pods or Endpoints, and write only through the
// apiserver.
package endpointslice
