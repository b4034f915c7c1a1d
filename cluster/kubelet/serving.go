package kubelet

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
)

// What the kubelet's server (package server) reads of a kubelet: its
// client, runtime, pods and containers. Reads only; the server never
// changes what the kubelet manages.

// The runtime labels on this kubelet's sandboxes and containers, for the
// server's stats: every object carries NodeLabel=<node>, containers
// PodUIDLabel and ContainerNameLabel.
const (
	NodeLabel          = labelNode
	PodUIDLabel        = labelPodUID
	PodNameLabel       = labelPodName
	PodNamespaceLabel  = labelPodNamespace
	ContainerNameLabel = labelContainerName
)

// Client is the node's own apiserver client (the server's
// SubjectAccessReviews go through it).
func (k *Kubelet) Client() kubernetes.Interface { return k.client }

// Runtime is the node's CRI client.
func (k *Kubelet) Runtime() *cri.Client { return k.runtime }

// Hollow reports whether the node is simulated (no host to read stats of).
func (k *Kubelet) Hollow() bool { return k.cfg.Hollow }

// StartTime is when this kubelet was built.
func (k *Kubelet) StartTime() time.Time { return k.started }

// ServerPort is the port published in the node's daemonEndpoints.
func (k *Kubelet) ServerPort() int32 { return k.cfg.ServerPort }

// OpenLog opens a container log file through Config.LogReader.
func (k *Kubelet) OpenLog(path string) (io.ReadCloser, error) { return k.cfg.LogReader(path) }

// RuntimeSelector selects this node's sandboxes and containers in its
// runtime.
func (k *Kubelet) RuntimeSelector() map[string]string {
	return map[string]string{labelNode: k.cfg.NodeName}
}

// Pod is the informer's pod namespace/name bound to this node; false when
// there is none or the informer has not synced yet.
func (k *Kubelet) Pod(namespace, name string) (*corev1.Pod, bool) {
	if !k.synced.Load() {
		return nil, false
	}
	p, err := k.pods.Pods(namespace).Get(name)
	if err != nil {
		return nil, false
	}
	return p, true
}

// Pods lists the informer's pods bound to this node (none before the
// informer has synced).
func (k *Kubelet) Pods() []*corev1.Pod {
	if !k.synced.Load() {
		return nil
	}
	ps, _ := k.pods.List(labels.Everything())
	return ps
}

// ContainerInfo is one of a pod's containers as the runtime reports it.
type ContainerInfo struct {
	ID         string
	Name       string
	Attempt    uint32
	State      runtimeapi.ContainerState
	StartedAt  time.Time // zero when it never started
	FinishedAt time.Time // zero while it runs
	LogPath    string    // absolute
}

// Running reports whether the container runs now.
func (c *ContainerInfo) Running() bool { return c.State == runtimeapi.ContainerState_CONTAINER_RUNNING }

// ErrNoContainer is wrapped by Container's errors when the runtime has no
// such container (yet, or any more).
var ErrNoContainer = fmt.Errorf("container not found")

// Container finds pod's container name in the runtime: its newest
// instance, or with previous the one before it (the instance a restart
// replaced).
func (k *Kubelet) Container(ctx context.Context, pod *corev1.Pod, name string, previous bool) (*ContainerInfo, error) {
	rt, err := k.readPod(ctx, pod.UID, &runtimeCache{})
	if err != nil {
		return nil, err
	}
	c := rt.latest(name)
	if c == nil {
		return nil, fmt.Errorf("%w: container %q in pod %q has not been created", ErrNoContainer, name, pod.Name)
	}
	if previous {
		if c = rt.previous(c); c == nil {
			return nil, fmt.Errorf("%w: previous terminated container %q in pod %q not found", ErrNoContainer, name, pod.Name)
		}
	}
	st, err := k.runtime.ContainerStatus(ctx, c.id)
	if err != nil {
		return nil, err
	}
	info := &ContainerInfo{ID: c.id, Name: c.name, Attempt: c.attempt, State: st.State, LogPath: st.LogPath}
	if st.StartedAt > 0 {
		info.StartedAt = time.Unix(0, st.StartedAt)
	}
	if st.FinishedAt > 0 {
		info.FinishedAt = time.Unix(0, st.FinishedAt)
	}
	if info.LogPath != "" && !filepath.IsAbs(info.LogPath) {
		info.LogPath = filepath.Join(k.podLogDir(pod), info.LogPath)
	}
	return info, nil
}

// Sandbox is the id of pod's ready sandbox.
func (k *Kubelet) Sandbox(ctx context.Context, pod *corev1.Pod) (string, error) {
	rt, err := k.readPod(ctx, pod.UID, &runtimeCache{})
	if err != nil {
		return "", err
	}
	s := rt.readySandbox()
	if s == nil {
		return "", fmt.Errorf("%w: pod %q has no ready sandbox", ErrNoContainer, pod.Name)
	}
	return s.id, nil
}
