package kubelet

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// nodeState is what the kubelet knows of its Node and Lease: the objects
// it last wrote, so renewals are one write without a read.
type nodeState struct {
	mu          sync.Mutex
	node        *corev1.Node
	lease       *coordinationv1.Lease
	ready       bool   // the runtime answered its last check
	notReadyWhy string // why not
	runtimeVer  string // "containerd://2.4.2"
	lastWrite   time.Time
}

// checkRuntime asks the runtime for its version and status; Ready follows
// the answer.
func (k *Kubelet) checkRuntime(ctx context.Context) (changed bool) {
	ready, why := true, ""
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := k.runtime.Version(cctx)
	if err == nil {
		var st *runtimeapi.RuntimeStatus
		st, err = k.runtime.Status(cctx)
		if err == nil {
			for _, c := range st.GetConditions() {
				if (c.Type == runtimeapi.RuntimeReady || c.Type == runtimeapi.NetworkReady) && !c.Status {
					ready, why = false, fmt.Sprintf("container runtime %s is not ready: %s %s", c.Type, c.Reason, c.Message)
				}
			}
		}
	}
	if err != nil {
		ready, why = false, "container runtime is down: "+err.Error()
	}
	k.node.mu.Lock()
	defer k.node.mu.Unlock()
	if v != nil {
		name := v.RuntimeName
		k.runtimeName.Store(&name)
		k.node.runtimeVer = v.RuntimeName + "://" + v.RuntimeVersion
	}
	changed = ready != k.node.ready || why != k.node.notReadyWhy
	k.node.ready, k.node.notReadyWhy = ready, why
	return changed
}

// buildNode is the Node this kubelet registers.
func (k *Kubelet) buildNode() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   k.cfg.NodeName,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: goruntime.GOARCH,
	}
	for key, v := range k.cfg.Labels {
		labels[key] = v
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: k.cfg.Taints},
	}
	if k.cfg.PodCIDR.IsValid() {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = k.cfg.PodCIDR.String(), []string{k.cfg.PodCIDR.String()}
	}
	k.fillStatus(&n.Status)
	return n
}

// fillStatus sets what the kubelet reports about its node: capacity,
// addresses, nodeInfo and the conditions, with heartbeats now.
func (k *Kubelet) fillStatus(st *corev1.NodeStatus) {
	st.Capacity, st.Allocatable = k.resources(st.Capacity, st.Allocatable)
	st.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: k.cfg.NodeName}}
	if k.cfg.NodeIP != "" {
		st.Addresses = append([]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.cfg.NodeIP}}, st.Addresses...)
	}
	st.DaemonEndpoints.KubeletEndpoint.Port = k.cfg.ServerPort
	st.NodeInfo = k.nodeInfo()
	now := metav1.NewTime(k.clock.Now())
	k.node.mu.Lock()
	ready, why := k.node.ready, k.node.notReadyWhy
	k.node.mu.Unlock()
	readyCond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status"}
	if !ready {
		readyCond.Status, readyCond.Reason, readyCond.Message = corev1.ConditionFalse, "KubeletNotReady", why
	}
	want := []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		readyCond,
	}
	for i := range want {
		want[i].LastHeartbeatTime = now
		want[i].LastTransitionTime = now
		for _, o := range st.Conditions {
			if o.Type == want[i].Type && o.Status == want[i].Status {
				want[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	st.Conditions = want
}

// resources are the node's capacity and allocatable after this kubelet's
// report, given what the Node holds now. The kubelet owns the entries of
// its configured capacity (cpu, memory, pods, ...) and sets them; an entry
// it does not own — an extended resource an operator or a device manager
// patched into capacity, as every SchedulerPreemption conformance spec
// does — is kept, and allocatable follows capacity for it, as upstream's
// MachineInfo setter (kstep reserves nothing for the system). An extended
// resource gone from capacity leaves allocatable too.
func (k *Kubelet) resources(capacity, allocatable corev1.ResourceList) (corev1.ResourceList, corev1.ResourceList) {
	outCap := k.cfg.Capacity.DeepCopy()
	for name, q := range capacity {
		if _, owned := outCap[name]; !owned {
			outCap[name] = q.DeepCopy()
		}
	}
	outAlloc := make(corev1.ResourceList, len(outCap))
	for name, q := range allocatable {
		if _, owned := k.cfg.Capacity[name]; owned {
			continue
		}
		if _, inCap := outCap[name]; !inCap && isExtendedResource(name) {
			continue
		}
		outAlloc[name] = q.DeepCopy()
	}
	for name, q := range outCap {
		if _, owned := k.cfg.Capacity[name]; owned {
			outAlloc[name] = q.DeepCopy()
			continue
		}
		if _, set := outAlloc[name]; !set {
			outAlloc[name] = q.DeepCopy()
		}
	}
	return outCap, outAlloc
}

// isExtendedResource: a resource name outside the kubernetes.io domain
// (upstream's IsExtendedResourceName without its validity check: a name in
// a Node's status passed validation already).
func isExtendedResource(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) &&
		!strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

func (k *Kubelet) nodeInfo() corev1.NodeSystemInfo {
	k.node.mu.Lock()
	rv := k.node.runtimeVer
	k.node.mu.Unlock()
	info := corev1.NodeSystemInfo{KubeletVersion: k.cfg.Version, ContainerRuntimeVersion: rv,
		OperatingSystem: "linux", Architecture: goruntime.GOARCH}
	if k.cfg.Hollow {
		info.MachineID, info.SystemUUID, info.BootID = k.cfg.NodeName, k.cfg.NodeName, k.cfg.NodeName
		info.KernelVersion, info.OSImage = "hollow", "kstep hollow node"
		return info
	}
	info.MachineID = readTrim("/etc/machine-id")
	info.SystemUUID = readTrim("/sys/class/dmi/id/product_uuid")
	info.BootID = readTrim("/proc/sys/kernel/random/boot_id")
	info.KernelVersion = readTrim("/proc/sys/kernel/osrelease")
	info.OSImage = osImage()
	return info
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func osImage() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "Linux"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

// register creates the Node, or takes over an existing one (a restarted
// kubelet, or a node re-registering): its labels and taints are merged,
// its status replaced. It retries until it succeeds or ctx ends.
func (k *Kubelet) register(ctx context.Context) error {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	for {
		err := k.registerOnce(ctx)
		if err == nil {
			return nil
		}
		k.log.Warn("registering node", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-k.clock.After(backoff.Step()):
		}
	}
}

func (k *Kubelet) registerOnce(ctx context.Context) error {
	nodes := k.client.CoreV1().Nodes()
	want := k.buildNode()
	created, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		// Create ignores status for a resource with a status subresource
		// in Kubernetes; write it explicitly.
		created.Status = want.Status
		if created, err = nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", k.cfg.NodeName, err)
		}
		k.setNode(created)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", k.cfg.NodeName, err)
	}
	cur, err := nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", k.cfg.NodeName, err)
	}
	upd := cur.DeepCopy()
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	// An existing Node keeps its taints: registration taints apply when the
	// kubelet creates its Node, as upstream's, and NodeRestriction refuses
	// a node changing them later (an admin may have removed one on
	// purpose). Labels and the pod CIDR are reconciled; a label the node
	// may not set is refused by NodeRestriction, said, and the kubelet goes
	// on with its status rather than retry registration forever.
	for key, v := range want.Labels {
		upd.Labels[key] = v
	}
	if upd.Spec.PodCIDR == "" {
		upd.Spec.PodCIDR, upd.Spec.PodCIDRs = want.Spec.PodCIDR, want.Spec.PodCIDRs
	}
	if !equalStringMaps(upd.Labels, cur.Labels) || upd.Spec.PodCIDR != cur.Spec.PodCIDR {
		switch u, err := nodes.Update(ctx, upd, metav1.UpdateOptions{}); {
		case apierrors.IsForbidden(err):
			k.log.Warn("node labels not reconciled", "node", k.cfg.NodeName, "err", err)
			upd = cur.DeepCopy()
		case err != nil:
			return fmt.Errorf("updating node %s: %w", k.cfg.NodeName, err)
		default:
			upd = u
		}
	}
	k.fillStatus(&upd.Status)
	upd, err = nodes.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("node %s status: %w", k.cfg.NodeName, err)
	}
	k.setNode(upd)
	return nil
}

func (k *Kubelet) setNode(n *corev1.Node) {
	k.node.mu.Lock()
	k.node.node, k.node.lastWrite = n, k.clock.Now()
	k.node.mu.Unlock()
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// runNodeStatus checks the runtime every second and writes the node's
// status every StatusUpdateFrequency, and at once when readiness changes.
func (k *Kubelet) runNodeStatus(ctx context.Context) {
	check := min(time.Second, k.cfg.StatusUpdateFrequency)
	if !k.waitPhase(ctx, check) {
		return
	}
	t := k.clock.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		changed := k.checkRuntime(ctx)
		k.node.mu.Lock()
		due := k.clock.Since(k.node.lastWrite) >= k.cfg.StatusUpdateFrequency
		k.node.mu.Unlock()
		if changed || due {
			if err := k.writeNodeStatus(ctx); err != nil && ctx.Err() == nil {
				k.log.Warn("node status", "err", err)
			}
		}
	}
}

// writeNodeStatus writes the status onto the node last written; on a
// conflict (the node lifecycle controller marked it Unknown) it reads the
// node and tries once more; a deleted node is registered again.
func (k *Kubelet) writeNodeStatus(ctx context.Context) error {
	k.node.mu.Lock()
	base := k.node.node
	k.node.mu.Unlock()
	nodes := k.client.CoreV1().Nodes()
	for attempt := 0; attempt < 2; attempt++ {
		n := base.DeepCopy()
		k.fillStatus(&n.Status)
		out, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err == nil {
			k.setNode(out)
			return nil
		}
		switch {
		case apierrors.IsNotFound(err):
			return k.registerOnce(ctx)
		case apierrors.IsConflict(err):
			if base, err = nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{}); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return fmt.Errorf("node %s status: conflict twice", k.cfg.NodeName)
}

// runLease renews the node's Lease in kube-node-lease every
// LeaseRenewInterval: the heartbeat the node lifecycle controller watches.
func (k *Kubelet) runLease(ctx context.Context) {
	if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
		k.log.Warn("lease renewal", "err", err)
	}
	if !k.waitPhase(ctx, k.cfg.LeaseRenewInterval) {
		return
	}
	t := k.clock.NewTicker(k.cfg.LeaseRenewInterval)
	defer t.Stop()
	for {
		if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("lease renewal", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

func (k *Kubelet) renewLease(ctx context.Context) error {
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	k.node.mu.Lock()
	l, node := k.node.lease, k.node.node
	k.node.mu.Unlock()
	now := metav1.NewMicroTime(k.clock.Now())
	if l == nil {
		cur, err := leases.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			nl := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(k.cfg.NodeName),
					LeaseDurationSeconds: ptr.To(k.cfg.LeaseDuration), RenewTime: &now},
			}
			if node != nil && node.UID != "" {
				nl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
			}
			out, err := leases.Create(ctx, nl, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("creating lease: %w", err)
			}
			k.setLease(out)
			return nil
		case err != nil:
			return fmt.Errorf("reading lease: %w", err)
		}
		l = cur
	}
	upd := l.DeepCopy()
	upd.Spec.RenewTime = &now
	upd.Spec.HolderIdentity = ptr.To(k.cfg.NodeName)
	upd.Spec.LeaseDurationSeconds = ptr.To(k.cfg.LeaseDuration)
	out, err := leases.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		k.setLease(nil) // read it again next time
		return fmt.Errorf("renewing lease: %w", err)
	}
	leaseRenewals.Inc()
	k.setLease(out)
	return nil
}

func (k *Kubelet) setLease(l *coordinationv1.Lease) {
	k.node.mu.Lock()
	k.node.lease = l
	k.node.mu.Unlock()
}
