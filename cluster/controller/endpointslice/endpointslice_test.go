package endpointslice

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// holdFinalizer keeps a deleted pod terminating until the test lets go.
const holdFinalizer = "kstep.dev/test-hold"

func slicesOf(t *testing.T, c *testenv.ControllerCluster, ns, svc string) []discoveryv1.EndpointSlice {
	t.Helper()
	l, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// view is what the slices of a Service say, checked against the rules
// every slice must keep.
type view struct {
	sizes       []int // endpoints per slice, ascending
	byPod       map[string]discoveryv1.Endpoint
	portsByPod  map[string]int32
	slices      []discoveryv1.EndpointSlice
	overfilled  bool
	emptySlices int
}

func viewOf(t *testing.T, c *testenv.ControllerCluster, ns string, svc *corev1.Service, managedBy string) (view, error) {
	t.Helper()
	v := view{byPod: map[string]discoveryv1.Endpoint{}, portsByPod: map[string]int32{}}
	v.slices = slicesOf(t, c, ns, svc.Name)
	for _, s := range v.slices {
		if s.Labels[discoveryv1.LabelManagedBy] != managedBy {
			continue
		}
		if ref := metav1.GetControllerOf(&s); ref == nil || ref.UID != svc.UID || ref.Kind != "Service" {
			return v, fmt.Errorf("slice %s: controller %+v, want the Service", s.Name, ref)
		}
		if !strings.HasPrefix(s.Name, svc.Name+"-") || s.GenerateName != svc.Name+"-" {
			return v, fmt.Errorf("slice %s: generateName %q", s.Name, s.GenerateName)
		}
		if len(s.Endpoints) > 100 {
			v.overfilled = true
		}
		if len(s.Endpoints) == 0 {
			v.emptySlices++
		}
		v.sizes = append(v.sizes, len(s.Endpoints))
		for _, ep := range s.Endpoints {
			name := ep.Addresses[0]
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			if _, dup := v.byPod[name]; dup {
				return v, fmt.Errorf("endpoint %s in two slices", name)
			}
			v.byPod[name] = ep
			if len(s.Ports) == 1 && s.Ports[0].Port != nil {
				v.portsByPod[name] = *s.Ports[0].Port
			}
		}
	}
	sort.Ints(v.sizes)
	return v, nil
}

// waitView waits until the Service's slices satisfy ok, and never sees
// one over 100 endpoints or left empty on the way.
func waitView(t *testing.T, c *testenv.ControllerCluster, ns string, svc *corev1.Service, managedBy, what string, ok func(v view) error) view {
	t.Helper()
	var last view
	testenv.Eventually(t, 20*time.Second, what, func() (bool, error) {
		v, err := viewOf(t, c, ns, svc, managedBy)
		if err != nil {
			return false, err
		}
		if v.overfilled {
			t.Fatalf("a slice holds more than 100 endpoints: %v", v.sizes)
		}
		last = v
		if v.emptySlices > 0 {
			return false, fmt.Errorf("%d empty slices", v.emptySlices)
		}
		err = ok(v)
		return err == nil, err
	})
	return last
}

func createPod(t *testing.T, c *testenv.ControllerCluster, ns, name, app string, port int32, hold bool) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "kstep/workload",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}}}}}}
	if hold {
		p.Finalizers = []string{holdFinalizer}
	}
	got, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func release(t *testing.T, c *testenv.ControllerCluster, ns, name string) {
	t.Helper()
	if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setReady writes the pod's Ready condition, as a kubelet's probe would.
func setReady(t *testing.T, c *testenv.ControllerCluster, ns, name string, ready corev1.ConditionStatus) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, "status written", func() (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.PodIP == "" {
			return false, fmt.Errorf("pod %s not running yet", name)
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady || p.Status.Conditions[i].Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = ready
			}
		}
		_, err = c.Client.CoreV1().Pods(ns).UpdateStatus(c.Ctx, p, metav1.UpdateOptions{})
		return err == nil, err
	})
}

func service(t *testing.T, c *testenv.ControllerCluster, ns, name string, spec corev1.ServiceSpec) *corev1.Service {
	t.Helper()
	svc, err := c.Client.CoreV1().Services(ns).Create(c.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func httpService(app string) corev1.ServiceSpec {
	return corev1.ServiceSpec{Selector: map[string]string{"app": app},
		Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}
}

func conds(ep discoveryv1.Endpoint) string {
	b := func(p *bool) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("ready=%s serving=%s terminating=%s", b(ep.Conditions.Ready), b(ep.Conditions.Serving), b(ep.Conditions.Terminating))
}

// countConds counts the endpoints of v in each condition string.
func countConds(v view) map[string]int {
	out := map[string]int{}
	for _, ep := range v.byPod {
		out[conds(ep)]++
	}
	return out
}

const (
	readyConds       = "ready=true serving=true terminating=false"
	notReadyConds    = "ready=false serving=false terminating=false"
	terminatingConds = "ready=false serving=true terminating=true"
)

func TestEndpointSlices(t *testing.T) {
	c := testenv.StartControllerCluster(t, "eps", New)
	if _, err := c.Client.CoreV1().Nodes().Patch(c.Ctx, "n1", types.MergePatchType, []byte(`{"metadata":{"labels":{"topology.kubernetes.io/zone":"zone-a"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	const n = 250
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("web-%03d", i)
		createPod(t, c, ns, names[i], "web", 8080, true)
	}
	createPod(t, c, ns, "other", "other", 8080, false)
	// The Service comes once every pod runs with its address, so the
	// controller's first sync sees all 250 and packs them 100, 100, 50.
	// Created before, it would see them arrive in batches of any size, and
	// (as upstream) slices filled batch by batch end up in other sizes.
	testenv.Eventually(t, 30*time.Second, "250 pods running with an address", func() (bool, error) {
		l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range l.Items {
			for _, cond := range p.Status.Conditions {
				if p.Status.PodIP != "" && cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					running++
				}
			}
		}
		return running == n, nil
	})
	svc := service(t, c, ns, "web", httpService("web"))

	t.Run("250 pods: 3 slices of 100, 100 and 50", func(t *testing.T) {
		v := waitView(t, c, ns, svc, ManagedBy, "250 ready endpoints", func(v view) error {
			if !slices.Equal(v.sizes, []int{50, 100, 100}) || countConds(v)[readyConds] != n {
				return fmt.Errorf("sizes %v, conditions %v", v.sizes, countConds(v))
			}
			return nil
		})
		for _, s := range v.slices {
			if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Ports) != 1 || *s.Ports[0].Name != "http" || *s.Ports[0].Port != 8080 || *s.Ports[0].Protocol != corev1.ProtocolTCP {
				t.Errorf("slice %s: addressType %s ports %+v", s.Name, s.AddressType, s.Ports)
			}
		}
		pods, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			ep, ok := v.byPod[p.Name]
			if !ok {
				t.Fatalf("pod %s has no endpoint", p.Name)
			}
			if !slices.Equal(ep.Addresses, []string{p.Status.PodIP}) || ep.TargetRef.UID != p.UID || ep.TargetRef.Kind != "Pod" ||
				ptr.Deref(ep.NodeName, "") != "n1" || ptr.Deref(ep.Zone, "") != "zone-a" {
				t.Fatalf("endpoint %+v does not match pod %s (ip %s uid %s)", ep, p.Name, p.Status.PodIP, p.UID)
			}
		}
	})

	t.Run("nothing changed: nothing written", func(t *testing.T) {
		w, err := c.Client.DiscoveryV1().EndpointSlices(ns).Watch(c.Ctx, metav1.ListOptions{ResourceVersion: slicesRV(t, c, ns)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for _, name := range names[:5] {
			if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Client.CoreV1().Services(ns).Patch(c.Ctx, "web", types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if writes := countEvents(w, 1500*time.Millisecond); writes != 0 {
			t.Fatalf("%d slice writes after changes no slice reflects", writes)
		}
	})

	t.Run("readiness tracked", func(t *testing.T) {
		for _, name := range names[100:110] {
			setReady(t, c, ns, name, corev1.ConditionFalse)
		}
		waitView(t, c, ns, svc, ManagedBy, "10 not ready", func(v view) error {
			if cc := countConds(v); cc[notReadyConds] != 10 || cc[readyConds] != n-10 || !slices.Equal(v.sizes, []int{50, 100, 100}) {
				return fmt.Errorf("sizes %v, conditions %v", v.sizes, cc)
			}
			return nil
		})
		for _, name := range names[100:110] {
			setReady(t, c, ns, name, corev1.ConditionTrue)
		}
		waitView(t, c, ns, svc, ManagedBy, "ready again", func(v view) error {
			if cc := countConds(v); cc[readyConds] != n {
				return fmt.Errorf("conditions %v", cc)
			}
			return nil
		})
	})

	t.Run("a node's zone change reaches its endpoints", func(t *testing.T) {
		if _, err := c.Client.CoreV1().Nodes().Patch(c.Ctx, "n1", types.MergePatchType, []byte(`{"metadata":{"labels":{"topology.kubernetes.io/zone":"zone-b"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitView(t, c, ns, svc, ManagedBy, "zone-b everywhere", func(v view) error {
			for name, ep := range v.byPod {
				if ptr.Deref(ep.Zone, "") != "zone-b" {
					return fmt.Errorf("%s in zone %q", name, ptr.Deref(ep.Zone, ""))
				}
			}
			return nil
		})
	})

	t.Run("deleted pods: terminating, then gone", func(t *testing.T) {
		gone := names[:60]
		for _, name := range gone {
			if err := c.Client.CoreV1().Pods(ns).Delete(c.Ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitView(t, c, ns, svc, ManagedBy, "60 terminating", func(v view) error {
			if cc := countConds(v); cc[terminatingConds] != 60 || cc[readyConds] != n-60 {
				return fmt.Errorf("sizes %v, conditions %v", v.sizes, cc)
			}
			return nil
		})
		for _, name := range gone {
			release(t, c, ns, name)
		}
		waitView(t, c, ns, svc, ManagedBy, "190 endpoints", func(v view) error {
			if len(v.byPod) != n-60 || countConds(v)[readyConds] != n-60 || len(v.sizes) > 3 {
				return fmt.Errorf("sizes %v, conditions %v", v.sizes, countConds(v))
			}
			return nil
		})
	})

	t.Run("new pods fill slices with room before any is created", func(t *testing.T) {
		before := len(slicesOf(t, c, ns, "web"))
		for i := n; i < n+50; i++ {
			createPod(t, c, ns, fmt.Sprintf("web-%03d", i), "web", 8080, true)
		}
		v := waitView(t, c, ns, svc, ManagedBy, "240 endpoints", func(v view) error {
			if countConds(v)[readyConds] != n-10 {
				return fmt.Errorf("sizes %v, conditions %v", v.sizes, countConds(v))
			}
			return nil
		})
		if len(v.sizes) > before {
			t.Fatalf("slices %v: %d created though %d had room", v.sizes, len(v.sizes)-before, before)
		}
	})

	t.Run("slices left empty are deleted", func(t *testing.T) {
		pods, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items[30:] {
			if err := c.Client.CoreV1().Pods(ns).Delete(c.Ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			release(t, c, ns, p.Name)
		}
		waitView(t, c, ns, svc, ManagedBy, "30 endpoints", func(v view) error {
			if len(v.byPod) != 30 || len(v.sizes) > 3 {
				return fmt.Errorf("sizes %v", v.sizes)
			}
			return nil
		})
	})

	t.Run("slices go with their Service", func(t *testing.T) {
		if err := c.Client.CoreV1().Services(ns).Delete(c.Ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "no slices", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "web"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
	})
}

func slicesRV(t *testing.T, c *testenv.ControllerCluster, ns string) string {
	t.Helper()
	l, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(c.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.ResourceVersion
}

// countEvents counts w's events (bookmarks aside) for d.
func countEvents(w watch.Interface, d time.Duration) int {
	n := 0
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return n
			}
			if ev.Type != watch.Bookmark {
				n++
			}
		case <-deadline:
			return n
		}
	}
}

func TestEndpointSlicePorts(t *testing.T) {
	c := testenv.StartControllerCluster(t, "eps", New)
	ns := c.Namespace(t)

	t.Run("a named targetPort resolves per pod", func(t *testing.T) {
		svc := service(t, c, ns, "mixed", httpService("mixed"))
		createPod(t, c, ns, "mixed-a", "mixed", 8080, false)
		createPod(t, c, ns, "mixed-b", "mixed", 9090, false)
		createPod(t, c, ns, "mixed-c", "mixed", 9090, false)
		waitView(t, c, ns, svc, ManagedBy, "two port sets", func(v view) error {
			want := map[string]int32{"mixed-a": 8080, "mixed-b": 9090, "mixed-c": 9090}
			if len(v.sizes) != 2 || len(v.portsByPod) != 3 {
				return fmt.Errorf("sizes %v ports %v", v.sizes, v.portsByPod)
			}
			for k, p := range want {
				if v.portsByPod[k] != p {
					return fmt.Errorf("ports %v, want %v", v.portsByPod, want)
				}
			}
			return nil
		})
	})

	t.Run("publishNotReadyAddresses makes not-ready pods ready", func(t *testing.T) {
		spec := httpService("pub")
		spec.PublishNotReadyAddresses = true
		svc := service(t, c, ns, "pub", spec)
		createPod(t, c, ns, "pub-0", "pub", 8080, false)
		setReady(t, c, ns, "pub-0", corev1.ConditionFalse)
		consistentlyView := func(v view) error {
			if ep, ok := v.byPod["pub-0"]; !ok || conds(ep) != readyConds {
				return fmt.Errorf("endpoints %v", v.byPod)
			}
			return nil
		}
		waitView(t, c, ns, svc, ManagedBy, "pub-0 ready", consistentlyView)
		// Its Ready=False is seen (the pod's status is written), and the
		// endpoint stays ready.
		testenv.Consistently(t, time.Second, "pub-0 stays ready", func() (bool, error) {
			v, err := viewOf(t, c, ns, svc, ManagedBy)
			if err == nil {
				err = consistentlyView(v)
			}
			return err == nil, err
		})
	})

	t.Run("a Service without a selector gets none", func(t *testing.T) {
		service(t, c, ns, "manual", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}})
		testenv.Consistently(t, time.Second, "no slices", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "manual"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
	})
}
