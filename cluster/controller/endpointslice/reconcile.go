package endpointslice

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The reconciler: from the slices a controller manages for one Service and
// the endpoints it wants them to hold, the writes that get there with the
// least churn (upstream's reconciler, pkg/controller/endpointslice):
//
//   - an existing slice whose port set and address type are still wanted
//     keeps the wanted endpoints it holds, updated in place, and drops the
//     others; a slice left empty, or of a port set no longer wanted, is
//     deleted;
//   - endpoints no slice holds go first into the slices being updated
//     anyway (fullest first), then, when fewer than a slice's worth remain,
//     into the one unchanged slice closest to full that takes them all,
//     and only then into new slices;
//   - a slice to create and one to delete of the same address type become
//     one update;
//   - nothing changed (compared semantically) means nothing written.
//
// No slice ever holds more than max endpoints. Pure: no I/O, no clock.

// group is what one port set of one address type should hold.
type group struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint
}

// template is the metadata every slice of the Service carries.
type template struct {
	namespace    string
	generateName string
	labels       map[string]string
	owner        metav1.OwnerReference
}

// plan is the writes of one reconcile, in the order to send them: creates
// first, so endpoints moving between slices are never missing from all.
type plan struct {
	create, update, delete []*discoveryv1.EndpointSlice
}

func (p plan) empty() bool { return len(p.create)+len(p.update)+len(p.delete) == 0 }

// groupKey is a slice's identity for reconciling: its address type and
// port set.
func groupKey(at discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	var b strings.Builder
	b.WriteString(string(at))
	b.WriteByte('|')
	for _, p := range ports {
		fmt.Fprintf(&b, "%s/%d/%s/%s;", deref(p.Name), deref(p.Port), deref(p.Protocol), deref(p.AppProtocol))
	}
	return b.String()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// endpointKey is an endpoint's identity across slices: the object it
// targets, else its addresses.
func endpointKey(ep *discoveryv1.Endpoint) string {
	if r := ep.TargetRef; r != nil && r.UID != "" {
		return "uid:" + string(r.UID)
	}
	return "addr:" + strings.Join(ep.Addresses, ",")
}

// sortPorts orders ports by name, port and protocol, so that equal port
// sets have equal keys.
func sortPorts(ps []discoveryv1.EndpointPort) {
	slices.SortFunc(ps, func(a, b discoveryv1.EndpointPort) int {
		return cmp.Or(cmp.Compare(deref(a.Name), deref(b.Name)), cmp.Compare(deref(a.Port), deref(b.Port)),
			cmp.Compare(deref(a.Protocol), deref(b.Protocol)))
	})
}

// reconcile plans the writes that make existing (the controller's slices
// of one Service) hold desired, at most max endpoints a slice.
func reconcile(existing []*discoveryv1.EndpointSlice, desired []group, tmpl template, max int) plan {
	var p plan
	byKey := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		k := groupKey(s.AddressType, s.Ports)
		byKey[k] = append(byKey[k], s)
	}
	wanted := map[string]bool{}
	for i := range desired {
		g := &desired[i]
		k := groupKey(g.addressType, g.ports)
		wanted[k] = true
		c, u, d := reconcileGroup(byKey[k], g, tmpl, max)
		p.create, p.update, p.delete = append(p.create, c...), append(p.update, u...), append(p.delete, d...)
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		if !wanted[k] {
			p.delete = append(p.delete, byKey[k]...)
		}
	}
	return reuseDeleted(p)
}

// reconcileGroup is one port set's part of reconcile.
func reconcileGroup(existing []*discoveryv1.EndpointSlice, g *group, tmpl template, max int) (create, update, del []*discoveryv1.EndpointSlice) {
	want := make(map[string]*discoveryv1.Endpoint, len(g.endpoints))
	for i := range g.endpoints {
		want[endpointKey(&g.endpoints[i])] = &g.endpoints[i]
	}
	placed := map[string]bool{}
	var unchanged []*discoveryv1.EndpointSlice
	slices.SortFunc(existing, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	for _, s := range existing {
		kept := make([]discoveryv1.Endpoint, 0, len(s.Endpoints))
		changed := false
		for i := range s.Endpoints {
			k := endpointKey(&s.Endpoints[i])
			d, ok := want[k]
			if !ok || placed[k] || len(kept) == max {
				continue // unwanted, a duplicate, or over the limit
			}
			placed[k] = true
			kept = append(kept, *d)
			if !apiequality.Semantic.DeepEqual(*d, s.Endpoints[i]) {
				changed = true
			}
		}
		switch {
		case len(kept) == 0:
			del = append(del, s)
		case changed || len(kept) != len(s.Endpoints) || !metaCurrent(s, tmpl):
			u := s.DeepCopy()
			u.Endpoints = kept
			setMeta(u, tmpl)
			update = append(update, u)
		default:
			unchanged = append(unchanged, s)
		}
	}
	var rest []discoveryv1.Endpoint
	for i := range g.endpoints {
		if !placed[endpointKey(&g.endpoints[i])] {
			rest = append(rest, g.endpoints[i])
		}
	}
	// Fill the slices written anyway, fullest first.
	slices.SortStableFunc(update, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(len(b.Endpoints), len(a.Endpoints)) })
	for _, u := range update {
		n := min(len(rest), max-len(u.Endpoints))
		if n > 0 {
			u.Endpoints = append(u.Endpoints, rest[:n]...)
			rest = rest[n:]
		}
	}
	for len(rest) > 0 {
		var s *discoveryv1.EndpointSlice
		if len(rest) < max {
			if i := sliceToFill(unchanged, len(rest), max); i >= 0 {
				s = unchanged[i].DeepCopy()
				setMeta(s, tmpl)
				unchanged = slices.Delete(unchanged, i, i+1)
				update = append(update, s)
			}
		}
		if s == nil {
			s = newSlice(g, tmpl)
			create = append(create, s)
		}
		n := min(len(rest), max-len(s.Endpoints))
		s.Endpoints = append(s.Endpoints, rest[:n]...)
		rest = rest[n:]
	}
	return create, update, del
}

// sliceToFill is the index of the unchanged slice closest to full that
// still takes n more endpoints, -1 when none does.
func sliceToFill(unchanged []*discoveryv1.EndpointSlice, n, max int) int {
	best := -1
	for i, s := range unchanged {
		if len(s.Endpoints)+n <= max && (best < 0 || len(s.Endpoints) > len(unchanged[best].Endpoints)) {
			best = i
		}
	}
	return best
}

// reuseDeleted turns a create and a delete of the same address type into
// one update of the slice that would have been deleted.
func reuseDeleted(p plan) plan {
	for i := 0; i < len(p.create); {
		c := p.create[i]
		j := slices.IndexFunc(p.delete, func(d *discoveryv1.EndpointSlice) bool { return d.AddressType == c.AddressType })
		if j < 0 {
			i++
			continue
		}
		u := p.delete[j].DeepCopy()
		u.Ports, u.Endpoints, u.Labels, u.OwnerReferences = c.Ports, c.Endpoints, c.Labels, c.OwnerReferences
		p.update = append(p.update, u)
		p.delete = slices.Delete(p.delete, j, j+1)
		p.create = slices.Delete(p.create, i, i+1)
	}
	return p
}

func newSlice(g *group, tmpl template) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: tmpl.namespace, GenerateName: tmpl.generateName},
		AddressType: g.addressType,
		Ports:       g.ports,
	}
	setMeta(s, tmpl)
	return s
}

// metaCurrent: s carries the template's labels and its owner as
// controller.
func metaCurrent(s *discoveryv1.EndpointSlice, tmpl template) bool {
	if !labels.Equals(s.Labels, tmpl.labels) {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(s)
	return ref != nil && ref.UID == tmpl.owner.UID
}

func setMeta(s *discoveryv1.EndpointSlice, tmpl template) {
	s.Labels = maps.Clone(tmpl.labels)
	s.OwnerReferences = []metav1.OwnerReference{tmpl.owner}
}
