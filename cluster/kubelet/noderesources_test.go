package kubelet

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An extended resource patched into a Node's capacity, as every
// SchedulerPreemption conformance spec does, survives the kubelet's status
// updates and appears in allocatable; an entry the kubelet owns (cpu) is
// set back to the kubelet's own figure.
func TestNodeStatusKeepsResourcesItDoesNotOwn(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "n1", nil, func(cfg *Config) { cfg.StatusUpdateFrequency = 200 * time.Millisecond })
	const fake corev1.ResourceName = "example.com/fakecpu"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": corev1.ResourceList{
		fake: resource.MustParse("1000"), corev1.ResourceCPU: resource.MustParse("100"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := c.Client.CoreV1().Nodes().Patch(ctx, "n1", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	// Two status writes after the patch: the kubelet has rewritten the
	// status from the patched Node at least once.
	w, err := c.Client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=n1", ResourceVersion: patched.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var node *corev1.Node
	for writes := 0; writes < 2; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if n, isNode := ev.Object.(*corev1.Node); isNode {
				node, writes = n, writes+1
			}
		case <-ctx.Done():
			t.Fatal("no two status writes within a minute")
		}
	}
	for _, list := range []struct {
		name string
		l    corev1.ResourceList
	}{{"capacity", node.Status.Capacity}, {"allocatable", node.Status.Allocatable}} {
		if q, ok := list.l[fake]; !ok || q.Cmp(resource.MustParse("1000")) != 0 {
			t.Errorf("%s[%s] = %v (present %v), want 1000 kept", list.name, fake, q.String(), ok)
		}
		if q := list.l[corev1.ResourceCPU]; q.Cmp(resource.MustParse("4")) != 0 {
			t.Errorf("%s[cpu] = %v, want the kubelet's 4", list.name, q.String())
		}
		if q := list.l[corev1.ResourcePods]; q.Cmp(resource.MustParse("110")) != 0 {
			t.Errorf("%s[pods] = %v, want 110", list.name, q.String())
		}
	}
}
