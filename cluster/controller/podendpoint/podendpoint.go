package podendpoint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	netutils "k8s.io/utils/net"
)

// Included is upstream's ShouldPodBeInEndpoints: a pod with an IP that is
// not finished and, unless includeTerminating, not being deleted. The
// Endpoints controller includes terminating pods only when the Service
// publishes not-ready addresses; the EndpointSlice controller always does
// (they carry terminating=true).
func Included(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// Ready: the pod's Ready condition is True.
func Ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// IP is the pod's IP of family ("" when it has none of that family); an
// empty family is the pod's primary IP.
func IP(pod *corev1.Pod, family corev1.IPFamily) string {
	if family == "" {
		return pod.Status.PodIP
	}
	want := family == corev1.IPv6Protocol
	if ip := pod.Status.PodIP; ip != "" && netutils.IsIPv6String(ip) == want {
		return ip
	}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP != "" && netutils.IsIPv6String(ip.IP) == want {
			return ip.IP
		}
	}
	return ""
}

// ResolvePorts maps every Service port onto the pod, sorted by name, port
// and protocol. ok is false when the Service has ports and none resolves on
// this pod: it serves nothing.
func ResolvePorts(svc *corev1.Service, pod *corev1.Pod) ([]corev1.EndpointPort, bool) {
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
		out = append(out, corev1.EndpointPort{Name: sp.Name, Port: n, Protocol: Protocol(sp.Protocol), AppProtocol: sp.AppProtocol})
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
	name, proto := tp.StrVal, Protocol(sp.Protocol)
	containers := pod.Spec.Containers
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(slices.Clip(containers), c)
		}
	}
	for _, c := range containers {
		for _, p := range c.Ports {
			if p.Name == name && Protocol(p.Protocol) == proto {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// Protocol is p, TCP when unset.
func Protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// PortsKey is one string per resolved port set: pods whose keys differ go
// into different subsets (Endpoints) or slices (EndpointSlices).
func PortsKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s/%d/%s;", p.Name, p.Port, p.Protocol)
	}
	return b.String()
}

// Changed reports a change of what endpoints say about a pod: its IPs,
// node, readiness, deletion, phase or DNS identity. A pod update that
// changes none of them changes no Endpoints and no EndpointSlice.
func Changed(o, c *corev1.Pod) bool {
	return o.Status.PodIP != c.Status.PodIP ||
		!slices.Equal(o.Status.PodIPs, c.Status.PodIPs) ||
		o.Spec.NodeName != c.Spec.NodeName ||
		Ready(o) != Ready(c) ||
		(o.DeletionTimestamp == nil) != (c.DeletionTimestamp == nil) ||
		o.Status.Phase != c.Status.Phase ||
		o.Spec.Hostname != c.Spec.Hostname || o.Spec.Subdomain != c.Spec.Subdomain
}
