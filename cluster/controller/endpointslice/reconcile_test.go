package endpointslice

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func ep(i int, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("p%04d", i), UID: types.UID(fmt.Sprintf("u%04d", i))}}
}

func eps(from, to int) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for i := from; i < to; i++ {
		out = append(out, ep(i, true))
	}
	return out
}

var (
	testPorts = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}
	testTmpl  = template{namespace: "ns", generateName: "web-", labels: map[string]string{discoveryv1.LabelServiceName: "web"},
		owner: metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: "web", UID: "svc", Controller: ptr.To(true)}}
)

func slice(name string, e []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := newSlice(&group{addressType: discoveryv1.AddressTypeIPv4, ports: testPorts}, testTmpl)
	s.Name, s.UID, s.Endpoints = name, types.UID(name), e
	return s
}

func sizes(ss []*discoveryv1.EndpointSlice) []int {
	var out []int
	for _, s := range ss {
		out = append(out, len(s.Endpoints))
	}
	slices.Sort(out)
	return out
}

func names(ss []*discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// The reconciler's choices, one table row each (upstream's reconciler
// tests in small).
func TestReconcile(t *testing.T) {
	want := func(e []discoveryv1.Endpoint) []group {
		return []group{{addressType: discoveryv1.AddressTypeIPv4, ports: testPorts, endpoints: e}}
	}
	for _, tc := range []struct {
		name                string
		have                []*discoveryv1.EndpointSlice
		want                []group
		create, update, del []int    // sizes of the slices written
		updated, deleted    []string // which existing slices
	}{
		{name: "250 new endpoints: 100, 100, 50", want: want(eps(0, 250)), create: []int{50, 100, 100}},
		{name: "nothing changed, nothing written", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 100)), slice("b", eps(100, 150))}, want: want(eps(0, 150))},
		{name: "a changed endpoint is updated in place", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 100)), slice("b", eps(100, 150))},
			want:   want(append(eps(0, 120), append([]discoveryv1.Endpoint{ep(120, false)}, eps(121, 150)...)...)),
			update: []int{50}, updated: []string{"b"}},
		{name: "new endpoints fill the slice being updated first",
			have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 60)), slice("b", eps(100, 150))},
			want: want(append(eps(0, 59), eps(100, 190)...)), update: []int{99}, updated: []string{"a"}},
		{name: "then the unchanged slice closest to full that takes them all",
			have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 40)), slice("b", eps(100, 170))},
			want: want(append(eps(0, 40), eps(100, 200)...)), update: []int{100}, updated: []string{"b"}},
		{name: "a slice left empty is deleted", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 100)), slice("b", eps(100, 150))},
			want: want(eps(0, 100)), del: []int{50}, deleted: []string{"b"}},
		{name: "no endpoints: every slice deleted", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 10))}, want: nil, del: []int{10}, deleted: []string{"a"}},
		{name: "a create and a delete become one update",
			have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 10))}, want: want(eps(10, 20)), update: []int{10}, updated: []string{"a"}},
		{name: "an overfull slice is cut to the limit", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 150))},
			want: want(eps(0, 150)), create: []int{50}, update: []int{100}, updated: []string{"a"}},
		{name: "an endpoint in two slices is kept once", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 10)), slice("b", eps(5, 15))},
			want: want(eps(0, 15)), update: []int{5}, updated: []string{"b"}},
		{name: "a port set no longer wanted goes", have: []*discoveryv1.EndpointSlice{slice("a", eps(0, 10))},
			want:   []group{{addressType: discoveryv1.AddressTypeIPv4, endpoints: eps(0, 10)}},
			update: []int{10}, updated: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := reconcile(tc.have, tc.want, testTmpl, 100)
			if !slices.Equal(sizes(p.create), tc.create) || !slices.Equal(sizes(p.update), tc.update) || !slices.Equal(sizes(p.delete), tc.del) {
				t.Fatalf("create %v update %v delete %v, want %v %v %v", sizes(p.create), sizes(p.update), sizes(p.delete), tc.create, tc.update, tc.del)
			}
			if !slices.Equal(names(p.update), tc.updated) || !slices.Equal(names(p.delete), tc.deleted) {
				t.Fatalf("updated %v deleted %v, want %v %v", names(p.update), names(p.delete), tc.updated, tc.deleted)
			}
			// Applied, the plan holds exactly what is wanted.
			got := map[string]bool{}
			for _, s := range slices.Concat(p.create, p.update) {
				for i := range s.Endpoints {
					got[endpointKey(&s.Endpoints[i])] = true
				}
			}
			for _, s := range tc.have {
				if slices.ContainsFunc(slices.Concat(p.update, p.delete), func(x *discoveryv1.EndpointSlice) bool { return x.Name == s.Name }) {
					continue
				}
				for i := range s.Endpoints {
					got[endpointKey(&s.Endpoints[i])] = true
				}
			}
			n := 0
			for _, g := range tc.want {
				n += len(g.endpoints)
				for i := range g.endpoints {
					if !got[endpointKey(&g.endpoints[i])] {
						t.Fatalf("endpoint %s missing", endpointKey(&g.endpoints[i]))
					}
				}
			}
			if len(got) != n {
				t.Fatalf("%d endpoints held, want %d", len(got), n)
			}
		})
	}
}
