package apiserver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/resourcequota"
	"github.com/kstep-dev/kstep/internal/testenv"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// runQuotaController runs the ResourceQuota controller on the env's
// apiserver: it fills status.used and releases usage on deletes.
func (e *env) runQuotaController(t *testing.T) {
	cc := testenv.ControllerContext(t, e.api.Config)
	testenv.RunController(t, resourcequota.New(cc), cc)
}

// quotaUsedIs waits until the quota's status.used holds exactly want
// (name: quantity).
func quotaUsedIs(t *testing.T, cs kubernetes.Interface, ns, name string, want map[string]string) {
	t.Helper()
	testenv.Eventually(t, 15*time.Second, fmt.Sprintf("%s/%s status.used %v", ns, name, want), func() (bool, error) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := map[string]string{}
		for k, v := range q.Status.Used {
			got[string(k)] = v.String()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return false, fmt.Errorf("status.used is %v", got)
		}
		return true, nil
	})
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "b"}}
}

// ResourceQuota counts and limits every resource, not only pods: the
// standard names (configmaps, replicationcontrollers, services.nodeports,
// ...) and count/<resource>.<group>, refused with upstream's 403 and
// message, nothing written; a dry run charges nothing; status.used is
// right for every named resource; a delete releases its unit through the
// controller's recount.
func TestResourceQuotaEveryResource(t *testing.T) {
	e := newEnv(t)
	// Longer than ctxT's 30 s: a busy machine takes that for the kubectl
	// runs alone.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.namespace(t, "q1")
	e.runQuotaController(t)
	k := e.kubectl(t)
	if out, err := k("", "-n", "q1", "create", "quota", "q",
		"--hard=configmaps=3,replicationcontrollers=1,count/secrets=2,count/deployments.apps=1,services.nodeports=1,services.loadbalancers=0"); err != nil {
		t.Fatalf("kubectl create quota: %v\n%s", err, out)
	}
	quotaUsedIs(t, e.cs, "q1", "q", map[string]string{"configmaps": "0", "replicationcontrollers": "0", "count/secrets": "0",
		"count/deployments.apps": "0", "services.nodeports": "0", "services.loadbalancers": "0"})

	// A dry run is checked and charges nothing.
	if _, err := e.cs.CoreV1().ConfigMaps("q1").Create(ctx, configMap("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	for i := 1; i <= 3; i++ {
		if out, err := k("", "-n", "q1", "create", "cm", fmt.Sprintf("c%d", i), "--from-literal=a=b"); err != nil {
			t.Fatalf("create cm c%d: %v\n%s", i, err, out)
		}
	}
	out, err := k("", "-n", "q1", "create", "cm", "c4", "--from-literal=a=b")
	want := `configmaps "c4" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3`
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("4th ConfigMap: want %q, got %v\n%s", want, err, out)
	}
	_, err = e.cs.CoreV1().ConfigMaps("q1").Create(ctx, configMap("c4"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("dry run over quota:\n got %v\nwant %s", err, want)
	}

	rc := func(name string) *corev1.ReplicationController {
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](0), Selector: map[string]string{"app": name},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	}
	if _, err := e.cs.CoreV1().ReplicationControllers("q1").Create(ctx, rc("r1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.cs.CoreV1().ReplicationControllers("q1").Create(ctx, rc("r2"), metav1.CreateOptions{})
	if want := `replicationcontrollers "r2" is forbidden: exceeded quota: q, requested: replicationcontrollers=1, used: replicationcontrollers=1, limited: replicationcontrollers=1`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("2nd RC:\n got %v\nwant %s", err, want)
	}

	for i := 1; i <= 2; i++ {
		if out, err := k("", "-n", "q1", "create", "secret", "generic", fmt.Sprintf("s%d", i), "--from-literal=a=b"); err != nil {
			t.Fatalf("create secret s%d: %v\n%s", i, err, out)
		}
	}
	out, err = k("", "-n", "q1", "create", "secret", "generic", "s3", "--from-literal=a=b")
	if want := `secrets "s3" is forbidden: exceeded quota: q, requested: count/secrets=1, used: count/secrets=2, limited: count/secrets=2`; err == nil || !strings.Contains(out, want) {
		t.Fatalf("3rd Secret: want %q, got %v\n%s", want, err, out)
	}

	deploy := func(name string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	}
	if _, err := e.cs.AppsV1().Deployments("q1").Create(ctx, deploy("d1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.cs.AppsV1().Deployments("q1").Create(ctx, deploy("d2"), metav1.CreateOptions{})
	if want := `deployments.apps "d2" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("2nd Deployment:\n got %v\nwant %s", err, want)
	}

	svc := func(name string, typ corev1.ServiceType, ports int) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": "x"}}}
		for i := range ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: int32(80 + i)})
		}
		return s
	}
	_, err = e.cs.CoreV1().Services("q1").Create(ctx, svc("np2", corev1.ServiceTypeNodePort, 2), metav1.CreateOptions{})
	if want := `services "np2" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("NodePort Service with 2 ports:\n got %v\nwant %s", err, want)
	}
	_, err = e.cs.CoreV1().Services("q1").Create(ctx, svc("lb", corev1.ServiceTypeLoadBalancer, 1), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: q, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0") {
		t.Fatalf("LoadBalancer Service: got %v", err)
	}
	for _, s := range []*corev1.Service{svc("np1", corev1.ServiceTypeNodePort, 1), svc("cip", corev1.ServiceTypeClusterIP, 2)} {
		if _, err := e.cs.CoreV1().Services("q1").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("Service %s: %v", s.Name, err)
		}
	}

	// Nothing refused (nor the dry runs) was written.
	for prefix, n := range map[string]int{"/registry/configmaps/q1/": 3, "/registry/replicationcontrollers/q1/": 1,
		"/registry/secrets/q1/": 2, "/registry/deployments/q1/": 1, "/registry/services/q1/": 2} {
		if keys := e.etcdKeys(prefix); len(keys) != n {
			t.Errorf("etcd holds %v, want %d", keys, n)
		}
	}
	used := map[string]string{"configmaps": "3", "replicationcontrollers": "1", "count/secrets": "2",
		"count/deployments.apps": "1", "services.nodeports": "1", "services.loadbalancers": "0"}
	quotaUsedIs(t, e.cs, "q1", "q", used)
	// A recount (a new name in spec.hard makes one) finds the same.
	q, err := e.cs.CoreV1().ResourceQuotas("q1").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard["services"] = resource.MustParse("10")
	if _, err := e.cs.CoreV1().ResourceQuotas("q1").Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	used["services"] = "2"
	quotaUsedIs(t, e.cs, "q1", "q", used)

	// A delete releases its unit once the controller recounts.
	if err := e.cs.CoreV1().ConfigMaps("q1").Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	used["configmaps"] = "2"
	quotaUsedIs(t, e.cs, "q1", "q", used)
	if _, err := e.cs.CoreV1().ConfigMaps("q1").Create(ctx, configMap("c5"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after a delete: %v", err)
	}
	used["configmaps"] = "3"
	quotaUsedIs(t, e.cs, "q1", "q", used)
}

// Twenty concurrent creates against a quota of ten, spread over two
// apiservers on one etcd: exactly ten are admitted, whatever the
// interleaving, and status.used says 10. Without the controller: the
// apiservers count the quota's first usage themselves.
func TestResourceQuotaRace(t *testing.T) {
	url, cli := testenv.Etcd(t)
	a := testenv.StartAPIServer(t, url, nil)
	b := testenv.StartAPIServer(t, url, nil)
	csA, csB := kubernetes.NewForConfigOrDie(a.Config), kubernetes.NewForConfigOrDie(b.Config)
	ctx := ctxT(t)
	if _, err := csA.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "race"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := csA.CoreV1().ResourceQuotas("race").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both apiservers must know the quota (their caches), as they would
	// a moment after it is made.
	for _, cs := range []*kubernetes.Clientset{csA, csB} {
		testenv.Eventually(t, 10*time.Second, "quota cached", func() (bool, error) {
			l, err := cs.CoreV1().ResourceQuotas("race").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			return err == nil && len(l.Items) == 1, err
		})
	}
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 20 {
		cs := csA
		if i%2 == 1 {
			cs = csB
		}
		wg.Go(func() {
			<-start
			_, err := cs.CoreV1().ConfigMaps("race").Create(ctx, configMap(fmt.Sprintf("c%d", i)), metav1.CreateOptions{})
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: q, requested: configmaps=1, used: configmaps=10, limited: configmaps=10"):
				refused.Add(1)
			default:
				t.Errorf("create c%d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	resp, err := cli.Get(ctx, "/registry/configmaps/race/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 concurrent creates under configmaps=10 on 2 apiservers: %d admitted, %d refused, %d in etcd", ok.Load(), refused.Load(), len(resp.Kvs))
	if ok.Load() != 10 || refused.Load() != 10 || len(resp.Kvs) != 10 {
		t.Fatalf("20 concurrent creates under configmaps=10: %d admitted, %d refused, %d in etcd; want 10, 10, 10", ok.Load(), refused.Load(), len(resp.Kvs))
	}
	quotaUsedIs(t, csA, "race", "q", map[string]string{"configmaps": "10"})
}

// Quota scopes: a scoped quota counts only the pods that match its
// scopes (BestEffort, Terminating here), in admission and in the
// controller's recount.
func TestResourceQuotaScopes(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	e.namespace(t, "scoped")
	e.runQuotaController(t)
	for name, scope := range map[string]corev1.ResourceQuotaScope{"be": corev1.ResourceQuotaScopeBestEffort, "term": corev1.ResourceQuotaScopeTerminating} {
		if _, err := e.cs.CoreV1().ResourceQuotas("scoped").Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{scope},
				Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		quotaUsedIs(t, e.cs, "scoped", name, map[string]string{"pods": "0"})
	}
	terminating := func(p *corev1.Pod) *corev1.Pod { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](600); return p }
	for _, c := range []struct {
		pod     *corev1.Pod
		refused string
	}{
		{testPod("be1"), ""},
		{testPod("be2"), `pods "be2" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1`},
		{podWith("burst", cpu("100m"), nil), ""}, // neither scope
		{terminating(podWith("t1", cpu("100m"), nil)), ""},
		{terminating(podWith("t2", cpu("100m"), nil)), `pods "t2" is forbidden: exceeded quota: term, requested: pods=1, used: pods=1, limited: pods=1`},
	} {
		_, err := e.cs.CoreV1().Pods("scoped").Create(ctx, c.pod, metav1.CreateOptions{})
		if c.refused == "" && err != nil {
			t.Fatalf("pod %s: %v", c.pod.Name, err)
		}
		if c.refused != "" && (!apierrors.IsForbidden(err) || err.Error() != c.refused) {
			t.Fatalf("pod %s:\n got %v\nwant %s", c.pod.Name, err, c.refused)
		}
	}
	quotaUsedIs(t, e.cs, "scoped", "be", map[string]string{"pods": "1"})
	quotaUsedIs(t, e.cs, "scoped", "term", map[string]string{"pods": "1"})
	// The recount after a delete counts only the matching pods too.
	if err := e.cs.CoreV1().Pods("scoped").Delete(ctx, "be1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsedIs(t, e.cs, "scoped", "be", map[string]string{"pods": "0"})
	quotaUsedIs(t, e.cs, "scoped", "term", map[string]string{"pods": "1"})
}
