package replicationcontroller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/garbagecollector"
	"github.com/kstep-dev/kstep/cluster/controller/replicationcontroller"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// newRC is a ReplicationController whose pods land on n1, where the
// stand-in kubelet runs them and marks them Ready.
func newRC(name string, replicas int32) *corev1.ReplicationController {
	l := map[string]string{"app": name}
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: l,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}}}},
	}
}

// owned returns the live pods in ns whose controller is the
// ReplicationController rc, and fails on any pod of its label owned
// otherwise.
func owned(t *testing.T, c *testenv.ControllerCluster, ns string, rc *corev1.ReplicationController) []corev1.Pod {
	t.Helper()
	l, err := c.Client.CoreV1().Pods(ns).List(c.Ctx, metav1.ListOptions{LabelSelector: "app=" + rc.Name})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || p.DeletionTimestamp != nil {
			continue
		}
		want := metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: rc.Name, UID: rc.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		if ref.APIVersion != want.APIVersion || ref.Kind != want.Kind || ref.Name != want.Name || ref.UID != want.UID ||
			!ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Fatalf("pod %s: ownerReference %+v, want %+v", p.Name, *ref, want)
		}
		out = append(out, p)
	}
	return out
}

// settled waits until rc has n owned pods and a status saying so, all of
// them ready, at its current generation.
func settled(t *testing.T, c *testenv.ControllerCluster, ns, name string, n int32) *corev1.ReplicationController {
	t.Helper()
	var rc *corev1.ReplicationController
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%s: %d pods, ready, in status", name, n), func() (bool, error) {
		var err error
		rc, err = c.Client.CoreV1().ReplicationControllers(ns).Get(c.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := rc.Status
		pods := len(owned(t, c, ns, rc))
		ok := pods == int(n) && st.Replicas == n && st.FullyLabeledReplicas == n && st.ReadyReplicas == n &&
			st.AvailableReplicas == n && st.ObservedGeneration == rc.Generation
		return ok, fmt.Errorf("%d pods, status %+v, generation %d", pods, st, rc.Generation)
	})
	return rc
}

func TestReplicationController(t *testing.T) {
	// The garbage collector runs beside it: kubectl's cascading deletes
	// are its work.
	c := testenv.StartControllerCluster(t, "rc", replicationcontroller.New, garbagecollector.New)
	if name := replicationcontroller.New(testenv.ControllerContext(t, c.API.Config)).Name(); name != "replicationcontroller" {
		t.Fatalf("controller name %q", name)
	}
	ns := c.Namespace(t)
	rcs := c.Client.CoreV1().ReplicationControllers(ns)

	t.Run("create, replace, adopt, release", func(t *testing.T) {
		orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		if _, err := c.Client.CoreV1().Pods(ns).Create(c.Ctx, orphan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Ready first: were the controller to see it only after creating
		// three pods, the surplus it deletes is a pod not yet Ready.
		testenv.Eventually(t, 10*time.Second, "orphan ready", func() (bool, error) {
			p, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "orphan", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, err
		})
		if _, err := rcs.Create(c.Ctx, newRC("web", 3), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rc := settled(t, c, ns, "web", 3)
		if p, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "orphan", metav1.GetOptions{}); err != nil || metav1.GetControllerOf(p) == nil {
			t.Fatalf("matching orphan not adopted: %v %+v", err, p.OwnerReferences)
		}
		// A pod it created, deleted, is replaced; the adopted pod,
		// relabelled, is released, then replaced.
		var created string
		for _, p := range owned(t, c, ns, rc) {
			if p.Name != "orphan" {
				created = p.Name
			}
		}
		if err := c.Client.CoreV1().Pods(ns).Delete(c.Ctx, created, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.CoreV1().Pods(ns).Patch(c.Ctx, "orphan", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"other"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		settled(t, c, ns, "web", 3)
		testenv.Eventually(t, 10*time.Second, "relabelled pod released", func() (bool, error) {
			p, err := c.Client.CoreV1().Pods(ns).Get(c.Ctx, "orphan", metav1.GetOptions{})
			return err == nil && len(p.OwnerReferences) == 0, err
		})
	})

	t.Run("events are the ReplicationController's", func(t *testing.T) {
		sel := fields.Set{"involvedObject.kind": "ReplicationController", "involvedObject.name": "web", "reason": "SuccessfulCreate"}.String()
		testenv.Eventually(t, 10*time.Second, "SuccessfulCreate events on the RC", func() (bool, error) {
			l, err := c.Client.CoreV1().Events(ns).List(c.Ctx, metav1.ListOptions{FieldSelector: sel})
			if err != nil || len(l.Items) == 0 {
				return false, err
			}
			return l.Items[0].InvolvedObject.APIVersion == "v1", fmt.Errorf("involvedObject %+v", l.Items[0].InvolvedObject)
		})
	})

	t.Run("scale subresource through client-go", func(t *testing.T) {
		rc := newRC("sc", 2)
		rc.Spec.Selector["tier"] = "fe"
		rc.Spec.Template.Labels["tier"] = "fe"
		if _, err := rcs.Create(c.Ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		settled(t, c, ns, "sc", 2)
		sc, err := rcs.GetScale(c.Ctx, "sc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Spec.Replicas != 2 || sc.Status.Replicas != 2 || sc.Status.Selector != "app=sc,tier=fe" {
			t.Fatalf("scale = %+v", sc)
		}
		stale := sc.DeepCopy()
		sc.Spec.Replicas = 4
		if _, err := rcs.UpdateScale(c.Ctx, "sc", sc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		settled(t, c, ns, "sc", 4)
		stale.Spec.Replicas = 1
		if _, err := rcs.UpdateScale(c.Ctx, "sc", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("scale update at a stale resourceVersion: %v, want a 409 Conflict", err)
		}
		stale.ResourceVersion = ""
		if _, err := rcs.UpdateScale(c.Ctx, "sc", stale, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		settled(t, c, ns, "sc", 1)
		if sc, err := rcs.GetScale(c.Ctx, "sc", metav1.GetOptions{}); err != nil || sc.Spec.Replicas != 1 || sc.Status.Replicas != 1 {
			t.Fatalf("scale after scaling down = %+v, %v", sc, err)
		}
	})

	t.Run("defaults", func(t *testing.T) {
		rc := newRC("dflt", 1)
		rc.Spec.Selector, rc.Spec.Replicas = nil, nil
		got, err := rcs.Create(c.Ctx, rc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Selector["app"] != "dflt" || got.Labels["app"] != "dflt" || ptr.Deref(got.Spec.Replicas, 0) != 1 ||
			got.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Fatalf("defaulted rc: selector %v labels %v replicas %v restartPolicy %q", got.Spec.Selector, got.Labels, got.Spec.Replicas,
				got.Spec.Template.Spec.RestartPolicy)
		}
		settled(t, c, ns, "dflt", 1)
	})

	t.Run("validation refusals", func(t *testing.T) {
		for name, mutate := range map[string]func(*corev1.ReplicationController){
			"selector does not match the template": func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "other"} },
			"no selector, no template labels": func(rc *corev1.ReplicationController) {
				rc.Spec.Selector, rc.Spec.Template.Labels = nil, nil
			},
			"no template":       func(rc *corev1.ReplicationController) { rc.Spec.Template = nil },
			"negative replicas": func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr.To[int32](-1) },
		} {
			rc := newRC("bad", 1)
			mutate(rc)
			_, err := rcs.Create(c.Ctx, rc, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Errorf("%s: %v, want 422 Invalid", name, err)
			}
		}
		got, err := rcs.Get(c.Ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Spec.Selector = map[string]string{"app": "nope"}
		if _, err := rcs.Update(c.Ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("update to a selector not matching the template: %v, want 422 Invalid", err)
		}
	})

	t.Run("status.replicas is a selectable field", func(t *testing.T) {
		l, err := rcs.List(c.Ctx, metav1.ListOptions{FieldSelector: "status.replicas=4"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 0 {
			t.Errorf("status.replicas=4: %d items, want none", len(l.Items))
		}
		l, err = rcs.List(c.Ctx, metav1.ListOptions{FieldSelector: "status.replicas=3"})
		if err != nil || len(l.Items) != 1 || l.Items[0].Name != "web" {
			t.Fatalf("status.replicas=3: %v %v", l, err)
		}
	})
}
