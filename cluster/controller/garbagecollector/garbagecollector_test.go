package garbagecollector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The collector against a real apiserver. Pods are bound to n1 at create,
// so their deletion is graceful and the stand-in kubelet finishes it, as a
// kubelet would. No ReplicaSet or Deployment controller runs: the tests
// write the ownerReferences those controllers would.

var (
	labels   = map[string]string{"app": "web"}
	template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kstep/workload"}}},
	}
)

func ownedBy(obj metav1.Object, kind string) metav1.OwnerReference {
	apiVersion := "v1"
	if kind == "ReplicaSet" || kind == "Deployment" {
		apiVersion = "apps/v1"
	}
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

func deployment(t *testing.T, c *testenv.ControllerCluster, ns, name string) *appsv1.Deployment {
	t.Helper()
	d, err := c.Client.AppsV1().Deployments(ns).Create(c.Ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func replicaSet(t *testing.T, c *testenv.ControllerCluster, ns, name string, owners ...metav1.OwnerReference) *appsv1.ReplicaSet {
	t.Helper()
	rs, err := c.Client.AppsV1().ReplicaSets(ns).Create(c.Ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// runningPods creates n running pods named <prefix>-i owned as given, and waits
// for the stand-in kubelet to have them Running.
func runningPods(t *testing.T, c *testenv.ControllerCluster, ns, prefix string, n int, finalizers []string, owners ...metav1.OwnerReference) []*corev1.Pod {
	t.Helper()
	var out []*corev1.Pod
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: labels, OwnerReferences: owners, Finalizers: finalizers},
			Spec: *template.Spec.DeepCopy()}
		p.Spec.NodeName = "n1"
		got, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	testenv.Eventually(t, 10*time.Second, "pods running", func() (bool, error) {
		for _, p := range out {
			got, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, p.Name, metav1.GetOptions{})
			if err != nil || got.Status.Phase != corev1.PodRunning {
				return false, err
			}
		}
		return true, nil
	})
	return out
}

func podCount(c *testenv.ControllerCluster, ns string) (int, error) {
	l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func gone(err error) (bool, error) { return apierrors.IsNotFound(err), err }

func deleteWith(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

func TestCollector(t *testing.T) {
	c := testenv.StartControllerCluster(t, "gc", New)

	t.Run("background: pods of a deleted ReplicaSet go", func(t *testing.T) {
		ns := c.Namespace(t)
		rs := replicaSet(t, c, ns, "web")
		runningPods(t, c, ns, "web", 3, nil, ownedBy(rs, "ReplicaSet"))
		if err := c.Client.AppsV1().ReplicaSets(ns).Delete(c.Ctx, "web", deleteWith(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "pods gone", func() (bool, error) {
			n, err := podCount(c, ns)
			return err == nil && n == 0, fmt.Errorf("%d pods left: %v", n, err)
		})
	})

	t.Run("background: Deployment to ReplicaSet to Pod", func(t *testing.T) {
		ns := c.Namespace(t)
		d := deployment(t, c, ns, "web")
		rs := replicaSet(t, c, ns, "web-1", ownedBy(d, "Deployment"))
		runningPods(t, c, ns, "web-1", 2, nil, ownedBy(rs, "ReplicaSet"))
		// kubectl's default: no propagationPolicy in the request at all.
		if err := c.Client.AppsV1().Deployments(ns).Delete(c.Ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "replicaset and pods gone", func() (bool, error) {
			_, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web-1", metav1.GetOptions{})
			n, lerr := podCount(c, ns)
			return apierrors.IsNotFound(err) && lerr == nil && n == 0, fmt.Errorf("rs: %v, %d pods", err, n)
		})
	})

	t.Run("orphan: pods stay and lose their ownerReference", func(t *testing.T) {
		ns := c.Namespace(t)
		rs := replicaSet(t, c, ns, "web")
		cm, err := c.Client.CoreV1().ConfigMaps(ns).Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cmRef := ownedBy(cm, "ConfigMap")
		cmRef.Controller = nil
		pods := runningPods(t, c, ns, "web", 2, nil, ownedBy(rs, "ReplicaSet"))
		both := runningPods(t, c, ns, "both", 1, nil, ownedBy(rs, "ReplicaSet"), cmRef)
		if err := c.Client.AppsV1().ReplicaSets(ns).Delete(c.Ctx, "web", deleteWith(metav1.DeletePropagationOrphan)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "replicaset gone", func() (bool, error) {
			_, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web", metav1.GetOptions{})
			return gone(err)
		})
		for _, p := range pods {
			got, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("orphaned pod %s: %v", p.Name, err)
			}
			if len(got.OwnerReferences) != 0 || got.DeletionTimestamp != nil {
				t.Fatalf("pod %s: owners %+v, deletionTimestamp %v; want free and alive", p.Name, got.OwnerReferences, got.DeletionTimestamp)
			}
		}
		got, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, both[0].Name, metav1.GetOptions{})
		if err != nil || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != cm.UID {
			t.Fatalf("pod with a second owner: %v %+v, want only the ConfigMap left", err, got.OwnerReferences)
		}
		testenv.Consistently(t, time.Second, "orphans alive", func() (bool, error) {
			n, err := podCount(c, ns)
			return err == nil && n == 3, fmt.Errorf("%d pods: %v", n, err)
		})
	})

	t.Run("foreground: the ReplicaSet stays until its pods are gone", func(t *testing.T) {
		ns := c.Namespace(t)
		rs := replicaSet(t, c, ns, "web")
		// One pod holds a test finalizer: its deletion cannot finish until
		// the test lets it, so the wait is observable.
		held := runningPods(t, c, ns, "held", 1, []string{"kstep.dev/test-hold"}, ownedBy(rs, "ReplicaSet"))[0]
		runningPods(t, c, ns, "web", 2, nil, ownedBy(rs, "ReplicaSet"))
		if err := c.Client.AppsV1().ReplicaSets(ns).Delete(c.Ctx, "web", deleteWith(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "the free pods gone, the held one terminating", func() (bool, error) {
			l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			return len(l.Items) == 1 && l.Items[0].DeletionTimestamp != nil, fmt.Errorf("%d pods", len(l.Items))
		})
		testenv.Consistently(t, time.Second, "replicaset waiting", func() (bool, error) {
			got, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return got.DeletionTimestamp != nil && hasFinalizer(got, metav1.FinalizerDeleteDependents), fmt.Errorf("finalizers %v", got.Finalizers)
		})
		release(t, c, ns, held.Name)
		testenv.Eventually(t, 20*time.Second, "replicaset gone after its last pod", func() (bool, error) {
			_, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web", metav1.GetOptions{})
			return gone(err)
		})
		if n, err := podCount(c, ns); err != nil || n != 0 {
			t.Fatalf("pods left: %d %v", n, err)
		}
	})

	t.Run("foreground: propagates down Deployment to ReplicaSet to Pod", func(t *testing.T) {
		ns := c.Namespace(t)
		d := deployment(t, c, ns, "web")
		rs := replicaSet(t, c, ns, "web-1", ownedBy(d, "Deployment"))
		held := runningPods(t, c, ns, "held", 1, []string{"kstep.dev/test-hold"}, ownedBy(rs, "ReplicaSet"))[0]
		if err := c.Client.AppsV1().Deployments(ns).Delete(c.Ctx, "web", deleteWith(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "replicaset deleted in the foreground", func() (bool, error) {
			got, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web-1", metav1.GetOptions{})
			return err == nil && got.DeletionTimestamp != nil && hasFinalizer(got, metav1.FinalizerDeleteDependents), err
		})
		if got, err := c.Client.AppsV1().Deployments(ns).Get(c.Ctx, "web", metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
			t.Fatalf("deployment must wait: %v", err)
		}
		release(t, c, ns, held.Name)
		testenv.Eventually(t, 20*time.Second, "deployment gone", func() (bool, error) {
			_, err := c.Client.AppsV1().Deployments(ns).Get(c.Ctx, "web", metav1.GetOptions{})
			return gone(err)
		})
		if _, err := c.Client.AppsV1().ReplicaSets(ns).Get(c.Ctx, "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("replicaset: %v, want gone", err)
		}
	})

	t.Run("dangling references among other kinds", func(t *testing.T) {
		ns := c.Namespace(t)
		svc, err := c.Client.CoreV1().Services(ns).Create(c.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keep := ownedBy(svc, "Service")
		stale := keep
		stale.UID = types.UID("00000000-0000-0000-0000-000000000000") // a Service of that name, but not this one
		for name, owner := range map[string]metav1.OwnerReference{"kept": keep, "stale": stale} {
			if _, err := c.Client.CoreV1().Secrets(ns).Create(c.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name,
				OwnerReferences: []metav1.OwnerReference{owner}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Client.CoreV1().Endpoints(ns).Create(c.Ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "svc",
			OwnerReferences: []metav1.OwnerReference{keep}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "secret with a stale owner gone", func() (bool, error) {
			_, err := c.Client.CoreV1().Secrets(ns).Get(c.Ctx, "stale", metav1.GetOptions{})
			return gone(err)
		})
		if _, err := c.Client.CoreV1().Secrets(ns).Get(c.Ctx, "kept", metav1.GetOptions{}); err != nil {
			t.Fatalf("secret with a live owner: %v", err)
		}
		if err := c.Client.CoreV1().Services(ns).Delete(c.Ctx, "svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "the service's dependents gone", func() (bool, error) {
			_, err1 := c.Client.CoreV1().Secrets(ns).Get(c.Ctx, "kept", metav1.GetOptions{})
			_, err2 := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "svc", metav1.GetOptions{})
			return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), fmt.Errorf("secret: %v, endpoints: %v", err1, err2)
		})
	})

	t.Run("an owner created after its dependent is not collected", func(t *testing.T) {
		// A dependent whose owner the cache has not seen yet must survive:
		// the live read finds the owner.
		ns := c.Namespace(t)
		cm, err := c.Client.CoreV1().ConfigMaps(ns).Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep",
			OwnerReferences: []metav1.OwnerReference{ownedBy(cm, "ConfigMap")}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Consistently(t, time.Second, "dependent alive", func() (bool, error) {
			_, err := c.Client.CoreV1().ConfigMaps(ns).Get(c.Ctx, "dep", metav1.GetOptions{})
			return err == nil, err
		})
	})

	t.Run("orphan and foreground finalizers on a kind with no dependents", func(t *testing.T) {
		ns := c.Namespace(t)
		for i, p := range []metav1.DeletionPropagation{metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground} {
			name := fmt.Sprintf("cm-%d", i)
			if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.Client.CoreV1().ConfigMaps(ns).Delete(c.Ctx, name, deleteWith(p)); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 20*time.Second, name+" gone", func() (bool, error) {
				_, err := c.Client.CoreV1().ConfigMaps(ns).Get(c.Ctx, name, metav1.GetOptions{})
				return gone(err)
			})
		}
	})
}

// release removes the test finalizer from a pod, letting its deletion end.
func release(t *testing.T, c *testenv.ControllerCluster, ns, name string) {
	t.Helper()
	_, err := c.Client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
