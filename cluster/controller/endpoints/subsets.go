package endpoints

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	netutils "k8s.io/utils/net"
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
		if !included(pod, publishNotReady) {
			continue
		}
		ip := podIP(svc, pod)
		if ip == "" {
			continue
		}
		ports, ok := resolvePorts(svc, pod)
		if !ok {
			continue
		}
		key := portsKey(ports)
		g := groups[key]
		if g == nil {
			g = &group{ports: ports}
			groups[key] = g
		}
		addr := address(svc, pod, ip)
		if publishNotReady || podReady(pod) {
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

// included is upstream's ShouldPodBeInEndpoints: a pod with an IP that is
// not finished and, unless the Service publishes not-ready addresses, not
// being deleted.
func included(pod *corev1.Pod, publishNotReady bool) bool {
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return publishNotReady || pod.DeletionTimestamp == nil
}

// podReady: the pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podIP is the pod's IP of the Service's primary family (the pod's
// primary IP when the Service names none).
func podIP(svc *corev1.Service, pod *corev1.Pod) string {
	if len(svc.Spec.IPFamilies) == 0 {
		return pod.Status.PodIP
	}
	want := svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	ips := []string{pod.Status.PodIP}
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, ip := range ips {
		if ip != "" && netutils.IsIPv6String(ip) == want {
			return ip
		}
	}
	return ""
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

// resolvePorts maps every Service port onto the pod. ok is false when the
// Service has ports and none resolves on this pod: it serves nothing.
func resolvePorts(svc *corev1.Service, pod *corev1.Pod) ([]corev1.EndpointPort, bool) {
	if len(svc.Spec.Ports) == 0 {
		return nil, true // headless without ports: addresses only
	}
	var out []corev1.EndpointPort
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		n, ok := findPort(pod, sp)
		if !ok {
			continue
		}
		out = append(out, corev1.EndpointPort{Name: sp.Name, Port: n, Protocol: protocol(sp.Protocol), AppProtocol: sp.AppProtocol})
	}
	slices.SortFunc(out, func(a, b corev1.EndpointPort) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
	})
	return out, len(out) > 0
}

// findPort is the pod's port for a Service port: targetPort itself when a
// number, else the container port of that name and protocol (regular and
// sidecar containers).
func findPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return sp.Port, true // targetPort unset: the port itself
		}
		return tp.IntVal, true
	}
	name, proto := tp.StrVal, protocol(sp.Protocol)
	containers := pod.Spec.Containers
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(slices.Clip(containers), c)
		}
	}
	for _, c := range containers {
		for _, p := range c.Ports {
			if p.Name == name && protocol(p.Protocol) == proto {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

func protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func portsKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s/%d/%s;", p.Name, p.Port, p.Protocol)
	}
	return b.String()
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
