package endpoints

import (
	"cmp"
	"maps"
	"slices"

	"github.com/kstep-dev/kstep/cluster/controller/podendpoint"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What a Service's Endpoints should say, free of I/O: a function of the
// Service and the pods its selector matches.

// headlessLabel marks the Endpoints of a headless Service, as upstream.
const headlessLabel = "service.kubernetes.io/headless"

// desiredLabels are the Endpoints' labels: the Service's, plus the
// headless marker when it has no cluster IP.
func desiredLabels(svc *corev1.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		if out == nil {
			out = map[string]string{}
		}
		out[headlessLabel] = ""
	} else {
		delete(out, headlessLabel)
	}
	return out
}

// subsets builds the Endpoints subsets of svc from the pods its selector
// matches: Ready pods in addresses, the others in notReadyAddresses (all
// in addresses when the Service publishes not-ready addresses), grouped by
// the ports they resolve (a named targetPort may be a different number on
// different pods), every list sorted so that equal inputs give equal
// output and an unchanged Service writes nothing.
func subsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	type group struct {
		ports           []corev1.EndpointPort
		ready, notReady []corev1.EndpointAddress
	}
	groups := map[string]*group{}
	publishNotReady := svc.Spec.PublishNotReadyAddresses
	for _, pod := range pods {
		if !podendpoint.Included(pod, publishNotReady) {
			continue
		}
		ip := podIP(svc, pod)
		if ip == "" {
			continue
		}
		ports, ok := podendpoint.ResolvePorts(svc, pod)
		if !ok {
			continue
		}
		key := podendpoint.PortsKey(ports)
		g := groups[key]
		if g == nil {
			g = &group{ports: ports}
			groups[key] = g
		}
		addr := address(svc, pod, ip)
		if publishNotReady || podendpoint.Ready(pod) {
			g.ready = append(g.ready, addr)
		} else {
			g.notReady = append(g.notReady, addr)
		}
	}
	out := make([]corev1.EndpointSubset, 0, len(groups))
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		sortAddresses(g.ready)
		sortAddresses(g.notReady)
		out = append(out, corev1.EndpointSubset{Addresses: g.ready, NotReadyAddresses: g.notReady, Ports: g.ports})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// podIP is the pod's IP of the Service's primary family (the pod's
// primary IP when the Service names none).
func podIP(svc *corev1.Service, pod *corev1.Pod) string {
	var family corev1.IPFamily
	if len(svc.Spec.IPFamilies) > 0 {
		family = svc.Spec.IPFamilies[0]
	}
	return podendpoint.IP(pod, family)
}

func address(svc *corev1.Service, pod *corev1.Pod, ip string) corev1.EndpointAddress {
	a := corev1.EndpointAddress{
		IP: ip,
		TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		},
	}
	if pod.Spec.NodeName != "" {
		node := pod.Spec.NodeName
		a.NodeName = &node
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
		a.Hostname = pod.Spec.Hostname
	}
	return a
}

func sortAddresses(as []corev1.EndpointAddress) {
	slices.SortFunc(as, func(a, b corev1.EndpointAddress) int {
		return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(targetUID(a), targetUID(b)))
	})
}

func targetUID(a corev1.EndpointAddress) types.UID {
	if a.TargetRef == nil {
		return ""
	}
	return a.TargetRef.UID
}

// readyTargets is the set of pod UIDs in the subsets' addresses.
func readyTargets(ss []corev1.EndpointSubset) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, s := range ss {
		for _, a := range s.Addresses {
			if uid := targetUID(a); uid != "" {
				out[uid] = true
			}
		}
	}
	return out
}

// newlyReady are the pods in next's addresses that were not in prev's:
// the pods an acknowledged write of next makes reachable (the
// endpoints.updated step).
func newlyReady(prev, next []corev1.EndpointSubset) []*corev1.ObjectReference {
	had := readyTargets(prev)
	var out []*corev1.ObjectReference
	seen := map[types.UID]bool{}
	for _, s := range next {
		for _, a := range s.Addresses {
			uid := targetUID(a)
			if uid == "" || had[uid] || seen[uid] {
				continue
			}
			seen[uid] = true
			out = append(out, a.TargetRef)
		}
	}
	return out
}
