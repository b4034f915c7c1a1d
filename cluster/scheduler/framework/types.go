package framework

import (
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodInfo is a pod with what the scheduler derives from it, computed once
// when the pod enters the cache or the queue rather than once per node.
type PodInfo struct {
	Pod *corev1.Pod
	// Requests is PodRequests(Pod).
	Requests Resource
	// NonZeroRequests is PodRequestsNonZero(Pod), for scoring.
	NonZeroRequests Resource
	// RequiredAffinityTerms and RequiredAntiAffinityTerms are the pod's
	// requiredDuringSchedulingIgnoredDuringExecution pod (anti-)affinity.
	RequiredAffinityTerms     []AffinityTerm
	RequiredAntiAffinityTerms []AffinityTerm
	// PreferredAffinityTerms and PreferredAntiAffinityTerms are the pod's
	// preferredDuringSchedulingIgnoredDuringExecution ones, with weights.
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// HostPorts are the container ports that bind a host port.
	HostPorts []corev1.ContainerPort
	// ParseErr is set when a term's label selector does not parse; the
	// terms are then empty and InterPodAffinity refuses the pod.
	ParseErr error
}

// NewPodInfo derives a PodInfo from pod. pod is shared, never mutated.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod, Requests: PodRequests(pod), NonZeroRequests: PodRequestsNonZero(pod), HostPorts: HostPorts(pod)}
	if a := pod.Spec.Affinity; a != nil {
		var err error
		keep := func(e error) {
			if e != nil {
				pi.ParseErr = e
			}
		}
		if a.PodAffinity != nil {
			pi.RequiredAffinityTerms, err = ParseAffinityTerms(pod, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			keep(err)
			pi.PreferredAffinityTerms, err = ParseWeightedAffinityTerms(pod, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			keep(err)
		}
		if a.PodAntiAffinity != nil {
			pi.RequiredAntiAffinityTerms, err = ParseAffinityTerms(pod, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			keep(err)
			pi.PreferredAntiAffinityTerms, err = ParseWeightedAffinityTerms(pod, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			keep(err)
		}
	}
	return pi
}

// HasAffinity reports whether the pod has any pod affinity or
// anti-affinity term, required or preferred.
func (pi *PodInfo) HasAffinity() bool {
	return len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 ||
		len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
}

// WeightedAffinityTerm is a parsed preferred term and its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// ParseWeightedAffinityTerms parses preferred terms as ParseAffinityTerms
// does required ones.
func ParseWeightedAffinityTerms(pod *corev1.Pod, terms []corev1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	plain := make([]corev1.PodAffinityTerm, len(terms))
	for i := range terms {
		plain[i] = terms[i].PodAffinityTerm
	}
	parsed, err := ParseAffinityTerms(pod, plain)
	if err != nil {
		return nil, err
	}
	out := make([]WeightedAffinityTerm, len(parsed))
	for i := range parsed {
		out[i] = WeightedAffinityTerm{AffinityTerm: parsed[i], Weight: terms[i].Weight}
	}
	return out, nil
}

// AffinityTerm is a parsed PodAffinityTerm: which pods it selects and the
// topology over which "together" or "apart" is judged.
type AffinityTerm struct {
	// Namespaces the selected pods may live in; AllNamespaces overrides.
	Namespaces    map[string]struct{}
	AllNamespaces bool
	Selector      labels.Selector
	TopologyKey   string
}

// ParseAffinityTerms parses the terms of pod. A term without namespaces and
// without a namespaceSelector selects pods of the pod's own namespace; an
// empty namespaceSelector ({}) selects every namespace. A non-empty
// namespaceSelector needs namespace labels, which kstep's scheduler does not
// watch: such a term sees only its listed namespaces.
func ParseAffinityTerms(pod *corev1.Pod, terms []corev1.PodAffinityTerm) ([]AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]AffinityTerm, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s affinity term %d: %w", pod.Namespace, pod.Name, i, err)
		}
		at := AffinityTerm{Selector: sel, TopologyKey: t.TopologyKey, Namespaces: map[string]struct{}{}}
		for _, ns := range t.Namespaces {
			at.Namespaces[ns] = struct{}{}
		}
		if t.NamespaceSelector != nil && len(t.NamespaceSelector.MatchLabels) == 0 && len(t.NamespaceSelector.MatchExpressions) == 0 {
			at.AllNamespaces = true
		}
		if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
			at.Namespaces[pod.Namespace] = struct{}{}
		}
		out = append(out, at)
	}
	return out, nil
}

// Matches reports whether the term selects pod.
func (t *AffinityTerm) Matches(pod *corev1.Pod) bool {
	if !t.AllNamespaces {
		if _, ok := t.Namespaces[pod.Namespace]; !ok {
			return false
		}
	}
	return t.Selector.Matches(labels.Set(pod.Labels))
}

// ImageStateSummary is what ImageLocality knows of an image on a node.
type ImageStateSummary struct {
	// Size in bytes.
	Size int64
	// NumNodes is how many nodes report the image.
	NumNodes int
}

var generation atomic.Int64

// NextGeneration returns a number larger than any returned before; the
// cache stamps every NodeInfo change with one so a snapshot can copy only
// what changed since it was taken.
func NextGeneration() int64 { return generation.Add(1) }

// NodeInfo is one node and the pods the scheduler accounts on it (bound
// and assumed).
type NodeInfo struct {
	node *corev1.Node
	// Pods on the node, bound or assumed.
	Pods []*PodInfo
	// PodsWithAffinity have pod affinity or anti-affinity terms, required
	// or preferred; PodsWithRequiredAntiAffinity have required
	// anti-affinity terms.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	// Requested is the sum of the pods' requests; NonZeroRequested the sum
	// with scoring defaults for missing cpu/memory requests.
	Requested        Resource
	NonZeroRequested Resource
	// UsedPorts are the host ports the pods hold; nil when none.
	UsedPorts HostPortInfo
	// Allocatable is the node's status.allocatable.
	Allocatable Resource
	// ImageStates by normalized image name; filled in snapshots only.
	ImageStates map[string]*ImageStateSummary
	// Generation changes on every change of the NodeInfo.
	Generation int64
}

// NewNodeInfo returns a NodeInfo holding pods (no node yet).
func NewNodeInfo(pods ...*corev1.Pod) *NodeInfo {
	ni := &NodeInfo{Generation: NextGeneration()}
	for _, p := range pods {
		ni.AddPodInfo(NewPodInfo(p))
	}
	return ni
}

// Node returns the node; nil when only pods are known (the node was
// deleted, or its pods arrived before it).
func (n *NodeInfo) Node() *corev1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// SetNode sets the node object and its allocatable.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.Generation = NextGeneration()
}

// RemoveNode forgets the node object but keeps its pods.
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.Generation = NextGeneration()
}

// AddPodInfo accounts a pod on the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if pi.HasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.Requested.Add(&pi.Requests)
	n.NonZeroRequested.Add(&pi.NonZeroRequests)
	if len(pi.HostPorts) > 0 {
		if n.UsedPorts == nil {
			n.UsedPorts = HostPortInfo{}
		}
		for _, p := range pi.HostPorts {
			n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	n.Generation = NextGeneration()
}

// RemovePod un-accounts the pod with pod's UID.
func (n *NodeInfo) RemovePod(pod *corev1.Pod) error {
	n.PodsWithAffinity = removeByUID(n.PodsWithAffinity, pod)
	n.PodsWithRequiredAntiAffinity = removeByUID(n.PodsWithRequiredAntiAffinity, pod)
	for i, pi := range n.Pods {
		if pi.Pod.UID != pod.UID {
			continue
		}
		last := len(n.Pods) - 1
		n.Pods[i] = n.Pods[last]
		n.Pods[last] = nil
		n.Pods = n.Pods[:last]
		n.Requested.Sub(&pi.Requests)
		n.NonZeroRequested.Sub(&pi.NonZeroRequests)
		for _, p := range pi.HostPorts {
			n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
		n.Generation = NextGeneration()
		return nil
	}
	name := "<nil>"
	if n.node != nil {
		name = n.node.Name
	}
	return fmt.Errorf("pod %s/%s (uid %s) is not on node %s", pod.Namespace, pod.Name, pod.UID, name)
}

func removeByUID(s []*PodInfo, pod *corev1.Pod) []*PodInfo {
	for i, pi := range s {
		if pi.Pod.UID == pod.UID {
			last := len(s) - 1
			s[i] = s[last]
			s[last] = nil
			return s[:last]
		}
	}
	return s
}

// Clone returns a copy that shares PodInfos and the node object (both
// immutable) but no slice or map with n.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		UsedPorts:        n.UsedPorts.Clone(),
		Generation:       n.Generation,
	}
	if len(n.Pods) > 0 {
		c.Pods = append(make([]*PodInfo, 0, len(n.Pods)+1), n.Pods...)
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	if n.ImageStates != nil {
		c.ImageStates = make(map[string]*ImageStateSummary, len(n.ImageStates))
		for k, v := range n.ImageStates {
			s := *v
			c.ImageStates[k] = &s
		}
	}
	return c
}

// NodeScore is one node's score from one plugin, or in total.
type NodeScore struct {
	Name  string
	Score int64
}

// Score bounds: plugins score in [MinNodeScore, MaxNodeScore] after
// normalization; the framework multiplies by the plugin's weight.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)
