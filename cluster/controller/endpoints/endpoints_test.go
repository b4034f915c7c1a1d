package endpoints

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// addressesOf returns the pod names in an Endpoints' addresses and
// notReadyAddresses, checking each address against its pod.
func addressesOf(t *testing.T, c *testenv.ControllerCluster, ns, name string) (ready, notReady []string, err error) {
	ep, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	check := func(a corev1.EndpointAddress) (string, error) {
		if a.TargetRef == nil || a.TargetRef.Kind != "Pod" {
			return "", fmt.Errorf("address %s: targetRef %+v", a.IP, a.TargetRef)
		}
		pod, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, a.TargetRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if pod.UID != a.TargetRef.UID || pod.Status.PodIP != a.IP || a.NodeName == nil || *a.NodeName != pod.Spec.NodeName {
			return "", fmt.Errorf("address %+v does not match pod %s (uid %s ip %s node %s)", a, pod.Name, pod.UID, pod.Status.PodIP, pod.Spec.NodeName)
		}
		return pod.Name, nil
	}
	for _, s := range ep.Subsets {
		if want := []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}; !slices.Equal(s.Ports, want) {
			return nil, nil, fmt.Errorf("ports %+v, want %+v", s.Ports, want)
		}
		for _, a := range s.Addresses {
			n, err := check(a)
			if err != nil {
				return nil, nil, err
			}
			ready = append(ready, n)
		}
		for _, a := range s.NotReadyAddresses {
			n, err := check(a)
			if err != nil {
				return nil, nil, err
			}
			notReady = append(notReady, n)
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	return ready, notReady, nil
}

func waitAddresses(t *testing.T, c *testenv.ControllerCluster, ns, name string, ready, notReady []string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, fmt.Sprintf("endpoints %s: ready %v, not ready %v", name, ready, notReady), func() (bool, error) {
		r, nr, err := addressesOf(t, c, ns, name)
		if err != nil {
			return false, err
		}
		return slices.Equal(r, ready) && slices.Equal(nr, notReady), fmt.Errorf("ready %v, not ready %v", r, nr)
	})
}

func createPod(t *testing.T, c *testenv.ControllerCluster, ns, name, app, node string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "kstep/workload",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	got, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// setReady writes the pod's Ready condition, as a kubelet's probe would.
func setReady(t *testing.T, c *testenv.ControllerCluster, ns, name string, ready corev1.ConditionStatus) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, "status written", func() (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
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

func TestEndpoints(t *testing.T) {
	sink := &testenv.SyncBuffer{}
	tracer := trace.New("controller-manager", sink, 0)
	t.Cleanup(func() { _ = tracer.Close() }) // after the controller stops
	c := testenv.StartControllerCluster(t, "ep")
	c.Controllers.Tracer = tracer
	testenv.RunController(t, New(c.Controllers), c.Controllers)
	ns := c.Namespace(t)

	svc, err := c.Client.CoreV1().Services(ns).Create(c.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"web-0", "web-1", "web-2"} {
		pods[name] = createPod(t, c, ns, name, "web", "n1")
	}
	createPod(t, c, ns, "web-unscheduled", "web", "") // no node, no IP: not an endpoint
	createPod(t, c, ns, "other", "other", "n1")       // another app

	t.Run("exactly the Ready pods", func(t *testing.T) {
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-1", "web-2"}, nil)
		ep, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ep.Labels["team"] != "a" {
			t.Errorf("endpoints labels %v, want the service's", ep.Labels)
		}
		testenv.Eventually(t, 5*time.Second, "endpoints.updated stamped once per pod", func() (bool, error) {
			got := sink.PodStamps(t, trace.EndpointsUpdated)
			for _, p := range pods {
				if got[p.UID] != 1 {
					return false, fmt.Errorf("stamps %v", got)
				}
			}
			return len(got) == 3, fmt.Errorf("stamps %v", got)
		})
	})

	t.Run("no write when nothing changed", func(t *testing.T) {
		before, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A change of a pod that no Endpoints field reflects, and of the
		// Service outside what the Endpoints say.
		if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.CoreV1().Services(ns).Patch(c.Ctx, "web", types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Consistently(t, time.Second, "endpoints unwritten", func() (bool, error) {
			now, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "web", metav1.GetOptions{})
			return err == nil && now.ResourceVersion == before.ResourceVersion, fmt.Errorf("resourceVersion %s -> %s (%v)", before.ResourceVersion, now.ResourceVersion, err)
		})
	})

	t.Run("a pod whose Ready goes False moves to notReadyAddresses", func(t *testing.T) {
		setReady(t, c, ns, "web-1", corev1.ConditionFalse)
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-2"}, []string{"web-1"})
		setReady(t, c, ns, "web-1", corev1.ConditionTrue)
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-1", "web-2"}, nil)
		testenv.Eventually(t, 5*time.Second, "web-1 stamped again when back in addresses", func() (bool, error) {
			got := sink.PodStamps(t, trace.EndpointsUpdated)
			return got[pods["web-1"].UID] == 2 && got[pods["web-0"].UID] == 1, fmt.Errorf("stamps %v", got)
		})
	})

	t.Run("a deleted pod is dropped", func(t *testing.T) {
		if err := c.Client.CoreV1().Pods(ns).Delete(c.Ctx, "web-2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-1"}, nil)
	})

	t.Run("a new matching pod is added", func(t *testing.T) {
		createPod(t, c, ns, "web-3", "web", "n1")
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-1", "web-3"}, nil)
	})

	t.Run("Endpoints deleted by someone else come back", func(t *testing.T) {
		if err := c.Client.CoreV1().Endpoints(ns).Delete(c.Ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAddresses(t, c, ns, "web", []string{"web-0", "web-1", "web-3"}, nil)
	})

	t.Run("a Service without a selector is left alone", func(t *testing.T) {
		if _, err := c.Client.CoreV1().Services(ns).Create(c.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "manual"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		mine, err := c.Client.CoreV1().Endpoints(ns).Create(c.Ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "manual"},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}},
				Ports: []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		testenv.Consistently(t, time.Second, "hand-written endpoints untouched", func() (bool, error) {
			now, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "manual", metav1.GetOptions{})
			return err == nil && now.ResourceVersion == mine.ResourceVersion, err
		})
	})

	t.Run("Endpoints go with their Service", func(t *testing.T) {
		for _, name := range []string{svc.Name, "manual"} {
			if err := c.Client.CoreV1().Services(ns).Delete(c.Ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 10*time.Second, "endpoints "+name+" gone", func() (bool, error) {
				_, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), err
			})
		}
	})
}
