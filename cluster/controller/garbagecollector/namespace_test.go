package garbagecollector

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/namespace"
	"github.com/kstep-dev/kstep/internal/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Namespace deleted with a propagation policy carries the collector's
// finalizer as well as the namespace controller's `kubernetes` one; the
// collector removes its own only once the namespace is emptied
// (finalizerRemovable), and the namespace goes with both gone.
func TestNamespaceCascades(t *testing.T) {
	c := testenv.StartControllerCluster(t, "gc", New)
	nc := testenv.ControllerContext(t, c.API.Config)
	testenv.RunController(t, namespace.New(nc), nc)
	for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		t.Run(string(p), func(t *testing.T) {
			ns := c.Namespace(t)
			rs := replicaSet(t, c, ns, "web")
			runningPods(t, c, ns, "web", 2, nil, ownedBy(rs, "ReplicaSet"))
			// A pod that cannot finish going until the test lets it: the
			// namespace must outlive it.
			runningPods(t, c, ns, "held", 1, []string{"kstep.dev/test-hold"})
			if err := c.Client.CoreV1().Namespaces().Delete(c.Ctx, ns, deleteWith(p)); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{}); err == nil {
				want := map[metav1.DeletionPropagation]string{metav1.DeletePropagationForeground: metav1.FinalizerDeleteDependents,
					metav1.DeletePropagationOrphan: metav1.FinalizerOrphanDependents}[p]
				if !slices.Contains(got.Finalizers, want) {
					t.Logf("namespace finalizers %v (the apiserver did not add %s)", got.Finalizers, want)
				}
			}
			// Never gone while content remains. (While the apiserver still
			// empties namespaces itself, it may take namespace and content
			// together; that is allowed.)
			testenv.Consistently(t, 1500*time.Millisecond, "no namespace gone with content left", func() (bool, error) {
				_, nsErr := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
				_, podErr := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "held-0", metav1.GetOptions{})
				return !apierrors.IsNotFound(nsErr) || apierrors.IsNotFound(podErr), fmt.Errorf("namespace gone, its pod held-0 left behind: %v", podErr)
			})
			if _, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "held-0", metav1.GetOptions{}); err == nil {
				release(t, c, ns, "held-0")
			}
			testenv.Eventually(t, 30*time.Second, "namespace and content gone", func() (bool, error) {
				_, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
				n, lerr := podCount(c, ns)
				return apierrors.IsNotFound(err) && lerr == nil && n == 0, fmt.Errorf("namespace: %v, %d pods", err, n)
			})
			if l, err := c.Client.AppsV1().ReplicaSets(ns).List(c.Ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
				t.Fatalf("replicasets left: %v", err)
			}
		})
	}
}
