package imagelocality

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "ImageLocality"

// Upstream's thresholds: below 23 MiB an image is not worth moving a pod
// for; above 1000 MiB per container the score is full.
const (
	mb                    int64 = 1024 * 1024
	minThreshold                = 23 * mb
	maxContainerThreshold       = 1000 * mb
)

// ImageLocality scores nodes by the images they hold.
type ImageLocality struct {
	h framework.Handle
}

var _ framework.ScorePlugin = &ImageLocality{}

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &ImageLocality{h: h}, nil }

// Name implements framework.Plugin.
func (*ImageLocality) Name() string { return Name }

// Score implements framework.ScorePlugin.
func (il *ImageLocality) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	total := len(il.h.SnapshotLister().List())
	return Score(pod, ni, total), nil
}

// Score is upstream's formula: the sum over the pod's containers of
// size × (nodes with the image / all nodes), clamped to
// [23 MiB, 1000 MiB × containers] and mapped onto [0, 100].
func Score(pod *corev1.Pod, ni *framework.NodeInfo, totalNodes int) int64 {
	if totalNodes == 0 || len(ni.ImageStates) == 0 {
		return 0
	}
	var sum int64
	add := func(cs []corev1.Container) {
		for i := range cs {
			if s, ok := ni.ImageStates[NormalizedImageName(cs[i].Image)]; ok {
				sum += int64(float64(s.Size) * float64(s.NumNodes) / float64(totalNodes))
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	maxThreshold := maxContainerThreshold * int64(len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	sum = min(max(sum, minThreshold), maxThreshold)
	if maxThreshold <= minThreshold {
		return 0
	}
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// NormalizedImageName adds ":latest" to an image without a tag or digest,
// as upstream does before looking it up in node.status.images.
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		return name + ":latest"
	}
	return name
}
