package queue

import (
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// nominator is the queue's framework.PodNominator: the pods preemption
// nominated, by node. It has its own lock: filters read it once per node
// and must not wait on the queue's. count lets the common case (nothing
// nominated) skip the lock altogether.
type nominator struct {
	mu     sync.RWMutex
	byNode map[string][]*framework.PodInfo
	node   map[types.UID]string
	count  atomic.Int64
}

func newNominator() *nominator {
	return &nominator{byNode: map[string][]*framework.PodInfo{}, node: map[types.UID]string{}}
}

var _ framework.PodNominator = &PriorityQueue{}

// AddNominatedPod implements framework.PodNominator.
func (q *PriorityQueue) AddNominatedPod(pi *framework.PodInfo, nodeName string) {
	q.nom.add(pi, nodeName)
}

// DeleteNominatedPodIfExists implements framework.PodNominator.
func (q *PriorityQueue) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	q.nom.delete(pod.UID)
}

// NominatedPodsForNode implements framework.PodNominator.
func (q *PriorityQueue) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	n := q.nom
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	pods := n.byNode[nodeName]
	if len(pods) == 0 {
		return nil
	}
	return append([]*framework.PodInfo(nil), pods...)
}

// NominatedNodeName is where the pod is nominated, "" when nowhere.
func (q *PriorityQueue) NominatedNodeName(pod *corev1.Pod) string {
	q.nom.mu.RLock()
	defer q.nom.mu.RUnlock()
	return q.nom.node[pod.UID]
}

func (n *nominator) add(pi *framework.PodInfo, nodeName string) {
	if nodeName == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pi.Pod.UID)
	n.node[pi.Pod.UID] = nodeName
	n.byNode[nodeName] = append(n.byNode[nodeName], pi)
	n.count.Add(1)
}

// observe follows a pod object the informer delivered: its
// status.nominatedNodeName nominates it; an object without one keeps the
// nomination made in memory (the status write may not have landed yet, as
// upstream's), with the newer object.
func (n *nominator) observe(pod *corev1.Pod) {
	if node := pod.Status.NominatedNodeName; node != "" {
		n.add(framework.NewPodInfo(pod), node)
		return
	}
	if n.count.Load() == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if node, ok := n.node[pod.UID]; ok {
		for i, p := range n.byNode[node] {
			if p.Pod.UID == pod.UID {
				n.byNode[node][i] = framework.NewPodInfo(pod)
			}
		}
	}
}

func (n *nominator) delete(uid types.UID) {
	if n.count.Load() == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(uid)
}

func (n *nominator) deleteLocked(uid types.UID) {
	node, ok := n.node[uid]
	if !ok {
		return
	}
	delete(n.node, uid)
	pods := n.byNode[node]
	for i, p := range pods {
		if p.Pod.UID == uid {
			pods = append(pods[:i], pods[i+1:]...)
			break
		}
	}
	if len(pods) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = pods
	}
	n.count.Add(-1)
}
