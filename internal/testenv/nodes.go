package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// Nodes stands in for kubelets in tests of the control plane, the way kwok
// does: it registers Node objects, renews their Leases, marks pods bound to
// them Running and Ready (with a pod IP), and finishes the graceful deletion
// of their pods. It talks only to the apiserver, like a kubelet.
type Nodes struct {
	cs     kubernetes.Interface
	mu     sync.Mutex
	paused map[string]bool // nodes whose kubelet "died": no renewals, no pod work
	names  []string
	ipSeq  int
	cancel context.CancelFunc
	done   chan struct{}
}

// NodeSpec describes one stand-in node.
type NodeSpec struct {
	Name   string
	CPU    string // "4"
	Memory string // "8Gi"
	Pods   int64
	Labels map[string]string
	Taints []corev1.Taint
}

// StartNodes registers the nodes and runs their stand-in kubelets until
// test cleanup.
func StartNodes(t testing.TB, cs kubernetes.Interface, specs ...NodeSpec) *Nodes {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &Nodes{cs: cs, paused: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	for _, s := range specs {
		if err := n.register(ctx, s); err != nil {
			t.Fatalf("register node %s: %v", s.Name, err)
		}
		n.names = append(n.names, s.Name)
	}
	go n.run(ctx)
	t.Cleanup(n.Stop)
	return n
}

// Stop ends every stand-in kubelet.
func (n *Nodes) Stop() {
	n.cancel()
	<-n.done
}

// Pause stops one node's kubelet: its Lease goes stale and its pods are left
// alone, as when the node dies.
func (n *Nodes) Pause(name string) {
	n.mu.Lock()
	n.paused[name] = true
	n.mu.Unlock()
}

// Resume starts a paused node's kubelet again: it renews the Lease and, as
// a kubelet's next status update would, reports Ready=True.
func (n *Nodes) Resume(ctx context.Context, name string) error {
	n.mu.Lock()
	delete(n.paused, name)
	n.mu.Unlock()
	n.renew(ctx)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := n.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}
		found := false
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i], found = cond, true
			}
		}
		if !found {
			node.Status.Conditions = append(node.Status.Conditions, cond)
		}
		_, err = n.cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

func (n *Nodes) isPaused(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused[name]
}

func (n *Nodes) owns(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.names {
		if x == name {
			return true
		}
	}
	return false
}

// Add registers another node while running.
func (n *Nodes) Add(ctx context.Context, s NodeSpec) error {
	if err := n.register(ctx, s); err != nil {
		return err
	}
	n.mu.Lock()
	n.names = append(n.names, s.Name)
	n.mu.Unlock()
	return nil
}

func (n *Nodes) register(ctx context.Context, s NodeSpec) error {
	if s.CPU == "" {
		s.CPU = "4"
	}
	if s.Memory == "" {
		s.Memory = "8Gi"
	}
	if s.Pods == 0 {
		s.Pods = 110
	}
	labels := map[string]string{"kubernetes.io/hostname": s.Name, "kubernetes.io/os": "linux"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(s.CPU),
		corev1.ResourceMemory: resource.MustParse(s.Memory),
		corev1.ResourcePods:   *resource.NewQuantity(s.Pods, resource.DecimalSI),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: s.Taints},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}},
		},
	}
	if _, err := n.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return err
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(s.Name), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))},
	}
	_, err := n.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{})
	return err
}

func (n *Nodes) run(ctx context.Context) {
	defer close(n.done)
	f := informers.NewSharedInformerFactory(n.cs, 0)
	pods := f.Core().V1().Pods().Informer()
	work := make(chan *corev1.Pod, 4096)
	enqueue := func(o any) {
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" && n.owns(p.Spec.NodeName) {
			select {
			case work <- p:
			case <-ctx.Done():
			}
		}
	}
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	f.Start(ctx.Done())
	defer f.Shutdown()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			n.renew(ctx)
		case p := <-work:
			if !n.isPaused(p.Spec.NodeName) {
				n.sync(ctx, p)
			}
		}
	}
}

func (n *Nodes) renew(ctx context.Context) {
	n.mu.Lock()
	names := append([]string(nil), n.names...)
	n.mu.Unlock()
	for _, name := range names {
		if n.isPaused(name) {
			continue
		}
		now := metav1.NewMicroTime(time.Now())
		patch := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, now.Format(metav1.RFC3339Micro))
		_, _ = n.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
}

// sync does what a kubelet would: run the pod (instantly), or finish its
// deletion.
func (n *Nodes) sync(ctx context.Context, p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		err := n.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return
		}
		return
	}
	if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
		return
	}
	n.mu.Lock()
	n.ipSeq++
	ip := fmt.Sprintf("10.244.%d.%d", n.ipSeq/250, n.ipSeq%250+1)
	n.mu.Unlock()
	now := metav1.Now()
	st := p.DeepCopy()
	st.Status.Phase = corev1.PodRunning
	st.Status.PodIP, st.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	st.Status.HostIP = "192.0.2.1"
	st.Status.StartTime = &now
	st.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	st.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		st.Status.ContainerStatuses = append(st.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	_, _ = n.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, st, metav1.UpdateOptions{})
}
