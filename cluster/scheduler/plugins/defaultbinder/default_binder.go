package defaultbinder

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "DefaultBinder"

// DefaultBinder binds through pods/binding.
type DefaultBinder struct {
	h framework.Handle
}

var _ framework.BindPlugin = &DefaultBinder{}

// New builds the plugin.
func New(h framework.Handle) (framework.Plugin, error) { return &DefaultBinder{h: h}, nil }

// Name implements framework.Plugin.
func (*DefaultBinder) Name() string { return Name }

// Bind implements framework.BindPlugin. The binding names the pod's UID, so
// a pod deleted and recreated under the same name is never bound by a
// decision made for its predecessor.
func (b *DefaultBinder) Bind(ctx context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	cs := b.h.ClientSet()
	if cs == nil {
		return framework.AsStatus(fmt.Errorf("bind %s/%s: no client", pod.Namespace, pod.Name))
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := cs.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}
