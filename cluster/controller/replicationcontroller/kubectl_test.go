package replicationcontroller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/garbagecollector"
	"github.com/kstep-dev/kstep/cluster/controller/replicationcontroller"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const rcManifest = `apiVersion: v1
kind: ReplicationController
metadata:
  name: %[1]s
spec:
  replicas: 3
  selector:
    app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      nodeName: n1
      containers:
      - name: app
        image: registry.kstep.local/app:v1
`

// A user's session with a ReplicationController, through the real kubectl:
// create -f, get, scale up and down, and the orphan and foreground
// cascades.
func TestKubectlReplicationController(t *testing.T) {
	c := testenv.StartControllerCluster(t, "rc", replicationcontroller.New, garbagecollector.New)
	ns := c.Namespace(t)
	k := testenv.NewKubectl(t, c.API.URL, ns)
	create := func(name string) *corev1.ReplicationController {
		t.Helper()
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(rcManifest, name)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := k.Run("create", "-f", path); out != fmt.Sprintf("replicationcontroller/%s created", name) {
			t.Fatalf("kubectl create: %q", out)
		}
		return settled(t, c, ns, name, 3)
	}
	podsOf := func(name string) []corev1.Pod {
		t.Helper()
		l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}

	t.Run("create -f, get, scale", func(t *testing.T) {
		create("web")
		out := k.Run("get", "rc")
		lines := strings.Split(out, "\n")
		if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME DESIRED CURRENT READY AGE" ||
			!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "web 3 3 3 ") {
			t.Fatalf("kubectl get rc:\n%s", out)
		}
		wide := k.Run("get", "replicationcontroller", "web", "-o", "wide")
		if f := strings.Fields(strings.Split(wide, "\n")[1]); len(f) != 8 || f[5] != "app" || f[6] != "registry.kstep.local/app:v1" || f[7] != "app=web" {
			t.Fatalf("kubectl get rc -o wide:\n%s", wide)
		}
		if all := k.Run("get", "all"); !strings.Contains(all, "replicationcontroller/web") {
			t.Errorf("kubectl get all lacks the rc:\n%s", all)
		}
		for _, n := range []int32{5, 1} {
			if out := k.Run("scale", "rc", "web", fmt.Sprintf("--replicas=%d", n)); out != "replicationcontroller/web scaled" {
				t.Fatalf("kubectl scale: %q", out)
			}
			settled(t, c, ns, "web", n)
		}
		if got := k.Run("get", "rc", "web", "-o", "jsonpath={.spec.replicas}/{.status.replicas}/{.status.readyReplicas}"); got != "1/1/1" {
			t.Fatalf("after scaling to 1: %s", got)
		}
	})

	t.Run("delete --cascade=orphan: pods stay without their ownerReference", func(t *testing.T) {
		create("orph")
		before := podsOf("orph")
		k.Run("delete", "rc", "orph", "--cascade=orphan")
		testenv.Eventually(t, 20*time.Second, "rc gone", func() (bool, error) {
			_, err := c.Client.CoreV1().ReplicationControllers(ns).Get(c.Ctx, "orph", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		testenv.Consistently(t, 2*time.Second, "the same 3 pods, free", func() (bool, error) {
			after := podsOf("orph")
			if len(after) != len(before) {
				return false, fmt.Errorf("%d pods, want %d", len(after), len(before))
			}
			for i, p := range after {
				if p.UID != before[i].UID || p.DeletionTimestamp != nil || len(p.OwnerReferences) != 0 {
					return false, fmt.Errorf("pod %s: deleting %v, owners %+v", p.Name, p.DeletionTimestamp != nil, p.OwnerReferences)
				}
			}
			return true, nil
		})
	})

	t.Run("delete --cascade=foreground: the pods go first, then the rc", func(t *testing.T) {
		create("fg")
		// One pod cannot finish going until the test lets it: the rc must
		// wait for it.
		held := podsOf("fg")[0].Name
		if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, held, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":["kstep.dev/test-hold"]}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		k.Run("delete", "rc", "fg", "--cascade=foreground", "--wait=false")
		testenv.Eventually(t, 20*time.Second, "every pod but the held one gone, the held one going", func() (bool, error) {
			pods := podsOf("fg")
			return len(pods) == 1 && pods[0].Name == held && pods[0].DeletionTimestamp != nil, fmt.Errorf("%d pods", len(pods))
		})
		testenv.Consistently(t, time.Second, "rc waiting on its pod", func() (bool, error) {
			rc, err := c.Client.CoreV1().ReplicationControllers(ns).Get(c.Ctx, "fg", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			waiting := rc.DeletionTimestamp != nil && len(rc.Finalizers) == 1 && rc.Finalizers[0] == metav1.FinalizerDeleteDependents
			return waiting && len(podsOf("fg")) == 1, fmt.Errorf("finalizers %v, %d pods", rc.Finalizers, len(podsOf("fg")))
		})
		if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, held, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		k.Run("wait", "--for=delete", "rc/fg", "--timeout=20s")
		if pods := podsOf("fg"); len(pods) != 0 {
			t.Fatalf("%d pods left after the rc", len(pods))
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := k.Run("explain", "rc.spec.selector")
		for _, want := range []string{"KIND:       ReplicationController", "VERSION:    v1", "FIELD: selector <map[string]string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("create -f refuses a selector that does not match", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.yaml")
		bad := strings.Replace(fmt.Sprintf(rcManifest, "bad"), "    app: bad\n  template", "    app: other\n  template", 1)
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := k.Try("create", "-f", path)
		if err == nil || !strings.Contains(out, "is invalid") || !strings.Contains(out, "`selector` does not match template `labels`") {
			t.Fatalf("kubectl create of a mismatched rc: %v\n%s", err, out)
		}
	})
}
