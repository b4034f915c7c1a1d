package kubelet

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The labels the kubelet puts on every sandbox and container it creates.
// They are how it finds its pods again after a restart (adoption) and how
// it recognises orphans; the first four are upstream's, so crictl shows
// kstep's pods as it shows Kubernetes'.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	// labelNode marks what this node's kubelet owns, so kubelets sharing a
	// runtime never touch each other's pods.
	labelNode = "kstep.dev/node"
)

// sandboxState is one sandbox of a pod as the runtime reports it.
type sandboxState struct {
	id        string
	attempt   uint32
	ready     bool
	createdAt int64
	ip        string
}

// containerState is one container of a pod as the runtime reports it.
type containerState struct {
	id, sandboxID, name string
	attempt             uint32
	state               runtimeapi.ContainerState
	createdAt           int64
	startedAt           int64
	finishedAt          int64
	exitCode            int32
	reason, message     string
	imageRef            string
}

func (c *containerState) running() bool {
	return c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
}

func (c *containerState) exited() bool {
	return c.state == runtimeapi.ContainerState_CONTAINER_EXITED || c.state == runtimeapi.ContainerState_CONTAINER_UNKNOWN
}

// podRuntime is everything the runtime runs for one pod UID: sandboxes
// newest first, containers newest attempt first.
type podRuntime struct {
	sandboxes  []*sandboxState
	containers []*containerState
}

// readySandbox is the newest ready sandbox, or nil.
func (r *podRuntime) readySandbox() *sandboxState {
	for _, s := range r.sandboxes {
		if s.ready {
			return s
		}
	}
	return nil
}

// latest is the newest container named name (in any sandbox), or nil.
func (r *podRuntime) latest(name string) *containerState {
	for _, c := range r.containers {
		if c.name == name {
			return c
		}
	}
	return nil
}

// previous is the newest container named name older than c, or nil.
func (r *podRuntime) previous(c *containerState) *containerState {
	seen := false
	for _, x := range r.containers {
		if x == c {
			seen = true
			continue
		}
		if seen && x.name == c.name {
			return x
		}
	}
	return nil
}

// runningIn lists the running containers of a sandbox.
func (r *podRuntime) runningIn(sandboxID string) []*containerState {
	var out []*containerState
	for _, c := range r.containers {
		if c.sandboxID == sandboxID && c.running() {
			out = append(out, c)
		}
	}
	return out
}

func (r *podRuntime) empty() bool { return len(r.sandboxes) == 0 && len(r.containers) == 0 }

// runtimeCache keeps what never changes for a container in a given state
// (its ContainerStatus) and a sandbox's IP, so a sync reads the runtime with
// two list calls and a status call per container that changed.
type runtimeCache struct {
	containers map[string]*containerState // by id; valid while the state matches
	sandboxIPs map[string]string
}

// readPod reads one pod's sandboxes and containers from the runtime.
func (k *Kubelet) readPod(ctx context.Context, uid types.UID, rc *runtimeCache) (*podRuntime, error) {
	sel := map[string]string{labelPodUID: string(uid), labelNode: k.cfg.NodeName}
	sbs, err := k.runtime.ListPodSandbox(ctx, sel)
	if err != nil {
		return nil, err
	}
	cs, err := k.runtime.ListContainers(ctx, sel)
	if err != nil {
		return nil, err
	}
	if rc.containers == nil {
		rc.containers, rc.sandboxIPs = map[string]*containerState{}, map[string]string{}
	}
	out := &podRuntime{}
	seenSB := make(map[string]bool, len(sbs))
	for _, s := range sbs {
		st := &sandboxState{id: s.Id, attempt: s.GetMetadata().GetAttempt(), createdAt: s.CreatedAt,
			ready: s.State == runtimeapi.PodSandboxState_SANDBOX_READY}
		seenSB[s.Id] = true
		if st.ready {
			ip, ok := rc.sandboxIPs[s.Id]
			if !ok {
				ss, err := k.runtime.PodSandboxStatus(ctx, s.Id)
				if err != nil {
					return nil, err
				}
				ip = ss.GetNetwork().GetIp()
				rc.sandboxIPs[s.Id] = ip
			}
			st.ip = ip
		}
		out.sandboxes = append(out.sandboxes, st)
	}
	seenC := make(map[string]bool, len(cs))
	for _, c := range cs {
		seenC[c.Id] = true
		if cached, ok := rc.containers[c.Id]; ok && cached.state == c.State {
			out.containers = append(out.containers, cached)
			continue
		}
		s, err := k.runtime.ContainerStatus(ctx, c.Id)
		if err != nil {
			return nil, err
		}
		st := &containerState{id: c.Id, sandboxID: c.PodSandboxId, name: c.GetMetadata().GetName(),
			attempt: c.GetMetadata().GetAttempt(), state: s.State, createdAt: s.CreatedAt, startedAt: s.StartedAt,
			finishedAt: s.FinishedAt, exitCode: s.ExitCode, reason: s.Reason, message: s.Message, imageRef: s.ImageRef}
		rc.containers[c.Id] = st
		out.containers = append(out.containers, st)
	}
	for id := range rc.containers {
		if !seenC[id] {
			delete(rc.containers, id)
		}
	}
	for id := range rc.sandboxIPs {
		if !seenSB[id] {
			delete(rc.sandboxIPs, id)
		}
	}
	slices.SortFunc(out.sandboxes, func(a, b *sandboxState) int {
		if a.attempt != b.attempt {
			return int(b.attempt) - int(a.attempt)
		}
		return cmpInt64(b.createdAt, a.createdAt)
	})
	slices.SortFunc(out.containers, func(a, b *containerState) int {
		if a.attempt != b.attempt {
			return int(b.attempt) - int(a.attempt)
		}
		return cmpInt64(b.createdAt, a.createdAt)
	})
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// podLabels are the labels of a pod's sandbox.
func (k *Kubelet) podLabels(pod *corev1.Pod) map[string]string {
	l := make(map[string]string, len(pod.Labels)+4)
	for key, v := range pod.Labels {
		l[key] = v
	}
	l[labelPodName], l[labelPodNamespace], l[labelPodUID], l[labelNode] = pod.Name, pod.Namespace, string(pod.UID), k.cfg.NodeName
	return l
}

// containerLabels are the labels of a pod's container.
func (k *Kubelet) containerLabels(pod *corev1.Pod, name string) map[string]string {
	return map[string]string{labelPodName: pod.Name, labelPodNamespace: pod.Namespace, labelPodUID: string(pod.UID),
		labelContainerName: name, labelNode: k.cfg.NodeName}
}
