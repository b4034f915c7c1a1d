package cache

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Cache holds nodes, bound pods and assumed pods. Safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	ttl   time.Duration
	clock clock.PassiveClock

	pods    map[types.UID]*podState
	assumed map[types.UID]bool
	nodes   map[string]*nodeItem
	// head is the most recently changed node; the list is in decreasing
	// generation order, so a snapshot walks only what changed.
	head *nodeItem
	// order lists the nodes that have a Node object, in the order they
	// were added: the snapshot's node order.
	order  []string
	images map[string]*imageState
}

type podState struct {
	pod *corev1.Pod
	// deadline is set by FinishBinding: an assumed pod not confirmed by
	// then is forgotten.
	deadline        time.Time
	bindingFinished bool
}

type nodeItem struct {
	info       *framework.NodeInfo
	prev, next *nodeItem
}

type imageState struct {
	size  int64
	nodes map[string]struct{}
}

// New returns an empty cache. Assumed pods whose binding finished expire
// ttl after it finished; ttl 0 means never.
func New(ttl time.Duration, clk clock.PassiveClock) *Cache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Cache{
		ttl: ttl, clock: clk,
		pods: map[types.UID]*podState{}, assumed: map[types.UID]bool{},
		nodes: map[string]*nodeItem{}, images: map[string]*imageState{},
	}
}

// AssumePod accounts pod (spec.nodeName set to the chosen node) on its
// node before the binding is durable.
func (c *Cache) AssumePod(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %s/%s is already in the cache and cannot be assumed", pod.Namespace, pod.Name)
	}
	c.addPod(pod)
	c.pods[pod.UID] = &podState{pod: pod}
	c.assumed[pod.UID] = true
	return nil
}

// FinishBinding starts the expiry clock of an assumed pod: its binding call
// returned, and the informer should confirm it soon.
func (c *Cache) FinishBinding(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok || !c.assumed[pod.UID] {
		return nil // confirmed already, or forgotten
	}
	ps.bindingFinished = true
	ps.deadline = c.clock.Now().Add(c.ttl)
	return nil
}

// ForgetPod drops an assumed pod whose binding failed.
func (c *Cache) ForgetPod(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return nil
	}
	if !c.assumed[pod.UID] {
		return fmt.Errorf("pod %s/%s is bound, not assumed: it cannot be forgotten", pod.Namespace, pod.Name)
	}
	if ps.pod.Spec.NodeName != pod.Spec.NodeName {
		return fmt.Errorf("pod %s/%s was assumed on node %s, not %s", pod.Namespace, pod.Name, ps.pod.Spec.NodeName, pod.Spec.NodeName)
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
	delete(c.assumed, pod.UID)
	return nil
}

// AddPod records a pod the informer shows bound; an assumed pod becomes
// confirmed (on the node the apiserver says, should that differ).
func (c *Cache) AddPod(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		c.addPod(pod)
		c.pods[pod.UID] = &podState{pod: pod}
		return nil
	}
	// Assumed (now confirmed), or a repeated add: take the apiserver's
	// version of the pod.
	c.removePod(ps.pod)
	c.addPod(pod)
	ps.pod, ps.bindingFinished, ps.deadline = pod, false, time.Time{}
	delete(c.assumed, pod.UID)
	return nil
}

// UpdatePod replaces a bound pod's object.
func (c *Cache) UpdatePod(_, pod *corev1.Pod) error { return c.AddPod(pod) }

// RemovePod drops a bound (or assumed) pod.
func (c *Cache) RemovePod(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return nil
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
	delete(c.assumed, pod.UID)
	return nil
}

// IsAssumed reports whether pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(pod *corev1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.assumed[pod.UID]
}

// CleanupExpired forgets assumed pods whose binding finished more than the
// TTL ago without the informer confirming them, and returns them.
func (c *Cache) CleanupExpired() []*corev1.Pod {
	if c.ttl == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	var out []*corev1.Pod
	for uid := range c.assumed {
		ps := c.pods[uid]
		if ps.bindingFinished && now.After(ps.deadline) {
			c.removePod(ps.pod)
			delete(c.pods, uid)
			delete(c.assumed, uid)
			out = append(out, ps.pod)
		}
	}
	return out
}

// Counts returns the number of nodes (with a Node object), pods, and of
// those pods the assumed ones.
func (c *Cache) Counts() (nodes, pods, assumed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order), len(c.pods), len(c.assumed)
}

func (c *Cache) addPod(pod *corev1.Pod) {
	n := c.nodes[pod.Spec.NodeName]
	if n == nil {
		n = &nodeItem{info: framework.NewNodeInfo()}
		c.nodes[pod.Spec.NodeName] = n
	}
	n.info.AddPodInfo(framework.NewPodInfo(pod))
	c.moveToHead(n)
}

func (c *Cache) removePod(pod *corev1.Pod) {
	n := c.nodes[pod.Spec.NodeName]
	if n == nil {
		return
	}
	_ = n.info.RemovePod(pod)
	if n.info.Node() == nil && len(n.info.Pods) == 0 {
		c.unlink(n)
		delete(c.nodes, pod.Spec.NodeName)
		return
	}
	c.moveToHead(n)
}

// AddNode records a node (or replaces its object).
func (c *Cache) AddNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setNode(nil, node)
}

// UpdateNode replaces a node's object.
func (c *Cache) UpdateNode(old, node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setNode(old, node)
}

func (c *Cache) setNode(old, node *corev1.Node) {
	n := c.nodes[node.Name]
	if n == nil {
		n = &nodeItem{info: framework.NewNodeInfo()}
		c.nodes[node.Name] = n
	}
	if prev := n.info.Node(); prev != nil {
		c.removeImages(prev)
	} else {
		c.order = append(c.order, node.Name)
	}
	n.info.SetNode(node)
	c.addImages(node)
	c.moveToHead(n)
}

// RemoveNode forgets a node. Its pods stay accounted until the informer
// removes them, but the node is no longer offered to the cycle.
func (c *Cache) RemoveNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node.Name]
	if n == nil || n.info.Node() == nil {
		return
	}
	c.removeImages(n.info.Node())
	n.info.RemoveNode()
	for i, name := range c.order {
		if name == node.Name {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	if len(n.info.Pods) == 0 {
		c.unlink(n)
		delete(c.nodes, node.Name)
		return
	}
	c.moveToHead(n)
}

func (c *Cache) addImages(node *corev1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			s := c.images[name]
			if s == nil {
				s = &imageState{size: img.SizeBytes, nodes: map[string]struct{}{}}
				c.images[name] = s
			}
			s.nodes[node.Name] = struct{}{}
		}
	}
}

func (c *Cache) removeImages(node *corev1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if s := c.images[name]; s != nil {
				delete(s.nodes, node.Name)
				if len(s.nodes) == 0 {
					delete(c.images, name)
				}
			}
		}
	}
}

func (c *Cache) imageSummaries(node *corev1.Node) map[string]*framework.ImageStateSummary {
	if len(node.Status.Images) == 0 {
		return nil
	}
	out := make(map[string]*framework.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if s := c.images[name]; s != nil {
				out[name] = &framework.ImageStateSummary{Size: s.size, NumNodes: len(s.nodes)}
			}
		}
	}
	return out
}

func (c *Cache) moveToHead(n *nodeItem) {
	if c.head == n {
		return
	}
	c.unlink(n)
	n.next = c.head
	if c.head != nil {
		c.head.prev = n
	}
	c.head = n
}

func (c *Cache) unlink(n *nodeItem) {
	if n.prev != nil {
		n.prev.next = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	}
	if c.head == n {
		c.head = n.next
	}
	n.prev, n.next = nil, nil
}
