package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rsManifest = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
  labels:
    tier: front
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: registry.kstep.local/app:v1
        ports:
        - containerPort: 8080
        readinessProbe:
          httpGet:
            path: /readyz
            port: 8080
`

const deployManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 2
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: app
        image: registry.kstep.local/app:v1
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector:
    app: api
  ports:
  - port: 80
    targetPort: 8080
`

type kubectl struct {
	t          *testing.T
	path, conf string
}

func (k kubectl) run(args ...string) string {
	k.t.Helper()
	out, err := k.try(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (k kubectl) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.conf}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestKubectl(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t)
	k := kubectl{t: t, path: path, conf: conf}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	if out := k.run("get", "--raw", "/readyz"); strings.TrimSpace(out) != "ok" {
		t.Fatalf("readyz: %q", out)
	}
	out := k.run("api-resources")
	for _, want := range []string{"pods", "replicasets", "deployments", "leases", "events", "namespaces", "nodes", "services", "endpoints", "configmaps", "secrets", "serviceaccounts"} {
		if !strings.Contains(out, want) {
			t.Errorf("api-resources lacks %s:\n%s", want, out)
		}
	}

	// apply WITHOUT --validate=false, twice (the second is a no-op patch).
	rs := write("rs.yaml", rsManifest)
	if out := k.run("apply", "-f", rs); !strings.Contains(out, "replicaset.apps/web created") {
		t.Fatalf("apply: %s", out)
	}
	if out := k.run("apply", "-f", rs); !strings.Contains(out, "unchanged") {
		t.Fatalf("second apply: %s", out)
	}
	if out := k.run("apply", "-f", write("deploy.yaml", deployManifest)); !strings.Contains(out, "deployment.apps/api created") || !strings.Contains(out, "service/api created") {
		t.Fatalf("apply deployment: %s", out)
	}
	// Server-side field validation: an unknown field is refused.
	bad := strings.Replace(rsManifest, "replicas: 3", "replicas: 3\n  bogusField: 1", 1)
	if out, err := k.try("apply", "-f", write("bad.yaml", bad)); err == nil || !strings.Contains(out, "bogusField") {
		t.Fatalf("apply with an unknown field should fail naming it: %v %s", err, out)
	}

	// get in every output.
	var obj map[string]any
	if err := json.Unmarshal([]byte(k.run("get", "rs", "web", "-o", "json")), &obj); err != nil || obj["kind"] != "ReplicaSet" {
		t.Fatalf("get -o json: %v %v", err, obj["kind"])
	}
	if out := k.run("get", "rs", "web", "-o", "yaml"); !strings.Contains(out, "kind: ReplicaSet") || !strings.Contains(out, "resourceVersion:") {
		t.Fatalf("get -o yaml: %s", out)
	}
	out = k.run("get", "rs", "-o", "wide")
	for _, col := range []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR", "web", "app=web"} {
		if !strings.Contains(out, col) {
			t.Errorf("get rs -o wide lacks %s:\n%s", col, out)
		}
	}
	if out := k.run("get", "deploy"); !strings.Contains(out, "UP-TO-DATE") || !strings.Contains(out, "api") {
		t.Errorf("get deploy:\n%s", out)
	}
	if out := k.run("get", "svc", "api"); !strings.Contains(out, "CLUSTER-IP") || !strings.Contains(out, "80/TCP") {
		t.Errorf("get svc:\n%s", out)
	}

	// get --watch prints an update another client makes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := exec.CommandContext(ctx, path, "--kubeconfig", conf, "get", "rs", "web", "--watch", "-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas", "--no-headers")
	stdout, _ := w.StdoutPipe()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	first := <-lines
	if !strings.Contains(first, "3") {
		t.Fatalf("watch first line: %q", first)
	}
	cs := clientFor(t, conf, "kstep-apiserver-1") // another client, another apiserver
	if _, err := cs.AppsV1().ReplicaSets("default").Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		if !strings.Contains(l, "5") {
			t.Fatalf("watch saw %q, want replicas 5", l)
		}
	case <-ctx.Done():
		t.Fatal("kubectl get --watch did not print the update")
	}
	_ = w.Process.Kill()
	_, _ = io.Copy(io.Discard, stdout)
	_ = w.Wait()

	// scale, label, delete.
	k.run("scale", "rs", "web", "--replicas=7")
	if out := k.run("get", "rs", "web", "-o", "jsonpath={.spec.replicas}"); out != "7" {
		t.Fatalf("after scale: %q", out)
	}
	k.run("label", "rs", "web", "env=prod")
	if out := k.run("get", "rs", "-l", "env=prod", "-o", "name"); strings.TrimSpace(out) != "replicaset.apps/web" {
		t.Fatalf("after label: %q", out)
	}
	k.run("scale", "deployment", "api", "--replicas=4")
	if out := k.run("delete", "rs", "web"); !strings.Contains(out, `"web" deleted`) {
		t.Fatalf("delete: %s", out)
	}
	if out, err := k.try("get", "rs", "web"); err == nil || !strings.Contains(out, "NotFound") {
		t.Fatalf("get after delete: %v %s", err, out)
	}
	if out := k.run("get", "ns"); !strings.Contains(out, "kube-system") || !strings.Contains(out, "Active") {
		t.Errorf("get ns:\n%s", out)
	}
	k.run("create", "namespace", "team")
	k.run("create", "configmap", "c1", "-n", "team", "--from-literal=a=b")
	k.run("delete", "namespace", "team", "--wait=true", "--timeout=30s")
}

// TestKubectlDrain is kubectl drain against a PodDisruptionBudget, with real
// kubectl: the budget blocks it (every eviction 429, the budget named),
// then, loosened, allows it; the node ends cordoned and empty of the
// budget's pods, which run again on the other node.
func TestKubectlDrain(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t, "--hollow-nodes", "2")
	k := kubectl{t: t, path: path, conf: conf}
	k.run("create", "deployment", "web", "--image=registry.kstep.local/app:v1", "--replicas=2")
	k.run("rollout", "status", "deployment/web", "--timeout=60s")
	k.run("create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=2")
	retry(t, "the budget's status", func() error {
		out := k.run("get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy}/{.status.desiredHealthy}/{.status.disruptionsAllowed}")
		if out != "2/2/0" {
			return fmt.Errorf("status %s, want 2/2/0", out)
		}
		return nil
	})
	if out := k.run("get", "pdb"); !strings.Contains(out, "MIN AVAILABLE") || !strings.Contains(out, "ALLOWED DISRUPTIONS") {
		t.Errorf("get pdb:\n%s", out)
	}
	node := strings.TrimSpace(k.run("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].spec.nodeName}"))
	pod := strings.TrimSpace(k.run("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"))

	// A direct eviction (client-go): 429 naming the budget.
	cs := clientFor(t, conf, "")
	err := cs.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: "default"}})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 429 || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 ||
		!strings.Contains(se.ErrStatus.Details.Causes[0].Message, "The disruption budget web needs 2 healthy pods and has 2 currently") {
		t.Errorf("eviction: %v (%+v), want 429 naming the budget", err, se)
	}
	if out, err := k.try("create", "--raw", "/api/v1/namespaces/default/pods/"+pod+"/eviction", "-f", writeTemp(t, "eviction.json",
		fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q,"namespace":"default"}}`, pod))); err == nil ||
		!strings.Contains(out, "TooManyRequests") {
		t.Errorf("kubectl eviction: %v %s, want TooManyRequests", err, out)
	}

	// drain is blocked: it retries every eviction until its timeout.
	out, err := k.try("drain", node, "--ignore-daemonsets", "--timeout=12s")
	if err == nil || !strings.Contains(out, "Cannot evict pod as it would violate the pod's disruption budget") {
		t.Fatalf("drain against the budget: %v\n%s", err, out)
	}
	if unsched := k.run("get", "node", node, "-o", "jsonpath={.spec.unschedulable}"); unsched != "true" {
		t.Errorf("drain did not cordon %s: %q", node, unsched)
	}

	// Loosened, the budget lets drain through.
	k.run("patch", "pdb", "web", "--type=merge", "-p", `{"spec":{"minAvailable":1}}`)
	out = k.run("drain", node, "--ignore-daemonsets", "--timeout=90s")
	if !strings.Contains(out, "evicted") || !strings.Contains(out, "drained") {
		t.Errorf("drain with the budget loosened:\n%s", out)
	}
	k.run("rollout", "status", "deployment/web", "--timeout=60s")
	if on := k.run("get", "pods", "-l", "app=web", "--field-selector", "spec.nodeName="+node, "-o", "name"); strings.TrimSpace(on) != "" {
		t.Errorf("pods still on the drained node: %s", on)
	}
	k.run("uncordon", node)
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// ssaDeployment is the Deployment of TestKubectlServerSideApply: each
// field manager applies its own container; apply merges them by name.
const ssaDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa
spec:
  replicas: 1
  selector: {matchLabels: {app: ssa}}
  template:
    metadata: {labels: {app: ssa}}
    spec:
      containers:
      - name: %s
        image: %s
`

// TestKubectlServerSideApply is kubectl apply --server-side with real
// kubectl: the first apply creates, the second (unchanged) is a no-op; a
// second field manager's apply of another container merges with the first
// by name; its apply of the first manager's image conflicts (409 naming
// the manager and the field) until --force-conflicts takes it over; the
// managed fields say who owns what.
func TestKubectlServerSideApply(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t, "--hollow-nodes", "1")
	k := kubectl{t: t, path: path, conf: conf}
	f := func(name, image string) string {
		return writeTemp(t, "deploy.yaml", fmt.Sprintf(ssaDeployment, name, image))
	}
	if out := k.run("apply", "--server-side", "-f", f("web", "registry.kstep.local/app:v1")); !strings.Contains(out, "deployment.apps/ssa serverside-applied") {
		t.Fatalf("first apply: %s", out)
	}
	// An unchanged apply writes nothing (a ConfigMap: no controller
	// writes it meanwhile).
	cm := writeTemp(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: b}\n")
	k.run("apply", "--server-side", "-f", cm)
	rv := k.run("get", "cm", "ssa", "-o", "jsonpath={.metadata.resourceVersion}")
	if out := k.run("apply", "--server-side", "-f", cm); !strings.Contains(out, "serverside-applied") {
		t.Errorf("second apply: %s", out)
	}
	if again := k.run("get", "cm", "ssa", "-o", "jsonpath={.metadata.resourceVersion}"); again != rv {
		t.Errorf("an unchanged apply wrote: resourceVersion %s → %s", rv, again)
	}

	// A second manager's container merges by name.
	k.run("apply", "--server-side", "--field-manager=sidecar-injector", "-f", f("sidecar", "registry.kstep.local/app:v1"))
	if names := k.run("get", "deploy", "ssa", "-o", "jsonpath={.spec.template.spec.containers[*].name}"); names != "web sidecar" {
		t.Errorf("containers after the second manager's apply: %q, want \"web sidecar\"", names)
	}

	// Its apply of the first manager's image conflicts.
	out, err := k.try("apply", "--server-side", "--field-manager=sidecar-injector", "-f", f("web", "registry.kstep.local/app:v2"))
	if err == nil || !strings.Contains(out, "conflict") || !strings.Contains(out, `"kubectl"`) ||
		!strings.Contains(out, `.spec.template.spec.containers[name="web"].image`) {
		t.Fatalf("conflicting apply: %v\n%s", err, out)
	}
	if img := k.run("get", "deploy", "ssa", "-o", `jsonpath={.spec.template.spec.containers[?(@.name=="web")].image}`); img != "registry.kstep.local/app:v1" {
		t.Errorf("a refused apply changed the image to %s", img)
	}
	k.run("apply", "--server-side", "--force-conflicts", "--field-manager=sidecar-injector", "-f", f("web", "registry.kstep.local/app:v2"))
	if img := k.run("get", "deploy", "ssa", "-o", `jsonpath={.spec.template.spec.containers[?(@.name=="web")].image}`); img != "registry.kstep.local/app:v2" {
		t.Errorf("after --force-conflicts the image is %s", img)
	}

	// Who owns what: the forced image moved to sidecar-injector.
	var d struct {
		Metadata struct {
			ManagedFields []struct {
				Manager   string         `json:"manager"`
				Operation string         `json:"operation"`
				FieldsV1  map[string]any `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(k.run("get", "deploy", "ssa", "-o", "json", "--show-managed-fields")), &d); err != nil {
		t.Fatal(err)
	}
	// sidecar-injector's last apply named only the web container: the
	// sidecar it no longer applies, and nobody else owns, is gone.
	if names := k.run("get", "deploy", "ssa", "-o", "jsonpath={.spec.template.spec.containers[*].name}"); names != "web" {
		t.Errorf("containers after sidecar-injector's apply without its sidecar: %q, want \"web\"", names)
	}
	webImage := []string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"web"}`, "f:image"}
	sidecar := []string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"sidecar"}`, "f:image"}
	entry := map[string]map[string]any{}
	for _, m := range d.Metadata.ManagedFields {
		entry[m.Manager+"/"+m.Operation] = m.FieldsV1
	}
	kc, si := entry["kubectl/Apply"], entry["sidecar-injector/Apply"]
	if kc == nil || si == nil || owns(kc, webImage...) || !owns(si, webImage...) || owns(si, sidecar...) ||
		!owns(kc, "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"web"}`, "f:name") {
		t.Errorf("managed fields after --force-conflicts: kubectl %v, sidecar-injector %v", kc, si)
	}
	// A plain update records an Update entry for its manager.
	k.run("label", "deploy", "ssa", "team=a")
	if err := json.Unmarshal([]byte(k.run("get", "deploy", "ssa", "-o", "json", "--show-managed-fields")), &d); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range d.Metadata.ManagedFields {
		b, _ := json.Marshal(m.FieldsV1)
		found = found || (m.Operation == "Update" && strings.Contains(string(b), `"f:team"`))
	}
	if !found {
		t.Errorf("kubectl label left no Update entry owning the label: %+v", d.Metadata.ManagedFields)
	}
}

// owns reports whether a FieldsV1 set has the path.
func owns(fields map[string]any, path ...string) bool {
	cur := fields
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	return true
}
