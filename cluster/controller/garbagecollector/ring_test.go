package garbagecollector

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Rings of ownerReferences against a real apiserver, after upstream's e2e
// "should not be blocked by dependency circle": every reference blocks its
// owner's deletion, one member is deleted in the foreground, and the ring
// must still come down.

// ringDeadline is generous: on two busy cores a ring of three takes a few
// hundred milliseconds (each pod's graceful deletion goes through the
// stand-in kubelet), so only a ring that never ends reaches it.
const ringDeadline = 30 * time.Second

// ring creates n running pods, owner-less, then closes the ring as
// upstream's e2e does, by strategic merge patch: pod i is owned by pod i-1
// and the first by the last (with n = 1, the pod owns itself). Every ring
// reference is a controller reference with blockOwnerDeletion. also adds
// owners outside the ring to the members of those indexes.
func ring(t *testing.T, c *testenv.ControllerCluster, ns string, n int, also map[int]metav1.OwnerReference) []*corev1.Pod {
	t.Helper()
	pods := runningPods(t, c, ns, "ring", n, nil)
	for i, p := range pods {
		owner := pods[(i+n-1)%n]
		refs := []metav1.OwnerReference{ownedBy(owner, "Pod")}
		if extra, ok := also[i]; ok {
			refs = append(refs, extra)
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("closing the ring at %s: %v", p.Name, err)
		}
		pods[i] = got
	}
	return pods
}

// remaining is the names of the pods still in ns.
func remaining(c *testenv.ControllerCluster, ns string) ([]string, error) {
	l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out, nil
}

// deleteRing deletes the named pod in the foreground and waits until only
// the pods in keep remain, returning how long that took.
func deleteRing(t *testing.T, c *testenv.ControllerCluster, ns, name string, keep int) time.Duration {
	t.Helper()
	start := time.Now()
	if err := c.Client.CoreV1().Pods(ns).Delete(c.Ctx, name, deleteWith(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ringDeadline, fmt.Sprintf("%d pods left", keep), func() (bool, error) {
		left, err := remaining(c, ns)
		return err == nil && len(left) == keep, fmt.Errorf("pods left: %v %v", left, err)
	})
	return time.Since(start)
}

func TestRingForeground(t *testing.T) {
	c := testenv.StartControllerCluster(t, "gc", New)
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"three pods", 3},
		{"two pods", 2},
		{"a pod owning itself", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := c.Namespace(t)
			pods := ring(t, c, ns, tc.n, nil)
			took := deleteRing(t, c, ns, pods[0].Name, 0)
			t.Logf("ring of %d deleted in the foreground: all gone in %v", tc.n, took)
		})
	}
}

// A ring member with a solid owner outside the ring is kept, as upstream
// keeps it: its reference to the owner waiting for it is cut (that owner
// then no longer waits for it) and it stays with its solid owner; the
// members it owns stay too, owned by it. The foreground owner still
// finishes.
func TestRingWithSolidOwner(t *testing.T) {
	c := testenv.StartControllerCluster(t, "gc", New)
	for _, tc := range []struct {
		name string
		held int // the member with an owner outside the ring
		gone int // how many members, from ring-0 on, the foreground deletion of ring-0 takes
	}{
		// ring-1's owner is ring-0: cut from it at once; ring-1 and ring-2 stay.
		{"owned by the deleted pod", 1, 1},
		// ring-2's owner is ring-1, deleted in the foreground first:
		// ring-2 is cut from it, ring-1 then ring-0 go.
		{"closing the ring", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := c.Namespace(t)
			cm, err := c.Client.CoreV1().ConfigMaps(ns).Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "outside"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			outside := ownedBy(cm, "ConfigMap")
			outside.Controller = nil // the ring reference is the controller
			pods := ring(t, c, ns, 3, map[int]metav1.OwnerReference{tc.held: outside})
			keep := len(pods) - tc.gone
			took := deleteRing(t, c, ns, pods[0].Name, keep)
			t.Logf("ring of 3 with %s held from outside: %d gone in %v", pods[tc.held].Name, tc.gone, took)

			held, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, pods[tc.held].Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("held member: %v", err)
			}
			if held.DeletionTimestamp != nil || len(held.OwnerReferences) != 1 || held.OwnerReferences[0].UID != cm.UID {
				t.Fatalf("held member: deletionTimestamp %v, owners %+v; want alive with only the ConfigMap", held.DeletionTimestamp, held.OwnerReferences)
			}
			for _, p := range pods[:tc.gone] {
				if _, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, p.Name, metav1.GetOptions{}); err == nil {
					t.Errorf("%s still there", p.Name)
				}
			}
			testenv.Consistently(t, time.Second, "the rest of the ring alive", func() (bool, error) {
				left, err := remaining(c, ns)
				return err == nil && len(left) == keep, fmt.Errorf("pods left: %v %v", left, err)
			})
		})
	}
}
