package namespace

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func TestUncovered(t *testing.T) {
	served := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Verbs: []string{"delete", "deletecollection", "list"}},
			{Name: "pods/status", Namespaced: true, Verbs: []string{"get", "update"}},
			{Name: "events", Namespaced: true, Verbs: []string{"delete", "list"}},
			{Name: "widgets", Namespaced: true, Verbs: []string{"create", "delete", "list"}},
			{Name: "readonly", Namespaced: true, Verbs: []string{"get", "list"}},
			{Name: "nodes", Namespaced: false, Verbs: []string{"delete"}},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Namespaced: true, Verbs: []string{"delete", "list"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "gadgets", Namespaced: true, Verbs: []string{"deletecollection"}},
		}},
	}
	got := uncovered(served, contents())
	if want := []string{"gadgets.example.com", "widgets"}; !slices.Equal(got, want) {
		t.Fatalf("uncovered = %v, want %v", got, want)
	}
}

func TestUnservedPath(t *testing.T) {
	path := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{}}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"404 for the path (kstep today)", path, true},
		{"404 for the path, no details", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 404, Reason: metav1.StatusReasonNotFound}}, true},
		{"the namespace is gone", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "x"), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "namespaces"}, "x", errors.New("stale")), false},
		{"not an API error", errors.New("boom"), false},
	} {
		if got := unservedPath(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

var podSpec = corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kstep/workload"}}}

// fill creates one object or more of every namespaced resource kstep
// serves in ns: bound pods (graceful deletion, ended by the stand-in
// kubelet), an unbound pod (deleted at once), and the rest. It returns
// the names of the bound pods.
func fill(t *testing.T, c *testenv.ControllerCluster, ns string) []string {
	t.Helper()
	ctx := c.Ctx
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: podSpec}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: sel, Template: tmpl}}, metav1.CreateOptions{}))
	must(c.Client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: sel, Template: tmpl}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](0), Selector: tmpl.Labels, Template: tmpl.DeepCopy()}}, metav1.CreateOptions{}))
	var bound []string
	for i := range 3 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bound-%d", i)}, Spec: *podSpec.DeepCopy()}
		p.Spec.NodeName = "n1"
		must(c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}))
		bound = append(bound, p.Name)
	}
	must(c.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: podSpec}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "svc"}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{}))
	must(c.Client.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{}))
	must(c.Client.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"}, Reason: "Test", Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}, metav1.CreateOptions{}))
	testenv.Eventually(t, 10*time.Second, "bound pods running", func() (bool, error) {
		for _, name := range bound {
			p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning {
				return false, err
			}
		}
		return true, nil
	})
	return bound
}

// left lists what remains in ns, resource by resource, through the API.
func left(c *testenv.ControllerCluster, ns string) ([]string, error) {
	var out []string
	for _, r := range contents() {
		total, _, err := r.client(c.Client, ns).count(c.Ctx, true)
		if err != nil {
			return nil, err
		}
		if total > 0 {
			out = append(out, fmt.Sprintf("%s=%d", r.gr, total))
		}
	}
	return out, nil
}

// gracefulPods watches ns and records the pods seen with a
// deletionTimestamp before they went: deleted through the API, as a
// kubelet-visible graceful deletion, not removed under it.
type gracefulPods struct {
	mu       sync.Mutex
	graceful map[string]bool
	deleted  map[string]bool
}

func watchPods(t *testing.T, c *testenv.ControllerCluster, ns string) *gracefulPods {
	t.Helper()
	w, err := c.Client.CoreV1().Pods(ns).Watch(c.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	g := &gracefulPods{graceful: map[string]bool{}, deleted: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			g.mu.Lock()
			if p.DeletionTimestamp != nil && ev.Type == watch.Modified {
				g.graceful[p.Name] = true
			}
			if ev.Type == watch.Deleted {
				g.deleted[p.Name] = true
			}
			g.mu.Unlock()
		}
	}()
	return g
}

func (g *gracefulPods) sawGraceful(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.graceful[name]
}

// Emptying and finalizing, step by step, on a namespace that is not being
// deleted: the apiserver's own namespace loop (namespaces.go) only acts on
// terminating namespaces, so here every effect is this controller's.
func TestEmptyAndFinalizeThroughTheAPI(t *testing.T) {
	c := testenv.StartControllerCluster(t, "ns")
	nc := New(c.Controllers).(*Controller) // not running: the test drives it
	ns := "contents"
	if _, err := c.Client.CoreV1().Namespaces().Create(c.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bound := fill(t, c, ns)
	held := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"kstep.dev/test-hold"}}, Spec: podSpec}
	if _, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := watchPods(t, c, ns)

	remaining, err := nc.empty(c.Ctx, ns)
	if err != nil || len(remaining) == 0 {
		t.Fatalf("first pass: %v %v; want content reported as remaining", remaining, err)
	}
	testenv.Eventually(t, 20*time.Second, "only the held pod left", func() (bool, error) {
		remaining, err := nc.empty(c.Ctx, ns)
		return err == nil && slices.Equal(remaining, []string{"pods=1"}), fmt.Errorf("%v %v", remaining, err)
	})
	for _, name := range bound {
		if !pods.sawGraceful(name) {
			t.Errorf("bound pod %s went without a graceful deletion", name)
		}
	}
	if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "empty", func() (bool, error) {
		remaining, err := nc.empty(c.Ctx, ns)
		return err == nil && len(remaining) == 0, fmt.Errorf("%v %v", remaining, err)
	})

	got, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.finalize(c.Ctx, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("namespaces/finalize served: %v", !nc.finalizeUnserved.Load())
	got, err = c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("an active namespace must survive finalize: %v", err)
	}
	if slices.Contains(got.Spec.Finalizers, corev1.FinalizerKubernetes) {
		t.Fatalf("spec.finalizers = %v after finalize", got.Spec.Finalizers)
	}
}

func TestNamespaceDeletion(t *testing.T) {
	c := testenv.StartControllerCluster(t, "ns", New)
	ns, keep := "doomed", "kept"
	for _, name := range []string{ns, keep} {
		if _, err := c.Client.CoreV1().Namespaces().Create(c.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound := fill(t, c, ns)
	fill(t, c, keep)
	// A pod that cannot finish going until the test lets it.
	held := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"kstep.dev/test-hold"}}, Spec: podSpec}
	if _, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := watchPods(t, c, ns)

	if err := c.Client.CoreV1().Namespaces().Delete(c.Ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 1500*time.Millisecond, "namespace never gone with content left", func() (bool, error) {
		_, nsErr := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
		_, podErr := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "held", metav1.GetOptions{})
		return !apierrors.IsNotFound(nsErr) || apierrors.IsNotFound(podErr), fmt.Errorf("namespace gone, pod held left: %v", podErr)
	})
	// Nothing but the apiserver's own loop (cluster/apiserver/namespaces.go,
	// which deletes content in etcd regardless of finalizers) removes the
	// held pod. Without that loop, the emptying is this controller's alone
	// and can be checked closely.
	_, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "held", metav1.GetOptions{})
	apiserverLoop := apierrors.IsNotFound(err)
	if apiserverLoop {
		t.Log("the apiserver emptied the namespace itself (its finalizeNamespaces loop); checking the end state only")
	} else {
		got, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
		if err != nil || got.Status.Phase != corev1.NamespaceTerminating || !slices.Contains(got.Spec.Finalizers, corev1.FinalizerKubernetes) {
			t.Fatalf("namespace with content left: %v %+v, want Terminating with its finalizer", err, got)
		}
		if left, err := left(c, ns); err != nil || !slices.Equal(left, []string{"pods=1"}) {
			t.Fatalf("left %v (%v), want only the held pod", left, err)
		}
		for _, name := range bound {
			if !pods.sawGraceful(name) {
				t.Errorf("bound pod %s went without a graceful deletion", name)
			}
		}
		if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, "namespace gone", func() (bool, error) {
		_, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	if left, err := left(c, ns); err != nil || len(left) != 0 {
		t.Fatalf("the deleted namespace left %v (%v)", left, err)
	}

	if _, err := c.Client.CoreV1().Namespaces().Get(c.Ctx, keep, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	left, err := left(c, keep)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"deployments.apps=1", "replicasets.apps=1", "replicationcontrollers=1", "pods=4", "services=1", "endpoints=1",
		"configmaps=1", "secrets=1", "serviceaccounts=1", "leases.coordination.k8s.io=1", "events=1"}; !slices.Equal(left, want) {
		t.Fatalf("an active namespace was touched: %v, want %v", left, want)
	}
}

// Every namespaced resource the apiserver serves is emptied.
func TestContentsCoverTheServedAPI(t *testing.T) {
	c := testenv.StartControllerCluster(t, "ns")
	served, err := c.Client.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	if missing := uncovered(served, contents()); len(missing) > 0 {
		t.Fatalf("served namespaced resources a deleted namespace would leave behind: %v", missing)
	}
}
