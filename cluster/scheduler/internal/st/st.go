package st

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pod in namespace default with one container and the
// default scheduler.
func MakePod() *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: corev1.PodSpec{
			SchedulerName: corev1.DefaultSchedulerName,
			Containers:    []corev1.Container{{Name: "c", Image: "pause"}},
		},
	}}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *corev1.Pod { return &p.Pod }

// Name sets the name, and the UID to "uid-<name>" unless set.
func (p *PodWrapper) Name(n string) *PodWrapper {
	p.Pod.Name = n
	if p.Pod.UID == "" {
		p.Pod.UID = types.UID("uid-" + n)
	}
	return p
}

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper { p.Pod.Namespace = ns; return p }

// UID sets the UID.
func (p *PodWrapper) UID(u string) *PodWrapper { p.Pod.UID = types.UID(u); return p }

// Node binds the pod to a node.
func (p *PodWrapper) Node(n string) *PodWrapper { p.Spec.NodeName = n; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.Spec.Priority = &v; return p }

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Req adds requests to the first container: Req("cpu", "1", "memory", "1Gi").
func (p *PodWrapper) Req(kv ...string) *PodWrapper {
	c := &p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Resources.Requests[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return p
}

// Container adds a container with requests.
func (p *PodWrapper) Container(image string, kv ...string) *PodWrapper {
	c := corev1.Container{Name: "c" + string(rune('a'+len(p.Spec.Containers))), Image: image}
	if len(kv) > 0 {
		c.Resources.Requests = corev1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Resources.Requests[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// InitReq adds an init container with requests; sidecar makes it
// restartPolicy Always.
func (p *PodWrapper) InitReq(sidecar bool, kv ...string) *PodWrapper {
	c := corev1.Container{Name: "init" + string(rune('a'+len(p.Spec.InitContainers))), Image: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Resources.Requests[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	if sidecar {
		always := corev1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// Image sets the first container's image.
func (p *PodWrapper) Image(img string) *PodWrapper { p.Spec.Containers[0].Image = img; return p }

// NodeSelector sets spec.nodeSelector.
func (p *PodWrapper) NodeSelector(m map[string]string) *PodWrapper { p.Spec.NodeSelector = m; return p }

// Toleration adds a toleration.
func (p *PodWrapper) Toleration(key, value string, op corev1.TolerationOperator, effect corev1.TaintEffect) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Value: value, Operator: op, Effect: effect})
	return p
}

func (p *PodWrapper) affinity() *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

// RequiredNodeAffinity adds a required node affinity term.
func (p *PodWrapper) RequiredNodeAffinity(exprs ...corev1.NodeSelectorRequirement) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	ns := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: exprs})
	return p
}

// PreferredNodeAffinity adds a preferred node affinity term.
func (p *PodWrapper) PreferredNodeAffinity(weight int32, exprs ...corev1.NodeSelectorRequirement) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: exprs}})
	return p
}

// PodAntiAffinity adds a required anti-affinity term against pods with
// label key=value over topologyKey.
func (p *PodWrapper) PodAntiAffinity(key, value, topologyKey string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}, TopologyKey: topologyKey})
	return p
}

// PodAffinity adds a required affinity term towards pods with label
// key=value over topologyKey.
func (p *PodWrapper) PodAffinity(key, value, topologyKey string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}, TopologyKey: topologyKey})
	return p
}

// NodeWrapper builds a node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a node with 4 cpu, 8Gi and 110 pods allocatable.
func MakeNode() *NodeWrapper {
	w := &NodeWrapper{}
	return w.Capacity("cpu", "4", "memory", "8Gi", "pods", "110")
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *corev1.Node { return &n.Node }

// Name sets the name and the kubernetes.io/hostname label.
func (n *NodeWrapper) Name(name string) *NodeWrapper {
	n.Node.Name = name
	n.Node.UID = types.UID("uid-" + name)
	return n.Label(corev1.LabelHostname, name)
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// Capacity sets capacity and allocatable: Capacity("cpu", "2").
func (n *NodeWrapper) Capacity(kv ...string) *NodeWrapper {
	if n.Status.Allocatable == nil {
		n.Status.Allocatable, n.Status.Capacity = corev1.ResourceList{}, corev1.ResourceList{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q := resource.MustParse(kv[i+1])
		n.Status.Allocatable[corev1.ResourceName(kv[i])] = q
		n.Status.Capacity[corev1.ResourceName(kv[i])] = q
	}
	return n
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable cordons the node.
func (n *NodeWrapper) Unschedulable() *NodeWrapper { n.Spec.Unschedulable = true; return n }

// Images adds images with their sizes.
func (n *NodeWrapper) Images(sizes map[string]int64) *NodeWrapper {
	for name, size := range sizes {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{name}, SizeBytes: size})
	}
	return n
}
