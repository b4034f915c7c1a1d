package framework

import corev1 "k8s.io/api/core/v1"

// DefaultBindAllHostIP is the host IP a port without one binds: every
// address of the node.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and a host port.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo is the host ports in use on a node: host IP → protocol and
// port. An empty IP is 0.0.0.0 and an empty protocol TCP, as upstream.
type HostPortInfo map[string]map[ProtocolPort]int

func sanitizeHostPort(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// Add records one use of (ip, protocol, port); ports <= 0 are not host
// ports. Uses are counted, so removing one of two pods holding the same
// port keeps it in use.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitizeHostPort(ip, protocol)
	m := h[ip]
	if m == nil {
		m = map[ProtocolPort]int{}
		h[ip] = m
	}
	m[ProtocolPort{protocol, port}]++
}

// Remove forgets one use of (ip, protocol, port).
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitizeHostPort(ip, protocol)
	m := h[ip]
	pp := ProtocolPort{protocol, port}
	if m[pp] <= 1 {
		delete(m, pp)
	} else {
		m[pp]--
	}
	if len(m) == 0 {
		delete(h, ip)
	}
}

// CheckConflict reports whether (ip, protocol, port) is taken: 0.0.0.0
// conflicts with the port on any IP; another IP conflicts with itself and
// with 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitizeHostPort(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if m[pp] > 0 {
				return true
			}
		}
		return false
	}
	return h[DefaultBindAllHostIP][pp] > 0 || h[ip][pp] > 0
}

// Clone returns a deep copy.
func (h HostPortInfo) Clone() HostPortInfo {
	if h == nil {
		return nil
	}
	c := make(HostPortInfo, len(h))
	for ip, m := range h {
		cm := make(map[ProtocolPort]int, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c[ip] = cm
	}
	return c
}

// HostPorts returns the container ports of pod that bind a host port
// (regular containers and restartable init containers, as upstream).
func HostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	add := func(cs []corev1.Container, sidecarsOnly bool) {
		for i := range cs {
			c := &cs[i]
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, p := range c.Ports {
				if p.HostPort > 0 {
					out = append(out, p)
				}
			}
		}
	}
	add(pod.Spec.InitContainers, true)
	add(pod.Spec.Containers, false)
	return out
}

// PortsFit reports whether every one of want is free in used.
func PortsFit(want []corev1.ContainerPort, used HostPortInfo) bool {
	for _, p := range want {
		if used.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}
