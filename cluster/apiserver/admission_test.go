package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlFor returns a kubectl runner on the env's apiserver, or skips
// when kubectl is not installed.
func (e *env) kubectl(t *testing.T) func(stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl in PATH")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: kstep, cluster: {server: %q}}]
users: [{name: admin, user: {}}]
contexts: [{name: kstep, context: {cluster: kstep, user: admin}}]
current-context: kstep
`, e.api.URL)
	if err := os.WriteFile(conf, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctxT(t), bin, append([]string{"--kubeconfig", conf, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

func (e *env) namespace(t *testing.T, name string) {
	t.Helper()
	if _, err := e.cs.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func podWith(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	p := testPod(name)
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return p
}

func cpu(s string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
}

// Every new pod tolerates not-ready and unreachable for the configured
// seconds, unless it already tolerates them.
func TestDefaultTolerations(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	p, err := e.cs.CoreV1().Pods("default").Create(ctx, testPod("tol"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tol := range p.Spec.Tolerations {
		if tol.Effect == corev1.TaintEffectNoExecute && tol.Operator == corev1.TolerationOpExists && tol.TolerationSeconds != nil {
			got[tol.Key] = *tol.TolerationSeconds
		}
	}
	if got[corev1.TaintNodeNotReady] != 10 || got[corev1.TaintNodeUnreachable] != 10 {
		t.Fatalf("tolerations %+v, want not-ready and unreachable for 10s", p.Spec.Tolerations)
	}
	// A pod that tolerates unreachable forever keeps exactly that.
	own := testPod("own")
	own.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	p, err = e.cs.CoreV1().Pods("default").Create(ctx, own, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Tolerations) != 2 || p.Spec.Tolerations[0].TolerationSeconds != nil || p.Spec.Tolerations[1].Key != corev1.TaintNodeNotReady {
		t.Fatalf("tolerations %+v, want the pod's own unreachable plus not-ready", p.Spec.Tolerations)
	}
	// With kubectl: the same defaults show.
	k := e.kubectl(t)
	if out, err := k("", "run", "kc", "--image=registry.kstep.local/app:v1", "--restart=Never"); err != nil {
		t.Fatalf("kubectl run: %v\n%s", err, out)
	}
	out, err := k("", "get", "pod", "kc", "-o", "jsonpath={.spec.tolerations[*].key}:{.spec.tolerations[*].tolerationSeconds}")
	if err != nil || out != "node.kubernetes.io/not-ready node.kubernetes.io/unreachable:10 10" {
		t.Fatalf("kubectl get: %q %v", out, err)
	}
}

// LimitRange: containers without requests or limits get the defaults; a
// container over max is refused with 403 and nothing is written.
func TestLimitRange(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	e.namespace(t, "lr")
	k := e.kubectl(t)
	out, err := k(`apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: lr}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
    min: {cpu: 50m}
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
`, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	lr, err := e.cs.CoreV1().LimitRanges("lr").Get(ctx, "limits", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// v1 defaulting of the item: the memory default request is the default.
	if q := lr.Spec.Limits[0].DefaultRequest[corev1.ResourceMemory]; q.String() != "256Mi" {
		t.Fatalf("defaultRequest memory %q, want 256Mi", q.String())
	}
	testWaitCached(t, e, "/api/v1/namespaces/lr/limitranges")

	p, err := e.cs.CoreV1().Pods("lr").Create(ctx, testPod("defaults"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Spec.Containers[0].Resources
	if r.Requests.Cpu().String() != "100m" || r.Limits.Cpu().String() != "500m" || r.Limits.Memory().String() != "256Mi" || r.Requests.Memory().String() != "256Mi" {
		t.Fatalf("resources %+v, want requests cpu 100m memory 256Mi, limits cpu 500m memory 256Mi", r)
	}
	_, err = e.cs.CoreV1().Pods("lr").Create(ctx, podWith("big", nil, cpu("2")), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "maximum cpu usage per Container is 1, but limit is 2") {
		t.Fatalf("over max: want 403 maximum cpu usage, got %v", err)
	}
	out, err = k(`apiVersion: v1
kind: Pod
metadata: {name: small, namespace: lr}
spec:
  containers: [{name: app, image: registry.kstep.local/app:v1, resources: {requests: {cpu: 10m}}}]
`, "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "minimum cpu usage per Container is 50m, but request is 10m") {
		t.Fatalf("kubectl apply under min: want the LimitRange refusal, got %v\n%s", err, out)
	}
	if keys := e.etcdKeys("/registry/pods/lr/"); len(keys) != 1 {
		t.Fatalf("etcd holds %v, want only the defaulted pod", keys)
	}
}

// testWaitCached waits until a list of path from the watch cache returns
// an item: admission reads that cache.
func testWaitCached(t *testing.T, e *env, path string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, path+" cached", func() error {
		b, err := e.cs.RESTClient().Get().AbsPath(path).Param("resourceVersion", "0").DoRaw(ctxT(t))
		if err == nil && !strings.Contains(string(b), `"items":[{`) {
			err = fmt.Errorf("no item yet")
		}
		return err
	})
}

// ResourceQuota: pods and cpu are counted per namespace; the create over
// the limit is a 403 with upstream's message and nothing is written;
// concurrent creates at the limit never overshoot; the apiserver counts a
// quota's first usage itself, and the quota controller's recount releases
// a deleted pod's.
func TestResourceQuota(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	e.namespace(t, "q")
	k := e.kubectl(t)
	out, err := k(`apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: q}
spec:
  hard: {pods: "3", requests.cpu: "1"}
`, "create", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl create quota: %v\n%s", err, out)
	}
	testWaitCached(t, e, "/api/v1/namespaces/q/resourcequotas")

	_, err = e.cs.CoreV1().Pods("q").Create(ctx, testPod("nocpu"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "failed quota: compute: must specify requests.cpu for: app") {
		t.Fatalf("pod without a cpu request: want 403 must specify, got %v", err)
	}
	for i := range 2 {
		if _, err := e.cs.CoreV1().Pods("q").Create(ctx, podWith(fmt.Sprintf("p%d", i), cpu("400m"), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.cs.CoreV1().Pods("q").Create(ctx, podWith("over", cpu("400m"), nil), metav1.CreateOptions{})
	want := `pods "over" is forbidden: exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("over quota:\n got %v\nwant %s", err, want)
	}
	out, err = k(`apiVersion: v1
kind: Pod
metadata: {name: kc, namespace: q}
spec:
  containers: [{name: app, image: registry.kstep.local/app:v1, resources: {requests: {cpu: 500m}}}]
`, "create", "-f", "-")
	if err == nil || !strings.Contains(out, "exceeded quota: compute") {
		t.Fatalf("kubectl create over quota: want the refusal, got %v\n%s", err, out)
	}
	if keys := e.etcdKeys("/registry/pods/q/"); len(keys) != 2 {
		t.Fatalf("etcd holds %v, want 2 pods", keys)
	}

	// Concurrent creates at the limit: exactly the room left passes.
	e.namespace(t, "race")
	if _, err := e.cs.CoreV1().ResourceQuotas("race").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testWaitCached(t, e, "/api/v1/namespaces/race/resourcequotas")
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.cs.CoreV1().Pods("race").Create(ctx, testPod(fmt.Sprintf("r%d", i)), metav1.CreateOptions{})
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 15 {
		t.Fatalf("20 concurrent creates under pods=5: %d created, %d refused", ok.Load(), refused.Load())
	}
	// A deleted pod frees its room once the quota controller recounts
	// (admission only charges, as upstream's).
	e.runQuotaController(t)
	if err := e.cs.CoreV1().Pods("race").Delete(ctx, "r0", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	pods, _ := e.cs.CoreV1().Pods("race").List(ctx, metav1.ListOptions{})
	if len(pods.Items) == 5 {
		_ = e.cs.CoreV1().Pods("race").Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{})
	}
	testenv.Eventually(t, 10*time.Second, "a create after a delete", func() error {
		_, err := e.cs.CoreV1().Pods("race").Create(context.Background(), testPod("after"), metav1.CreateOptions{})
		return err
	})
}
