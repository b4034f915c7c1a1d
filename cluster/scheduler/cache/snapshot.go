package cache

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Snapshot is the cluster as one scheduling cycle sees it. Only the
// scheduling goroutine uses it; UpdateSnapshot refreshes it in place
// between cycles.
type Snapshot struct {
	nodeInfoMap  map[string]*framework.NodeInfo
	nodeInfoList []*framework.NodeInfo
	withAffinity []*framework.NodeInfo
	withAnti     []*framework.NodeInfo
	generation   int64
}

var _ framework.NodeInfoLister = &Snapshot{}

// NewEmptySnapshot returns a snapshot to pass to UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}}
}

// NewSnapshot builds a snapshot straight from objects, for tests of
// plugins and of the cycle.
func NewSnapshot(pods []*corev1.Pod, nodes []*corev1.Node) *Snapshot {
	c := New(0, nil)
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		_ = c.AddPod(p)
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// List implements framework.NodeInfoLister.
func (s *Snapshot) List() []*framework.NodeInfo { return s.nodeInfoList }

// HavePodsWithAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithAffinityList() []*framework.NodeInfo { return s.withAffinity }

// HavePodsWithRequiredAntiAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*framework.NodeInfo { return s.withAnti }

// Get implements framework.NodeInfoLister.
func (s *Snapshot) Get(name string) *framework.NodeInfo { return s.nodeInfoMap[name] }

// NumNodes is the number of nodes in the snapshot.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// UpdateSnapshot brings s up to date, copying only the nodes changed since
// s was last updated.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	updateAll, updateAffinity := false, false
	for n := c.head; n != nil && n.info.Generation > s.generation; n = n.next {
		node := n.info.Node()
		if node == nil {
			continue
		}
		existing, ok := s.nodeInfoMap[node.Name]
		if !ok {
			updateAll = true
			existing = &framework.NodeInfo{}
			s.nodeInfoMap[node.Name] = existing
		}
		clone := n.info.Clone()
		clone.ImageStates = c.imageSummaries(node)
		if (len(existing.PodsWithAffinity) > 0) != (len(clone.PodsWithAffinity) > 0) ||
			(len(existing.PodsWithRequiredAntiAffinity) > 0) != (len(clone.PodsWithRequiredAntiAffinity) > 0) {
			updateAffinity = true
		}
		// In place: the lists hold these pointers.
		*existing = *clone
	}
	if c.head != nil {
		s.generation = c.head.info.Generation
	}
	if len(s.nodeInfoMap) > len(c.order) {
		for name := range s.nodeInfoMap {
			if n := c.nodes[name]; n == nil || n.info.Node() == nil {
				delete(s.nodeInfoMap, name)
			}
		}
		updateAll = true
	}
	if updateAll {
		s.nodeInfoList = s.nodeInfoList[:0]
		for _, name := range c.order {
			if ni := s.nodeInfoMap[name]; ni != nil {
				s.nodeInfoList = append(s.nodeInfoList, ni)
			}
		}
	}
	if updateAll || updateAffinity {
		s.withAffinity, s.withAnti = s.withAffinity[:0], s.withAnti[:0]
		for _, ni := range s.nodeInfoList {
			if len(ni.PodsWithAffinity) > 0 {
				s.withAffinity = append(s.withAffinity, ni)
			}
			if len(ni.PodsWithRequiredAntiAffinity) > 0 {
				s.withAnti = append(s.withAnti, ni)
			}
		}
	}
}
