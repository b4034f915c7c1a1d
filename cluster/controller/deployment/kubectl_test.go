package deployment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/internal/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newKubectl(t *testing.T, c *testenv.Cluster) *testenv.Kubectl {
	t.Helper()
	return testenv.NewKubectl(t, c.API.URL, "default")
}

const kubectlManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: k
  annotations:
    kubernetes.io/change-cause: "create v1"
spec:
  replicas: 4
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 1
  selector:
    matchLabels:
      app: k
  template:
    metadata:
      labels:
        app: k
    spec:
      containers:
      - name: app
        image: registry.kstep.local/app:v1
`

// The kubectl rollout verbs against our controller: status, history, undo
// (client-side in kubectl 1.32), undo --to-revision, scale, pause/resume,
// restart.
func TestKubectlRollout(t *testing.T) {
	c := startCluster(t)
	k := newKubectl(t, c)
	manifest := filepath.Join(t.TempDir(), "k.yaml")
	if err := os.WriteFile(manifest, []byte(kubectlManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	k.Run("apply", "-f", manifest)
	status := func() {
		t.Helper()
		if out := k.Run("rollout", "status", "deployment/k", "--timeout=60s"); !strings.Contains(out, `deployment "k" successfully rolled out`) {
			t.Fatalf("rollout status: %s", out)
		}
	}
	img := func() string {
		return k.Run("get", "deployment", "k", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
	}
	status()

	// change-cause after the template change, as upstream expects: the
	// Deployment's annotations are copied to its current new ReplicaSet.
	k.Run("set", "image", "deployment/k", "app=registry.kstep.local/app:v2")
	k.Run("annotate", "deployment/k", "kubernetes.io/change-cause=set image v2", "--overwrite")
	status()
	hist := k.Run("rollout", "history", "deployment/k")
	t.Logf("kubectl rollout history after v2:\n%s", hist)
	for _, want := range []string{"REVISION", "1         create v1", "2         set image v2"} {
		if !strings.Contains(hist, want) {
			t.Errorf("rollout history lacks %q:\n%s", want, hist)
		}
	}
	if rev1 := k.Run("rollout", "history", "deployment/k", "--revision=1"); !strings.Contains(rev1, "registry.kstep.local/app:v1") {
		t.Errorf("rollout history --revision=1:\n%s", rev1)
	}

	if out := k.Run("rollout", "undo", "deployment/k"); !strings.Contains(out, "rolled back") {
		t.Fatalf("rollout undo: %s", out)
	}
	status()
	if got := img(); got != "registry.kstep.local/app:v1" {
		t.Fatalf("image after undo: %q", got)
	}
	d := getDeployment(t, c.Client, "k")
	rss := replicaSets(t, c.Client, d)
	if len(rss) != 2 || rss["3"] == nil || rss["3"].Spec.Template.Spec.Containers[0].Image != "registry.kstep.local/app:v1" {
		t.Fatalf("after undo: %s", describe(rss))
	}
	hist = k.Run("rollout", "history", "deployment/k")
	t.Logf("kubectl rollout history after undo:\n%s", hist)
	if !strings.Contains(hist, "2         set image v2") || !strings.Contains(hist, "3         create v1") {
		t.Errorf("rollout history after undo:\n%s", hist)
	}

	k.Run("rollout", "undo", "deployment/k", "--to-revision=2")
	status()
	if got := img(); got != "registry.kstep.local/app:v2" {
		t.Fatalf("image after undo --to-revision=2: %q", got)
	}

	k.Run("scale", "deployment/k", "--replicas=6")
	status()
	assertPods(t, c, "app=k", 6, "registry.kstep.local/app:v2")
	if out := k.Run("get", "deployment", "k", "--no-headers"); !strings.Contains(out, "6/6") {
		t.Errorf("kubectl get deployment: %s", out)
	}

	k.Run("rollout", "pause", "deployment/k")
	k.Run("set", "image", "deployment/k", "app=registry.kstep.local/app:v3")
	time.Sleep(time.Second)
	if n := len(replicaSets(t, c.Client, getDeployment(t, c.Client, "k"))); n != 2 {
		t.Fatalf("paused deployment has %d replicasets", n)
	}
	if out, err := k.Try("rollout", "undo", "deployment/k"); err == nil || !strings.Contains(out, "paused") {
		t.Errorf("undo of a paused deployment: %v %s", err, out)
	}
	k.Run("rollout", "resume", "deployment/k")
	status()
	assertPods(t, c, "app=k", 6, "registry.kstep.local/app:v3")

	k.Run("rollout", "restart", "deployment/k")
	status()
	d = getDeployment(t, c.Client, "k")
	if d.Annotations[deployment.RevisionAnnotation] != "6" {
		t.Errorf("revision after restart: %q, want 6", d.Annotations[deployment.RevisionAnnotation])
	}
	evs, _ := c.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=k"})
	t.Logf("%d events on deployment/k; kubectl get rs:\n%s", len(evs.Items), k.Run("get", "rs", "-o", "wide"))
}
