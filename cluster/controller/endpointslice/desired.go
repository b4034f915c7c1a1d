package endpointslice

import (
	"cmp"
	"maps"
	"slices"

	"github.com/kstep-dev/kstep/cluster/controller/podendpoint"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// What a Service's slices should hold, free of I/O.

// Labels and values upstream gives the slices it manages.
const (
	// ManagedBy names the EndpointSlice controller in LabelManagedBy.
	ManagedBy = "endpointslice-controller.k8s.io"
	// MirroringManagedBy names the mirroring controller in LabelManagedBy.
	MirroringManagedBy = "endpointslicemirroring-controller.k8s.io"
	// LabelSkipMirror on an Endpoints keeps the mirroring controller away.
	LabelSkipMirror = "endpointslice.kubernetes.io/skip-mirror"
	// DefaultMaxEndpointsPerSlice is upstream's --max-endpoints-per-slice.
	DefaultMaxEndpointsPerSlice = 100
	// zoneLabel is the node label an endpoint's zone comes from.
	zoneLabel     = corev1.LabelTopologyZone
	headlessLabel = corev1.IsHeadlessService
)

// addressTypes are the Service's address types: one per IP family it
// names, IPv4 when it names none.
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	if len(svc.Spec.IPFamilies) == 0 {
		return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		at := discoveryv1.AddressTypeIPv4
		if f == corev1.IPv6Protocol {
			at = discoveryv1.AddressTypeIPv6
		}
		if !slices.Contains(out, at) {
			out = append(out, at)
		}
	}
	return out
}

func family(at discoveryv1.AddressType) corev1.IPFamily {
	if at == discoveryv1.AddressTypeIPv6 {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// desiredGroups is what the slices of svc should hold given the pods its
// selector matches: for each address type and each resolved port set, an
// endpoint per pod (terminating pods included, marked so), sorted by pod.
// zoneOf returns a node's zone ("" when unknown).
func desiredGroups(svc *corev1.Service, pods []*corev1.Pod, zoneOf func(node string) string) []group {
	groups := map[string]*group{}
	for _, at := range addressTypes(svc) {
		for _, pod := range pods {
			if !podendpoint.Included(pod, true) {
				continue
			}
			ip := podendpoint.IP(pod, family(at))
			if ip == "" {
				continue
			}
			cports, ok := podendpoint.ResolvePorts(svc, pod)
			if !ok {
				continue
			}
			ports := slicePorts(cports)
			k := groupKey(at, ports)
			g := groups[k]
			if g == nil {
				g = &group{addressType: at, ports: ports}
				groups[k] = g
			}
			g.endpoints = append(g.endpoints, podEndpoint(svc, pod, ip, zoneOf))
		}
	}
	out := make([]group, 0, len(groups))
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		sortEndpoints(g.endpoints)
		out = append(out, *g)
	}
	return out
}

// podEndpoint is upstream's podToEndpoint: serving is the pod's Ready
// condition, terminating its deletion, ready serving and not terminating;
// publishNotReadyAddresses makes both ready and serving true.
func podEndpoint(svc *corev1.Service, pod *corev1.Pod, ip string, zoneOf func(string) string) discoveryv1.Endpoint {
	publish := svc.Spec.PublishNotReadyAddresses
	serving := publish || podendpoint.Ready(pod)
	terminating := pod.DeletionTimestamp != nil
	ep := discoveryv1.Endpoint{
		Addresses: []string{ip},
		Conditions: discoveryv1.EndpointConditions{
			Ready:       ptr.To(publish || (serving && !terminating)),
			Serving:     ptr.To(serving),
			Terminating: ptr.To(terminating),
		},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if n := pod.Spec.NodeName; n != "" {
		ep.NodeName = ptr.To(n)
		if z := zoneOf(n); z != "" {
			ep.Zone = ptr.To(z)
		}
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
		ep.Hostname = ptr.To(pod.Spec.Hostname)
	}
	return ep
}

// slicePorts converts resolved ports (sorted) to a slice's.
func slicePorts(in []corev1.EndpointPort) []discoveryv1.EndpointPort {
	if len(in) == 0 {
		return nil
	}
	out := make([]discoveryv1.EndpointPort, len(in))
	for i, p := range in {
		out[i] = discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port),
			Protocol: ptr.To(podendpoint.Protocol(p.Protocol)), AppProtocol: p.AppProtocol}
	}
	sortPorts(out)
	return out
}

func sortEndpoints(eps []discoveryv1.Endpoint) {
	slices.SortFunc(eps, func(a, b discoveryv1.Endpoint) int {
		return cmp.Or(cmp.Compare(targetName(a), targetName(b)), cmp.Compare(endpointKey(&a), endpointKey(&b)))
	})
}

func targetName(ep discoveryv1.Endpoint) string {
	if ep.TargetRef == nil {
		return ""
	}
	return ep.TargetRef.Name
}

// sliceLabels are the labels of the EndpointSlice controller's slices of
// svc: the Service's own, the headless marker when it has no cluster IP,
// the Service's name and the manager's.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, headlessLabel)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[headlessLabel] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

// mirroredGroups is what the mirrored slices of an Endpoints should hold:
// per subset, its ready then its not-ready addresses (at most
// maxMirroredAddresses in all, as upstream), by address type (IPv4, IPv6;
// other addresses are not mirrored), grouped by port set.
func mirroredGroups(ep *corev1.Endpoints) []group {
	groups := map[string]*group{}
	total := 0
	add := func(ss *corev1.EndpointSubset, a *corev1.EndpointAddress, ready bool) {
		at := discoveryv1.AddressTypeIPv4
		switch {
		case netutils.IsIPv4String(a.IP):
		case netutils.IsIPv6String(a.IP):
			at = discoveryv1.AddressTypeIPv6
		default:
			return
		}
		total++
		var cports []corev1.EndpointPort
		for _, p := range ss.Ports {
			p.Protocol = podendpoint.Protocol(p.Protocol)
			cports = append(cports, p)
		}
		ports := slicePorts(cports)
		k := groupKey(at, ports)
		g := groups[k]
		if g == nil {
			g = &group{addressType: at, ports: ports}
			groups[k] = g
		}
		e := discoveryv1.Endpoint{
			Addresses:  []string{a.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
			NodeName:   a.NodeName,
		}
		if a.Hostname != "" {
			e.Hostname = ptr.To(a.Hostname)
		}
		if a.TargetRef != nil {
			e.TargetRef = a.TargetRef.DeepCopy()
		}
		g.endpoints = append(g.endpoints, e)
	}
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		for j := range ss.Addresses {
			if total < maxMirroredAddresses {
				add(ss, &ss.Addresses[j], true)
			}
		}
		for j := range ss.NotReadyAddresses {
			if total < maxMirroredAddresses {
				add(ss, &ss.NotReadyAddresses[j], false)
			}
		}
	}
	out := make([]group, 0, len(groups))
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		g.endpoints = dedupeEndpoints(g.endpoints)
		sortEndpoints(g.endpoints)
		out = append(out, *g)
	}
	return out
}

// maxMirroredAddresses is upstream's cap on the addresses mirrored from one
// Endpoints (the Endpoints controller's own cap, 1000).
const maxMirroredAddresses = 1000

// dedupeEndpoints keeps the first endpoint of each key: an address listed
// twice in one port set is one endpoint.
func dedupeEndpoints(eps []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	seen := map[string]bool{}
	out := eps[:0]
	for _, e := range eps {
		k := endpointKey(&e)
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// mirroredLabels are the labels of an Endpoints' mirrored slices: the
// Endpoints' own (without the mirroring marker), the Service's name and
// the manager's.
func mirroredLabels(ep *corev1.Endpoints) map[string]string {
	out := maps.Clone(ep.Labels)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, LabelSkipMirror)
	out[discoveryv1.LabelServiceName] = ep.Name
	out[discoveryv1.LabelManagedBy] = MirroringManagedBy
	return out
}
