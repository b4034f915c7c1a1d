package validation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validSlice() *discoveryv1.EndpointSlice {
	return defaulted(&discoveryv1.EndpointSlice{
		ObjectMeta:  meta("web-abcde"),
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}, NodeName: ptr("n1"), Zone: ptr("zone-a"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: "web-0"}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr[int32](8080)}, {Name: ptr("dns"), Port: ptr[int32](53), Protocol: ptr(corev1.ProtocolUDP)}},
	})
}

func TestEndpointSlice(t *testing.T) {
	endpoints := func(n, addrs int) []discoveryv1.Endpoint {
		out := make([]discoveryv1.Endpoint, n)
		for i := range out {
			for j := range addrs {
				out[i].Addresses = append(out[i].Addresses, fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1))
			}
		}
		return out
	}
	ports := func(n int) []discoveryv1.EndpointPort {
		out := make([]discoveryv1.EndpointPort, n)
		for i := range out {
			out[i] = discoveryv1.EndpointPort{Name: ptr(fmt.Sprintf("p%d", i)), Port: ptr(int32(i + 1)), Protocol: ptr(corev1.ProtocolTCP)}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		edit  func(s *discoveryv1.EndpointSlice)
		wants []want
	}{
		{"valid", func(*discoveryv1.EndpointSlice) {}, nil},
		{"generateName only", func(s *discoveryv1.EndpointSlice) { s.Name, s.GenerateName = "", "web-" }, nil},
		{"addressType required", func(s *discoveryv1.EndpointSlice) { s.AddressType = "" }, []want{"Required addressType"}},
		{"addressType IP is deprecated", func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" }, []want{"NotSupported addressType"}},
		{"IPv6 slice", func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeIPv6
			s.Endpoints[0].Addresses = []string{"fd00::1"}
		}, nil},
		{"IPv6 address in an IPv4 slice", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"fd00::1"} },
			[]want{"Invalid endpoints[0].addresses[0]: must be an IPv4 address"}},
		{"not an IP", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"web.example"} },
			[]want{"Invalid endpoints[0].addresses[0]"}},
		{"loopback", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"127.0.0.1"} },
			[]want{"Invalid endpoints[0].addresses[0]: loopback"}},
		{"FQDN", func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"web.example.com", "Not_A_Name"}
		}, []want{"Invalid endpoints[0].addresses[1]"}},
		{"no address", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil },
			[]want{"Required endpoints[0].addresses: at least 1 address"}},
		{"101 addresses: one error", func(s *discoveryv1.EndpointSlice) { s.Endpoints = endpoints(1, 101) },
			[]want{"TooMany endpoints[0].addresses"}},
		{"1000 endpoints", func(s *discoveryv1.EndpointSlice) { s.Endpoints = endpoints(1000, 1) }, nil},
		{"1001 endpoints: one error", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = endpoints(1001, 1)
			s.Endpoints[5].Addresses = []string{"bad"}
		}, []want{"TooMany endpoints"}},
		{"100 ports", func(s *discoveryv1.EndpointSlice) { s.Ports = ports(100) }, nil},
		{"101 ports: one error", func(s *discoveryv1.EndpointSlice) { s.Ports = ports(101) }, []want{"TooMany ports"}},
		{"bad port name", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name = ptr("HTTP_1") }, []want{"Invalid ports[0].name"}},
		{"duplicate port name", func(s *discoveryv1.EndpointSlice) { s.Ports[1].Name = ptr("http") }, []want{"Duplicate ports[1].name"}},
		{"two unnamed ports", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name, s.Ports[1].Name = ptr(""), ptr("") },
			[]want{"Duplicate ports[1].name"}},
		{"bad protocol", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Protocol = ptr(corev1.Protocol("ICMP")) },
			[]want{"NotSupported ports[0].protocol"}},
		{"port out of range", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Port = ptr[int32](70000) }, []want{"Invalid ports[0].port"}},
		{"no port number means all ports", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Port = nil }, nil},
		{"bad appProtocol", func(s *discoveryv1.EndpointSlice) { s.Ports[0].AppProtocol = ptr("a/b/c") },
			[]want{"Invalid ports[0].appProtocol"}},
		{"bad nodeName", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].NodeName = ptr("N_1") },
			[]want{"Invalid endpoints[0].nodeName"}},
		{"bad hostname", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = ptr("a.b") },
			[]want{"Invalid endpoints[0].hostname"}},
		{"bad zone", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Zone = ptr("zone a") },
			[]want{"Invalid endpoints[0].zone"}},
		{"bad label", func(s *discoveryv1.EndpointSlice) {
			s.Labels = map[string]string{discoveryv1.LabelServiceName: "web", "bad key!": "x"}
		}, []want{"Invalid metadata.labels"}},
		{"too many zone hints", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: make([]discoveryv1.ForZone, 9)}
		}, []want{"TooMany endpoints[0].hints.forZones"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSlice()
			tc.edit(s)
			expectErrs(t, ValidateCreate(s), tc.wants...)
		})
	}
}

func TestEndpointSliceDefaults(t *testing.T) {
	s := defaulted(&discoveryv1.EndpointSlice{ObjectMeta: meta("web-1"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Port: ptr[int32](80)}}})
	if p := s.Ports[0]; p.Name == nil || *p.Name != "" || p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP {
		t.Fatalf("port defaults: %+v", p)
	}
	expectErrs(t, ValidateCreate(s))
}

func TestEndpointSliceUpdate(t *testing.T) {
	old := validSlice()
	stored(&old.ObjectMeta)
	s := old.DeepCopy()
	s.Endpoints[0].Addresses = []string{"10.244.0.2"}
	expectErrs(t, ValidateUpdate(s, old))
	s.AddressType = discoveryv1.AddressTypeIPv6
	s.Endpoints[0].Addresses = []string{"fd00::2"}
	expectErrs(t, ValidateUpdate(s, old), "Invalid addressType: field is immutable")
}

// The bounds hold whatever the size: an oversized slice is one error.
func TestEndpointSliceErrorsBounded(t *testing.T) {
	s := validSlice()
	s.Endpoints = make([]discoveryv1.Endpoint, 100000)
	s.Ports = make([]discoveryv1.EndpointPort, 100000)
	errs := ValidateCreate(s)
	if len(errs) != 2 {
		t.Fatalf("%d errors, want 2 (TooMany endpoints, TooMany ports)", len(errs))
	}
	for _, e := range errs {
		if e.Type != field.ErrorTypeTooMany {
			t.Errorf("error %v, want TooMany", e)
		}
	}
}
