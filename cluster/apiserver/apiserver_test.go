package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

type env struct {
	t    *testing.T
	etcd *clientv3.Client
	api  *testenv.APIServer
	cs   *kubernetes.Clientset
}

func newEnv(t *testing.T) *env {
	t.Helper()
	url, cli := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs, err := kubernetes.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, etcd: cli, api: api, cs: cs}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}},
	}
}

func testRS(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}},
			},
		},
	}
}

// etcdKeys lists the keys under prefix straight from etcd.
func (e *env) etcdKeys(prefix string) []string {
	resp, err := e.etcd.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Key))
	}
	return out
}

func TestPodLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")

	created, err := pods.Create(ctx, testPod("p1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("system fields not filled: %+v", created.ObjectMeta)
	}
	if created.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %q, want Pending", created.Status.Phase)
	}
	if created.Spec.RestartPolicy != corev1.RestartPolicyAlways || created.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("defaults not applied: %+v", created.Spec)
	}
	// resourceVersion IS etcd's mod revision.
	kv, err := e.etcd.Get(ctx, "/registry/pods/default/p1")
	if err != nil || len(kv.Kvs) != 1 {
		t.Fatalf("etcd get: %v %v", kv, err)
	}
	if fmt.Sprint(kv.Kvs[0].ModRevision) != created.ResourceVersion {
		t.Errorf("resourceVersion %s, etcd mod revision %d", created.ResourceVersion, kv.Kvs[0].ModRevision)
	}

	if _, err := pods.Create(ctx, testPod("p1"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}

	// Update, then a stale update gets 409.
	upd := created.DeepCopy()
	upd.Labels["tier"] = "front"
	updated, err := pods.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == created.ResourceVersion {
		t.Fatal("update did not change resourceVersion")
	}
	stale := created.DeepCopy()
	stale.Labels["tier"] = "back"
	if _, err := pods.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want 409 Conflict, got %v", err)
	}

	// Patches of the three kinds.
	for _, tc := range []struct {
		pt    types.PatchType
		patch string
		label string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"m":"1"}}}`, "m"},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"s":"1"}}}`, "s"},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/j","value":"1"}]`, "j"},
	} {
		p, err := pods.Patch(ctx, "p1", tc.pt, []byte(tc.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.pt, err)
		}
		if p.Labels[tc.label] != "1" {
			t.Errorf("%s: label %s missing: %v", tc.pt, tc.label, p.Labels)
		}
	}

	// A no-op update writes nothing.
	cur, _ := pods.Get(ctx, "p1", metav1.GetOptions{})
	same, err := pods.Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != cur.ResourceVersion {
		t.Errorf("no-op update changed resourceVersion %s -> %s", cur.ResourceVersion, same.ResourceVersion)
	}

	// Status: a status write keeps the spec; a main write keeps the status.
	cur.Status.Phase = corev1.PodRunning
	cur.Spec.ActiveDeadlineSeconds = ptr.To[int64](100)
	st, err := pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status.Phase != corev1.PodRunning || st.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("status update: phase %s, deadline %v", st.Status.Phase, st.Spec.ActiveDeadlineSeconds)
	}

	if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "p1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want 404, got %v", err)
	}
}

func TestBindingAndGracefulDelete(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("b1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b1"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	if err := pods.Bind(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := pods.Get(ctx, "b1", metav1.GetOptions{})
	if p.Spec.NodeName != "n1" {
		t.Fatalf("nodeName = %q", p.Spec.NodeName)
	}
	bind.Target.Name = "n2"
	if err := pods.Bind(ctx, bind, metav1.CreateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("second bind: want 409, got %v", err)
	}
	// A bound pod is deleted gracefully: it stays, marked, until the
	// kubelet deletes it with grace 0.
	if err := pods.Delete(ctx, "b1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := pods.Get(ctx, "b1", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete: %v %+v", err, p.ObjectMeta)
	}
	if err := pods.Delete(ctx, "b1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "b1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after grace 0: want 404, got %v", err)
	}
}

func TestScaleAndGeneration(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	rss := e.cs.AppsV1().ReplicaSets("default")
	rs, err := rss.Create(ctx, testRS("web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Generation != 1 {
		t.Errorf("generation = %d, want 1", rs.Generation)
	}
	sc, err := rss.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 3 || sc.Status.Selector != "app=web" {
		t.Fatalf("scale: %v %+v", err, sc)
	}
	sc.Spec.Replicas = 7
	if _, err := rss.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs, _ = rss.Get(ctx, "web", metav1.GetOptions{})
	if *rs.Spec.Replicas != 7 || rs.Generation != 2 {
		t.Errorf("after scale: replicas %d generation %d", *rs.Spec.Replicas, rs.Generation)
	}
	// A stale Scale is a conflict.
	if _, err := rss.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale scale: want 409, got %v", err)
	}
	// A label change is not a spec change.
	rs.Labels = map[string]string{"x": "y"}
	rs, err = rss.Update(ctx, rs, metav1.UpdateOptions{})
	if err != nil || rs.Generation != 2 {
		t.Errorf("metadata update: %v generation %d", err, rs.Generation)
	}
	// Patching scale, as kubectl scale does.
	if _, err := rss.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	rs, _ = rss.Get(ctx, "web", metav1.GetOptions{})
	if *rs.Spec.Replicas != 2 {
		t.Errorf("after scale patch: %d", *rs.Spec.Replicas)
	}
}

func TestListPagingAndSelectors(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")
	for i := range 25 {
		p := testPod(fmt.Sprintf("p%02d", i))
		if i%5 == 0 {
			p.Labels["five"] = "yes"
		}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	opts := metav1.ListOptions{Limit: 10}
	pages := 0
	for {
		l, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if len(names) != 25 || pages != 3 {
		t.Fatalf("paged list: %d items in %d pages", len(names), pages)
	}
	for _, rv := range []string{"", "0"} {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "five=yes", ResourceVersion: rv})
		if err != nil || len(l.Items) != 5 {
			t.Fatalf("label selector rv=%q: %v %d", rv, err, len(l.Items))
		}
		l, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=p07", ResourceVersion: rv})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("field selector rv=%q: %v %d", rv, err, len(l.Items))
		}
		l, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=", ResourceVersion: rv})
		if err != nil || len(l.Items) != 25 {
			t.Fatalf("nodeName selector rv=%q: %v %d", rv, err, len(l.Items))
		}
	}
	if _, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported field: want 400, got %v", err)
	}
	// Exact list at an older revision sees the older state.
	l, _ := pods.List(ctx, metav1.ListOptions{})
	if err := pods.Delete(ctx, "p00", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := pods.List(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil || len(old.Items) != 25 {
		t.Fatalf("exact list: %v %d", err, len(old.Items))
	}
}

func TestNamespaces(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if _, err := e.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("system namespace %s: %v", ns, err)
		}
	}
	if _, err := e.cs.CoreV1().Pods("nope").Create(ctx, testPod("x"), metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("create in missing namespace: want 404, got %v", err)
	}
	if len(e.etcdKeys("/registry/pods/nope/")) != 0 {
		t.Fatal("a pod was written into a missing namespace")
	}
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.cs.CoreV1().Pods("team").Create(ctx, testPod(fmt.Sprint("p", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.cs.CoreV1().ConfigMaps("team").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.cs.CoreV1().Namespaces().Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Terminating: held by the "kubernetes" finalizer until the namespace
	// controller has emptied it; new content is refused meanwhile.
	ns, err := e.cs.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("deleted namespace: %v %+v", err, ns)
	}
	if _, err := e.cs.CoreV1().Pods("team").Create(ctx, testPod("late"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("create in terminating namespace: want 403, got %v", err)
	}
	// Other writes to it neither remove it nor its finalizer.
	ns, err = e.cs.CoreV1().Namespaces().Patch(ctx, "team", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}},"spec":{"finalizers":[]}}`), metav1.PatchOptions{})
	if err != nil || len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("patching a terminating namespace: %v %+v", err, ns)
	}
	if len(e.etcdKeys("/registry/pods/team/")) != 3 {
		t.Fatal("the apiserver itself must not empty a namespace")
	}
	// namespaces/finalize is the one way to drop the finalizer; then it goes.
	ns.Spec.Finalizers = nil
	if _, err := e.cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("finalized namespace: want 404, got %v", err)
	}
}

func TestDeletePropagationMarks(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	rss := e.cs.AppsV1().ReplicaSets("default")
	if _, err := rss.Create(ctx, testRS("orph", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rss.Delete(ctx, "orph", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	rs, err := rss.Get(ctx, "orph", metav1.GetOptions{})
	if err != nil || rs.DeletionTimestamp == nil || !contains(rs.Finalizers, metav1.FinalizerOrphanDependents) {
		t.Fatalf("orphan delete should mark and add the orphan finalizer: %v %+v", err, rs.ObjectMeta)
	}
	// Removing the finalizer (what the garbage collector does) completes it.
	rs.Finalizers = nil
	if _, err := rss.Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rss.Get(ctx, "orph", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after last finalizer: want 404, got %v", err)
	}
	// Preconditions.
	if _, err := rss.Create(ctx, testRS("pre", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = rss.Delete(ctx, "pre", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("wrong"))}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("uid precondition: want 409, got %v", err)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestEventsBothAPIs(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"}, Reason: "Scheduled", Message: "hello", Type: "Normal"}
	if _, err := e.cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := e.cs.EventsV1().Events("default").Get(ctx, "ev1", metav1.GetOptions{})
	if err != nil || got.Note != "hello" || got.Regarding.Name != "p" {
		t.Fatalf("events.k8s.io view: %v %+v", err, got)
	}
	l, err := e.cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("events.k8s.io list: %v %v", err, l)
	}
}

func TestServiceClusterIP(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	got, err := e.cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Spec.ClusterIP, "10.96.") || got.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Fatalf("service: %+v", got.Spec)
	}
}

// A Service and its cluster IP are one etcd transaction: the IP's key is
// written at the Service's resourceVersion and removed at its delete's, a
// create that fails (the name taken, the IP held) writes neither at any
// revision (etcd's history says so; the apiserver's own background
// writes may come in between), and a deleted Service's IP can be taken
// again at once.
func TestServiceClusterIPIsWrittenWithTheService(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	svcs := e.cs.CoreV1().Services("default")
	// keysAt: every Service and IP key with its mod revision, as of rev
	// (0: now), and the revision read; but default/kubernetes's, which the
	// apiserver writes on its own while it starts.
	keysAt := func(rev int64) (map[string]int64, int64) {
		t.Helper()
		out := map[string]int64{}
		var at int64
		for _, prefix := range []string{"/registry/serviceips/", "/registry/services/"} {
			opts := []clientv3.OpOption{clientv3.WithPrefix()}
			if rev > 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			resp, err := e.etcd.Get(ctx, prefix, opts...)
			if err != nil {
				t.Fatal(err)
			}
			at = resp.Header.Revision
			for _, kv := range resp.Kvs {
				if k := string(kv.Key); k != "/registry/serviceips/10.96.0.1" && k != "/registry/services/default/kubernetes" {
					out[k] = kv.ModRevision
				}
			}
		}
		if rev > 0 {
			at = rev
		}
		return out, at
	}
	web := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	got, err := svcs.Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip, ipKey := got.Spec.ClusterIP, "/registry/serviceips/"+got.Spec.ClusterIP
	keys, before := keysAt(0)
	if strconv.FormatInt(keys[ipKey], 10) != got.ResourceVersion {
		t.Fatalf("IP %s written at revision %d, the Service at %s: want one transaction", ip, keys[ipKey], got.ResourceVersion)
	}
	if _, err := svcs.Create(ctx, web, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create of web: %v, want AlreadyExists", err)
	}
	taker := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taker"}, Spec: corev1.ServiceSpec{
		ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := svcs.Create(ctx, taker, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("a create asking for web's IP: %v, want Invalid", err)
	}
	_, after := keysAt(0)
	for r := before + 1; r <= after; r++ {
		if at, _ := keysAt(r); !maps.Equal(at, keys) {
			t.Fatalf("failed creates wrote: at revision %d the Service and IP keys are %v, were %v", r, at, keys)
		}
	}
	if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The revision at which web's key went must be the one at which its
	// IP's went.
	_, now := keysAt(0)
	gone := map[string]int64{}
	for r := after + 1; r <= now; r++ {
		at, _ := keysAt(r)
		for _, k := range []string{ipKey, "/registry/services/default/web"} {
			if _, held := at[k]; !held && gone[k] == 0 {
				gone[k] = r
			}
		}
	}
	if len(gone) != 2 || gone[ipKey] != gone["/registry/services/default/web"] {
		t.Fatalf("after web's delete: keys gone at revisions %v, want both at one", gone)
	}
	if got, err := svcs.Create(ctx, taker, metav1.CreateOptions{}); err != nil || got.Spec.ClusterIP != ip {
		t.Fatalf("a create asking for the freed IP %s: %v %v", ip, got.Spec.ClusterIP, err)
	}
}

// A Service turned ExternalName gives its cluster IP up, and one turned
// back takes a new one, each in the update's own transaction.
func TestServiceTypeChangeTakesAndGivesUpItsClusterIP(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	svcs := e.cs.CoreV1().Services("default")
	heldAt := func(ip string) int64 {
		t.Helper()
		resp, err := e.etcd.Get(ctx, "/registry/serviceips/"+ip)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0
		}
		return resp.Kvs[0].ModRevision
	}
	svc, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "flip"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "flip"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := svc.Spec.ClusterIP
	svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
	if svc, err = svcs.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "" || heldAt(first) != 0 {
		t.Fatalf("turned ExternalName: clusterIP %q, its old IP %s still held at %d", svc.Spec.ClusterIP, first, heldAt(first))
	}
	svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
	if svc, err = svcs.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	if !strings.HasPrefix(ip, "10.96.") || strconv.FormatInt(heldAt(ip), 10) != svc.ResourceVersion {
		t.Fatalf("turned ClusterIP: clusterIP %q held at %d, the update at %s: want one transaction", ip, heldAt(ip), svc.ResourceVersion)
	}
	if err := svcs.Delete(ctx, "flip", metav1.DeleteOptions{}); err != nil || heldAt(ip) != 0 {
		t.Fatalf("delete: %v; IP %s held at %d", err, ip, heldAt(ip))
	}
}

// raw is a response of the apiserver to a hand-made request.
func statusOf(t *testing.T, body []byte) metav1.Status {
	var s metav1.Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("body is not a Status: %v: %s", err, body)
	}
	return s
}

var _ = errors.New
