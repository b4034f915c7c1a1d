package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestService(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []want
	}{
		{"valid", func(s *corev1.Service) {}, nil},
		{"ports required", func(s *corev1.Service) { s.Spec.Ports = nil }, []want{"Required spec.ports"}},
		{"headless without ports", func(s *corev1.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		}, nil},
		{"ExternalName without ports", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com.", SessionAffinity: "None"}
		}, nil},
		{"ExternalName without name", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: "None"}
		}, []want{"Required spec.externalName"}},
		{"ExternalName with clusterIP", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db", SessionAffinity: "None",
				ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1"}}
		}, []want{"Forbidden spec.clusterIPs: may not be set for ExternalName services"}},
		{"port zero", func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 },
			[]want{"Invalid spec.ports[0].port: must be between 1 and 65535, inclusive"}},
		{"port too big", func(s *corev1.Service) { s.Spec.Ports[0].Port = 65536 }, []want{"Invalid spec.ports[0].port"}},
		{"protocol", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "HTTP" },
			[]want{`NotSupported spec.ports[0].protocol: supported values: "SCTP", "TCP", "UDP"`}},
		{"UDP and SCTP", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: "UDP", TargetPort: intstr.FromInt32(53)},
				{Name: "sctp", Port: 53, Protocol: "SCTP", TargetPort: intstr.FromInt32(53)}}
		}, nil},
		{"targetPort name", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("Not_A_Port") },
			[]want{"Invalid spec.ports[0].targetPort"}},
		{"targetPort number", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(70000) },
			[]want{"Invalid spec.ports[0].targetPort: must be between 1 and 65535, inclusive"}},
		{"two ports need names", func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, Protocol: "TCP", TargetPort: intstr.FromInt32(443)})
		}, []want{"Required spec.ports[0].name"}},
		{"duplicate port", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 80, Protocol: "TCP", TargetPort: intstr.FromInt32(80)},
				{Name: "b", Port: 80, Protocol: "TCP", TargetPort: intstr.FromInt32(81)}}
		}, []want{"Duplicate spec.ports[1]"}},
		{"type", func(s *corev1.Service) { s.Spec.Type = "Ingress" },
			[]want{`NotSupported spec.type: supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`}},
		{"nodePort on ClusterIP", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 },
			[]want{"Forbidden spec.ports[0].nodePort: may not be used when `type` is 'ClusterIP'"}},
		{"NodePort service", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.Ports[0].NodePort = 30080
		}, nil},
		{"NodePort headless", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		}, []want{"Invalid spec.clusterIPs[0]: may not be set to 'None' for NodePort services"}},
		{"externalTrafficPolicy on ClusterIP", func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = "Local" },
			[]want{"Invalid spec.externalTrafficPolicy: may only be set for externally-accessible services"}},
		{"sessionAffinity", func(s *corev1.Service) { s.Spec.SessionAffinity = "Cookie" },
			[]want{`NotSupported spec.sessionAffinity: supported values: "ClientIP", "None"`}},
		{"ClientIP timeout", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(0))}}
		}, []want{"Invalid spec.sessionAffinityConfig.clientIP.timeoutSeconds: must be greater than 0 and less than 86400"}},
		{"clusterIP not an IP", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0", []string{"10.0.0"} },
			[]want{"Invalid spec.clusterIPs[0]"}},
		{"clusterIPs disagree", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.1", []string{"10.0.0.2"} },
			[]want{"Invalid spec.clusterIPs: first value must match `clusterIP`"}},
		{"internalTrafficPolicy", func(s *corev1.Service) {
			p := corev1.ServiceInternalTrafficPolicy("Node")
			s.Spec.InternalTrafficPolicy = &p
		},
			[]want{"NotSupported spec.internalTrafficPolicy"}},
		{"externalIP loopback", func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"127.0.0.1"}
			s.Spec.ExternalTrafficPolicy = "Cluster"
		}, []want{"Invalid spec.externalIPs[0]: may not be in the loopback range"}},
		{"selector label", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"a": "b c"} }, []want{"Invalid spec.selector"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validService()
			tc.mutate(s)
			expectErrs(t, ValidateCreate(s), tc.want...)
		})
	}
}

// The cluster IP is fixed once allocated.
func TestServiceUpdate(t *testing.T) {
	allocated := func() *corev1.Service {
		s := validService()
		stored(&s.ObjectMeta)
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.10", []string{"10.96.0.10"}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		return s
	}
	tests := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []want
	}{
		{"ports change", func(s *corev1.Service) { s.Spec.Ports[0].Port = 8080 }, nil},
		{"clusterIP changed", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"} },
			[]want{"Invalid spec.clusterIPs[0]: may not change once set"}},
		{"clusterIP unset", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil },
			[]want{"Invalid spec.clusterIPs[0]: primary clusterIP can not be unset"}},
		{"to ExternalName", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db", SessionAffinity: "None"}
		}, nil},
		{"ipFamilies changed", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} },
			[]want{"Invalid spec.ipFamilies[0]: may not change once set", "Invalid spec.clusterIPs[0]: expected an IPv6 value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := allocated()
			s := old.DeepCopy()
			tc.mutate(s)
			expectErrs(t, ValidateUpdate(s, old), tc.want...)
		})
	}
}

func TestServiceStatusUpdate(t *testing.T) {
	old := validService()
	stored(&old.ObjectMeta)
	s := old.DeepCopy()
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example.com"}}
	expectErrs(t, ValidateStatusUpdate(s, old))
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "nope"}, {Hostname: "10.0.0.1"}}
	expectErrs(t, ValidateStatusUpdate(s, old),
		"Invalid status.loadBalancer.ingress[0].ip",
		"Invalid status.loadBalancer.ingress[1].hostname: must be a DNS name, not an IP address")
}

func TestEndpoints(t *testing.T) {
	tests := []struct {
		name   string
		subset corev1.EndpointSubset
		want   []want
	}{
		{"valid", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.4"}}, Ports: []corev1.EndpointPort{{Port: 80, Protocol: "TCP"}}}, nil},
		{"no addresses", corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Port: 80, Protocol: "TCP"}}},
			[]want{"Required subsets[0]: must specify `addresses` or `notReadyAddresses`"}},
		{"bad IP", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.0"}}}, []want{"Invalid subsets[0].addresses[0].ip"}},
		{"loopback IP", corev1.EndpointSubset{NotReadyAddresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}},
			[]want{"Invalid subsets[0].notReadyAddresses[0].ip: may not be in the loopback range"}},
		{"bad port", corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.4"}}, Ports: []corev1.EndpointPort{{Port: 0, Protocol: "TCP"}}},
			[]want{"Invalid subsets[0].ports[0].port"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep := &corev1.Endpoints{ObjectMeta: meta("web"), Subsets: []corev1.EndpointSubset{tc.subset}}
			expectErrs(t, ValidateCreate(ep), tc.want...)
		})
	}
}
