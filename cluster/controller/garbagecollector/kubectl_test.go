package garbagecollector

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlOn returns a runner of the real kubectl against c's apiserver,
// failing the test on a non-zero exit; it skips the test without kubectl.
func kubectlOn(t *testing.T, c *testenv.ControllerCluster) func(args ...string) string {
	t.Helper()
	return testenv.NewKubectl(t, c.API.URL, "").Run
}

// kubectl's three cascades, as a user types them, against the collector.
func TestKubectlCascades(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	c := testenv.StartControllerCluster(t, "gc", New)
	kubectl := kubectlOn(t, c)
	ns := c.Namespace(t)
	podsOf := func(name string) int {
		l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, name+"-") {
				n++
			}
		}
		return n
	}

	t.Run("default cascade: pods go", func(t *testing.T) {
		rs := replicaSet(t, c, ns, "bg")
		runningPods(t, c, ns, "bg", 2, nil, ownedBy(rs, "ReplicaSet"))
		kubectl("delete", "rs", "bg", "-n", ns)
		testenv.Eventually(t, 20*time.Second, "pods gone", func() (bool, error) { return podsOf("bg") == 0, nil })
	})

	t.Run("--cascade=orphan: pods stay without ownerReference", func(t *testing.T) {
		rs := replicaSet(t, c, ns, "orph")
		runningPods(t, c, ns, "orph", 2, nil, ownedBy(rs, "ReplicaSet"))
		kubectl("delete", "rs", "orph", "-n", ns, "--cascade=orphan")
		out := kubectl("get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.name}={.metadata.ownerReferences}{\"\\n\"}{end}")
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(line, "orph-") && !strings.HasSuffix(line, "=") {
				t.Errorf("pod still owned: %s", line)
			}
		}
		testenv.Consistently(t, time.Second, "orphans alive", func() (bool, error) {
			n := podsOf("orph")
			return n == 2, fmt.Errorf("%d orphaned pods, want 2", n)
		})
	})

	t.Run("--cascade=foreground: the ReplicaSet waits for its pods", func(t *testing.T) {
		rs := replicaSet(t, c, ns, "fg")
		held := runningPods(t, c, ns, "fg", 1, []string{"kstep.dev/test-hold"}, ownedBy(rs, "ReplicaSet"))[0]
		kubectl("delete", "rs", "fg", "-n", ns, "--cascade=foreground", "--wait=false")
		time.Sleep(time.Second)
		out := kubectl("get", "rs", "fg", "-n", ns, "-o", "jsonpath={.metadata.finalizers}")
		if !strings.Contains(out, metav1.FinalizerDeleteDependents) {
			t.Fatalf("replicaset finalizers %q, want it waiting on foregroundDeletion", out)
		}
		release(t, c, ns, held.Name)
		kubectl("wait", "--for=delete", "rs/fg", "-n", ns, "--timeout=20s")
		if n := podsOf("fg"); n != 0 {
			t.Fatalf("pods left: %d", n)
		}
	})
}

// The ring of three as a user deletes it: kubectl --cascade=foreground
// waits (its default --wait) until the pod named is gone, which needs the
// whole ring to come down.
func TestRingKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	c := testenv.StartControllerCluster(t, "gc", New)
	kubectl := kubectlOn(t, c)
	ns := c.Namespace(t)
	pods := ring(t, c, ns, 3, nil)
	start := time.Now()
	kubectl("delete", "pod", pods[0].Name, "-n", ns, "--cascade=foreground", fmt.Sprintf("--timeout=%s", ringDeadline))
	testenv.Eventually(t, ringDeadline, "the ring gone", func() (bool, error) {
		left, err := remaining(c, ns)
		return err == nil && len(left) == 0, fmt.Errorf("pods left: %v %v", left, err)
	})
	t.Logf("kubectl delete --cascade=foreground: ring of 3 gone in %v", time.Since(start))
	if out := kubectl("get", "pods", "-n", ns, "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("kubectl still lists %q", out)
	}
}
