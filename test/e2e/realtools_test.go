package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// What every real cluster has from its first second, and what real tools
// and test suites use at once, with kubectl and client-go on every
// provider: the default/kubernetes Service and its endpoints following the
// live apiservers, kube-root-ca.crt in every namespace, v1
// ReplicationControllers, the garbage collector through an ownership ring,
// and EndpointSlices of a 250-pod Service following readiness.
func TestWhatRealToolsExpect(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			bin := binary(t)
			kc := kubectlPath(t)
			if prov == "docker" {
				needDocker(t)
			}
			spec := provider.Spec{Topology: provider.Topology{EtcdMembers: 1, APIServers: 2, ControllerManagers: 1, Schedulers: 1, HollowNodes: 5},
				ReadyTimeout: 2 * time.Minute, StopGrace: 10 * time.Second, Log: testWriter{t}}
			spec.Topology.Defaults()
			spec.StateDir, spec.Binary = t.TempDir(), bin
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			p, err := provider.New(ctx, prov, spec)
			if err != nil {
				t.Fatal(err)
			}
			up(t, p, spec.StateDir, 8*time.Minute)
			k := kubectl{t: t, path: kc, conf: p.Kubeconfig()}
			cs := clientFor(t, p.Kubeconfig(), "kstep") // apiserver-0

			t.Run("kubernetes service follows the apiservers", func(t *testing.T) { kubernetesServiceFollows(ctx, t, p, k) })
			t.Run("kube-root-ca.crt in a new namespace", func(t *testing.T) { rootCAPublished(t, p, k) })
			t.Run("replicationcontroller", func(t *testing.T) { replicationControllers(ctx, t, cs, k) })
			t.Run("ownership ring", func(t *testing.T) { ownershipRing(ctx, t, cs, k) })
			t.Run("endpointslices of 250 pods", func(t *testing.T) { endpointSlices250(ctx, t, cs, k) })
		})
	}
}

// kubernetesEndpoints is what kubectl shows of default/kubernetes: the
// Endpoints' and the EndpointSlices' "ip:port"s, sorted.
func kubernetesEndpoints(k kubectl) (fromEndpoints, fromSlices []string, err error) {
	out, err := k.try("get", "endpoints", "kubernetes", "-n", "default", "-o", "json")
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %s", err, out)
	}
	var ep corev1.Endpoints
	if err := json.Unmarshal([]byte(out), &ep); err != nil {
		return nil, nil, err
	}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			for _, port := range s.Ports {
				fromEndpoints = append(fromEndpoints, a.IP+":"+strconv.Itoa(int(port.Port)))
			}
		}
	}
	out, err = k.try("get", "endpointslices", "-n", "default", "-l", discoveryv1.LabelServiceName+"=kubernetes", "-o", "json")
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %s", err, out)
	}
	var list discoveryv1.EndpointSliceList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, nil, err
	}
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			for _, port := range sl.Ports {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					fromSlices = append(fromSlices, e.Addresses[0]+":"+strconv.Itoa(int(*port.Port)))
				}
			}
		}
	}
	slices.Sort(fromEndpoints)
	slices.Sort(fromSlices)
	return fromEndpoints, fromSlices, nil
}

// waitKubernetesEndpoints waits until both lists hold n entries (and, when
// want is set, exactly want) and returns them and how long that took.
func waitKubernetesEndpoints(t *testing.T, k kubectl, ceiling time.Duration, n int, want []string) ([]string, time.Duration) {
	t.Helper()
	start := time.Now()
	var eps, sls []string
	var err error
	for time.Since(start) < ceiling {
		eps, sls, err = kubernetesEndpoints(k)
		if err == nil && len(eps) == n && slices.Equal(eps, sls) && (want == nil || slices.Equal(eps, want)) {
			return eps, time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("after %v: endpoints %v, slices %v (err %v); want %d entries %v", ceiling, eps, sls, err, n, want)
	return nil, 0
}

func kubernetesServiceFollows(ctx context.Context, t *testing.T, p provider.Provider, k kubectl) {
	out := k.run("get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP} {.spec.ports[0].port}")
	if out != "10.96.0.1 443" {
		t.Fatalf("kubectl get svc kubernetes: %q, want the service range's first address and port 443", out)
	}
	both, took := waitKubernetesEndpoints(t, k, time.Minute, 2, nil)
	t.Logf("both apiservers listed (%v) %v after the cluster was up", both, took.Round(time.Millisecond))
	if p.Name() == "process" {
		// Every apiserver on 127.0.0.1 with a port of its own: each is a
		// subset and a slice of its own (docs/guides/apiserver.md says why).
		var want []string
		for _, a := range p.Actors() {
			if a.Role == provider.RoleAPIServer {
				want = append(want, strings.TrimPrefix(a.Endpoint, "https://"))
			}
		}
		slices.Sort(want)
		if !slices.Equal(both, want) {
			t.Fatalf("endpoints %v, want the apiservers' %v", both, want)
		}
	}

	killed := time.Now()
	if err := p.Stop(ctx, "apiserver-1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	one, took := waitKubernetesEndpoints(t, k, 60*time.Second, 1, nil)
	t.Logf("SIGKILLed apiserver-1 left the endpoints %v after the kill (lease TTL 15s); %v remains",
		time.Since(killed).Round(time.Millisecond), one)
	_ = took
	if !slices.Contains(both, one[0]) {
		t.Fatalf("after the kill the endpoints hold %v, not one of %v", one, both)
	}

	started := time.Now()
	if err := p.Start(ctx, "apiserver-1"); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(started)
	again, took := waitKubernetesEndpoints(t, k, 60*time.Second, 2, nil)
	t.Logf("restarted apiserver-1 (ready after %v) back in the endpoints %v later: %v", ready.Round(time.Millisecond), took.Round(time.Millisecond), again)
	if p.Name() == "process" && !slices.Equal(again, both) {
		t.Fatalf("after the restart the endpoints hold %v, want %v", again, both)
	}
}

func rootCAPublished(t *testing.T, p provider.Provider, k kubectl) {
	cfg, err := clientcmd.LoadFromFile(p.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	ca := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].CertificateAuthorityData
	if len(ca) == 0 {
		t.Fatalf("the kubeconfig carries no CA")
	}
	k.run("create", "namespace", "tools-ns")
	created := time.Now()
	for {
		out, err := k.try("get", "configmap", "kube-root-ca.crt", "-n", "tools-ns", "-o", `jsonpath={.data.ca\.crt}`)
		if err == nil && out != "" {
			if out != string(ca) {
				t.Fatalf("kube-root-ca.crt holds %q, want the cluster CA %q", out, ca)
			}
			break
		}
		if time.Since(created) > 30*time.Second {
			t.Fatalf("no kube-root-ca.crt in a new namespace after 30s: %v %s", err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("a new namespace had kube-root-ca.crt (the cluster CA) %v after kubectl created it (polling through kubectl)", time.Since(created).Round(time.Millisecond))
}

const rcManifest = `apiVersion: v1
kind: ReplicationController
metadata:
  name: %s
spec:
  replicas: %d
  selector:
    app: %s
  template:
    metadata:
      labels:
        app: %s
    spec:
      containers:
      - name: app
        image: registry.kstep.local/app:v1
`

func podsWith(ctx context.Context, t *testing.T, cs kubernetes.Interface, selector string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func replicationControllers(ctx context.Context, t *testing.T, cs kubernetes.Interface, k kubectl) {
	dir := t.TempDir()
	manifest := func(name string, replicas int) string {
		f := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(f, fmt.Appendf(nil, rcManifest, name, replicas, name, name), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	readyIs := func(name string, n int) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, fmt.Sprintf("rc %s with %d ready replicas", name, n), func() bool {
			out, err := k.try("get", "rc", name, "-o", "jsonpath={.status.replicas} {.status.readyReplicas}")
			return err == nil && out == fmt.Sprintf("%d %d", n, n)
		})
	}
	k.run("create", "-f", manifest("web-rc", 3))
	readyIs("web-rc", 3)
	for _, p := range podsWith(ctx, t, cs, "app=web-rc") {
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.Name != "web-rc" {
			t.Fatalf("pod %s controller %+v, want the ReplicationController", p.Name, ref)
		}
	}
	k.run("scale", "rc", "web-rc", "--replicas=5")
	readyIs("web-rc", 5)
	out := strings.Split(strings.TrimSpace(k.run("get", "rc", "web-rc")), "\n")
	if len(out) != 2 || !slices.Equal(strings.Fields(out[0])[:4], []string{"NAME", "DESIRED", "CURRENT", "READY"}) ||
		!slices.Equal(strings.Fields(out[1])[:4], []string{"web-rc", "5", "5", "5"}) {
		t.Fatalf("kubectl get rc:\n%s", strings.Join(out, "\n"))
	}
	k.run("scale", "rc", "web-rc", "--replicas=2")
	readyIs("web-rc", 2)
	testenv.Eventually(t, time.Minute, "2 pods of web-rc", func() bool { return len(activePods(podsWith(ctx, t, cs, "app=web-rc"))) == 2 })

	// Orphan: the pods stay, free.
	k.run("delete", "rc", "web-rc", "--cascade=orphan")
	testenv.Eventually(t, time.Minute, "web-rc's pods orphaned", func() bool {
		pods := activePods(podsWith(ctx, t, cs, "app=web-rc"))
		for _, p := range pods {
			if len(p.OwnerReferences) > 0 {
				return false
			}
		}
		return len(pods) == 2
	})
	if _, err := cs.CoreV1().ReplicationControllers("default").Get(ctx, "web-rc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("web-rc after an orphan delete: %v", err)
	}
	k.run("delete", "pods", "-l", "app=web-rc", "--wait=false")

	// Foreground: kubectl returns once the RC is gone, and it goes after
	// its pods.
	k.run("create", "-f", manifest("fg-rc", 3))
	readyIs("fg-rc", 3)
	start := time.Now()
	k.run("delete", "rc", "fg-rc", "--cascade=foreground", "--timeout=2m")
	if left := podsWith(ctx, t, cs, "app=fg-rc"); len(left) != 0 {
		t.Fatalf("%d pods of fg-rc left after its foreground deletion", len(left))
	}
	t.Logf("kubectl delete rc --cascade=foreground of 3 running pods returned after %v", time.Since(start).Round(time.Millisecond))
}

func activePods(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// Three ConfigMaps owning each other in a ring, every reference blocking:
// one deleted in the foreground, all go.
func ownershipRing(ctx context.Context, t *testing.T, cs kubernetes.Interface, k kubectl) {
	cms := cs.CoreV1().ConfigMaps("default")
	var ring []*corev1.ConfigMap
	for i := range 3 {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ring-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, cm)
	}
	for i, cm := range ring {
		owner := ring[(i+2)%3] // ring-0 ← ring-2, ring-1 ← ring-0, ring-2 ← ring-1
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: ptr.To(true)}}
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	k.run("delete", "configmap", "ring-0", "--cascade=foreground", "--timeout=2m")
	testenv.Eventually(t, time.Minute, "the whole ring gone", func() bool {
		for _, cm := range ring {
			if _, err := cms.Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
	t.Logf("a ring of 3 ConfigMaps was gone %v after kubectl delete --cascade=foreground of one", time.Since(start).Round(time.Millisecond))
}

// sliceState sums the Service's EndpointSlices: slices, endpoints, ready
// ones, terminating ones, and the largest slice.
type sliceState struct{ slices, endpoints, ready, terminating, largest int }

func slicesOf(ctx context.Context, cs kubernetes.Interface, svc string) (sliceState, error) {
	l, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return sliceState{}, err
	}
	var s sliceState
	for _, sl := range l.Items {
		s.slices++
		s.endpoints += len(sl.Endpoints)
		s.largest = max(s.largest, len(sl.Endpoints))
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				s.ready++
			}
			if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
				s.terminating++
			}
		}
	}
	return s, nil
}

const readinessGate = "kstep.dev/serving"

// openGates sets the readiness gate's condition True on n pods of app=web
// that lack it.
func openGates(ctx context.Context, t *testing.T, cs kubernetes.Interface, n int) {
	t.Helper()
	for _, p := range activePods(podsWith(ctx, t, cs, "app=web")) {
		if n == 0 {
			return
		}
		if slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == readinessGate }) {
			continue
		}
		for {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: readinessGate, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
			_, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) {
				t.Fatal(err)
			}
			cur, err := cs.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p = *cur
		}
		n--
	}
}

func endpointSlices250(ctx context.Context, t *testing.T, cs kubernetes.Interface, k kubectl) {
	l := map[string]string{"app": "web"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: l,
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](250),
		Selector: &metav1.LabelSelector{MatchLabels: l},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: readinessGate}},
			Containers:     []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}}}}}
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last sliceState
	sawTerminating := 0
	want := func(what string, ok func(s sliceState) bool) time.Duration {
		t.Helper()
		start := time.Now()
		testenv.Eventually(t, 3*time.Minute, what, func() bool {
			s, err := slicesOf(ctx, cs, "web")
			if err == nil {
				last = s
				sawTerminating = max(sawTerminating, s.terminating)
			}
			if s.largest > 100 {
				t.Fatalf("a slice of %d endpoints: at most 100", s.largest)
			}
			return err == nil && ok(s)
		})
		took := time.Since(start)
		t.Logf("%s after %v: %+v", what, took.Round(time.Millisecond), last)
		return took
	}
	// Running, gated: listed, not ready.
	want("250 endpoints in 3 slices, none ready (gated)", func(s sliceState) bool {
		return s.endpoints == 250 && s.slices == 3 && s.ready == 0
	})
	openGates(ctx, t, cs, 100)
	want("100 of 250 ready", func(s sliceState) bool { return s.endpoints == 250 && s.ready == 100 })
	openGates(ctx, t, cs, 150)
	want("250 of 250 ready", func(s sliceState) bool { return s.endpoints == 250 && s.ready == 250 && s.slices == 3 })
	out := k.run("get", "endpointslices", "-n", "default", "-l", discoveryv1.LabelServiceName+"=web")
	if rows := strings.Count(strings.TrimSpace(out), "\n"); rows != 3 || !strings.Contains(out, "ADDRESSTYPE") || !strings.Contains(out, "IPv4") {
		t.Fatalf("kubectl get endpointslices: %d rows, want 3:\n%s", rows, out)
	}
	// Deleted pods leave (terminating first, while the kubelet stops them).
	k.run("scale", "rs", "web", "--replicas=150")
	want("150 endpoints left, all ready", func(s sliceState) bool {
		return s.endpoints == 150 && s.ready == 150 && s.terminating == 0
	})
	k.run("scale", "rs", "web", "--replicas=0")
	want("no endpoints once every pod is gone", func(s sliceState) bool { return s.endpoints == 0 && s.ready == 0 })
	t.Logf("at most %d endpoints were seen terminating at once while pods went", sawTerminating)
	k.run("delete", "rs", "web")
}
