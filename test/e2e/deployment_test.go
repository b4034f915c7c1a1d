package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

const rolloutManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: roll
spec:
  replicas: 10
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 2
      maxUnavailable: 1
  selector:
    matchLabels:
      app: roll
  template:
    metadata:
      labels:
        app: roll
    spec:
      containers:
      - name: app
        image: registry.kstep.local/app:v1
---
apiVersion: v1
kind: Service
metadata:
  name: roll
spec:
  selector:
    app: roll
  ports:
  - port: 80
    targetPort: 8080
`

// podCounter follows every pod of a label from a watch that runs through
// the whole rollout and records the extremes a watcher could observe.
type podCounter struct {
	mu            sync.Mutex
	pods          map[types.UID]*corev1.Pod
	maxTotal      int
	minAvailable  int
	armed         bool
	observedTotal int
}

func (c *podCounter) apply(ev watch.Event) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Type == watch.Deleted {
		delete(c.pods, p.UID)
	} else {
		c.pods[p.UID] = p
	}
	total, avail := 0, 0
	for _, q := range c.pods {
		if q.DeletionTimestamp != nil {
			continue
		}
		total++
		for _, cond := range q.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				avail++
			}
		}
	}
	c.observedTotal++
	if c.armed {
		c.maxTotal = max(c.maxTotal, total)
		c.minAvailable = min(c.minAvailable, avail)
	}
}

// A rolling update from app:v1 to app:v2 with kubectl never exceeds
// replicas+maxSurge pods nor drops below replicas-maxUnavailable Ready pods
// at any moment a watcher observes; rollout undo returns to v1; the
// Service's endpoints list exactly the Ready pods.
func TestDeploymentRollout(t *testing.T) {
	inLane(t, hollowProcs)
	p, cs, _ := controlPlane(t, 4)
	k := kubectl{t: t, path: kubectlPath(t), conf: p.Kubeconfig()}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "roll.yaml")
	if err := os.WriteFile(manifest, []byte(rolloutManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	k.run("apply", "-f", manifest)
	if out := k.run("rollout", "status", "deployment/roll", "--timeout=90s"); !strings.Contains(out, "successfully rolled out") {
		t.Fatalf("rollout status: %s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := &podCounter{pods: map[types.UID]*corev1.Pod{}, minAvailable: 1 << 30}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=roll", ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			c.apply(ev)
		}
	}()
	testenv.Eventually(t, 30*time.Second, "the watcher to see the 10 pods", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pods) >= 10
	})
	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()

	k.run("set", "image", "deployment/roll", "app=registry.kstep.local/app:v2")
	if out := k.run("rollout", "status", "deployment/roll", "--timeout=120s"); !strings.Contains(out, "successfully rolled out") {
		t.Fatalf("rollout status after set image: %s", out)
	}
	time.Sleep(500 * time.Millisecond)
	c.mu.Lock()
	t.Logf("rolling update observed: max %d pods (limit 12), min %d Ready (limit 9), over %d events", c.maxTotal, c.minAvailable, c.observedTotal)
	if c.maxTotal > 12 || c.minAvailable < 9 {
		t.Errorf("rolling update broke its bounds: max %d pods (limit 12), min %d Ready (limit 9)", c.maxTotal, c.minAvailable)
	}
	c.mu.Unlock()
	if img := k.run("get", "deployment", "roll", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); img != "registry.kstep.local/app:v2" {
		t.Fatalf("image after set image: %q", img)
	}

	k.run("rollout", "undo", "deployment/roll")
	k.run("rollout", "status", "deployment/roll", "--timeout=120s")
	if img := k.run("get", "deployment", "roll", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); img != "registry.kstep.local/app:v1" {
		t.Fatalf("image after rollout undo: %q", img)
	}
	if out := k.run("rollout", "history", "deployment/roll"); !strings.Contains(out, "REVISION") {
		t.Errorf("rollout history: %s", out)
	}

	// Endpoints: exactly the Ready pods' IPs.
	testenv.Eventually(t, time.Minute, "endpoints to list the 10 Ready pods", func() bool {
		pods, _ := podsOf(t, cs, "roll")
		want := map[string]bool{}
		for _, p := range pods {
			if allReady([]corev1.Pod{p}) && p.Status.PodIP != "" {
				want[p.Status.PodIP] = true
			}
		}
		ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "roll", metav1.GetOptions{})
		if err != nil || len(ep.Subsets) != 1 || len(want) != 10 {
			return false
		}
		got := map[string]bool{}
		for _, a := range ep.Subsets[0].Addresses {
			got[a.IP] = true
		}
		if len(got) != len(want) {
			return false
		}
		for ip := range want {
			if !got[ip] {
				return false
			}
		}
		return ep.Subsets[0].Ports[0].Port == 8080
	})
}
