package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// Defaults counted for a container without a request when scoring (not
// when filtering), as upstream: a pod that asks for nothing still uses
// something, and spreading should see it.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is an amount of the resources the scheduler accounts for.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is a node's pod capacity; unused in requests.
	AllowedPodNumber int64
	// ScalarResources are extended resources and hugepages; nil when none,
	// so the common case allocates nothing.
	ScalarResources map[corev1.ResourceName]int64
}

// NewResource reads a ResourceList.
func NewResource(rl corev1.ResourceList) Resource {
	var r Resource
	r.AddList(rl)
	return r
}

// AddList adds the quantities of rl.
func (r *Resource) AddList(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case corev1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			r.AddScalar(name, q.Value())
		}
	}
}

// AddScalar adds v of an extended resource.
func (r *Resource) AddScalar(name corev1.ResourceName, v int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[corev1.ResourceName]int64{}
	}
	r.ScalarResources[name] += v
}

// Add adds o to r.
func (r *Resource) Add(o *Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		r.AddScalar(k, v)
	}
}

// Sub subtracts o from r.
func (r *Resource) Sub(o *Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		r.AddScalar(k, -v)
	}
}

// Max raises each field of r to o's where o's is larger.
func (r *Resource) Max(o *Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	for k, v := range o.ScalarResources {
		if v > r.ScalarResources[k] {
			if r.ScalarResources == nil {
				r.ScalarResources = map[corev1.ResourceName]int64{}
			}
			r.ScalarResources[k] = v
		}
	}
}

// IsZero reports whether r asks for nothing.
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v != 0 {
			return false
		}
	}
	return true
}

// Clone returns a deep copy.
func (r Resource) Clone() Resource {
	if r.ScalarResources != nil {
		m := make(map[corev1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			m[k] = v
		}
		r.ScalarResources = m
	}
	return r
}

// PodRequests is what a pod reserves on its node, upstream's rule:
//
//	max( sum(containers) + sum(sidecars),
//	     max over init containers i of (request(i) + sidecars started before i) )
//	+ overhead
//
// where sidecars are init containers with restartPolicy Always: they keep
// running beside the later init containers and the app containers.
func PodRequests(pod *corev1.Pod) Resource {
	return podRequests(pod, false)
}

// PodRequestsNonZero is PodRequests with DefaultMilliCPURequest and
// DefaultMemoryRequest standing in for a container's missing cpu or
// memory request; only cpu and memory are set. Used by scoring.
func PodRequestsNonZero(pod *corev1.Pod) Resource {
	return podRequests(pod, true)
}

func containerRequest(c *corev1.Container, nonZero bool) Resource {
	if !nonZero {
		return NewResource(c.Resources.Requests)
	}
	var r Resource
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.MilliCPU = q.MilliValue()
	} else {
		r.MilliCPU = DefaultMilliCPURequest
	}
	if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		r.Memory = q.Value()
	} else {
		r.Memory = DefaultMemoryRequest
	}
	return r
}

func podRequests(pod *corev1.Pod, nonZero bool) Resource {
	var reqs Resource
	for i := range pod.Spec.Containers {
		c := containerRequest(&pod.Spec.Containers[i], nonZero)
		reqs.Add(&c)
	}
	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		c := containerRequest(ic, nonZero)
		if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(&c)
			c = sidecars.Clone()
		} else {
			c.Add(&sidecars)
		}
		initMax.Max(&c)
	}
	reqs.Add(&sidecars)
	reqs.Max(&initMax)
	if pod.Spec.Overhead != nil {
		o := NewResource(pod.Spec.Overhead)
		if nonZero {
			o = Resource{MilliCPU: o.MilliCPU, Memory: o.Memory}
		}
		reqs.Add(&o)
	}
	reqs.AllowedPodNumber = 0
	return reqs
}
