package rootcacertpublisher

import (
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIBdGVzdA==\n-----END CERTIFICATE-----\n"

func published(c *testenv.ControllerCluster, ns string) func() (bool, error) {
	return func() (bool, error) {
		cm, err := c.Client.CoreV1().ConfigMaps(ns).Get(c.Ctx, Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && cm.Data[DataKey] == testCA && len(cm.Data) == 1 && cm.Annotations[descriptionAnnotation] == description, err
	}
}

// Every namespace, the system ones and a new one, has kube-root-ca.crt
// with the CA; deleted, it is back; edited, it is restored; a terminating
// namespace gets none.
func TestRootCAPublished(t *testing.T) {
	c := testenv.StartControllerCluster(t, "rootca")
	c.Controllers.RootCA = []byte(testCA)
	testenv.RunController(t, New(c.Controllers), c.Controllers)
	for _, ns := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		testenv.Eventually(t, 10*time.Second, "kube-root-ca.crt in "+ns, published(c, ns))
	}
	ns := c.Namespace(t)
	start := time.Now()
	testenv.Eventually(t, 10*time.Second, "kube-root-ca.crt in a new namespace", published(c, ns))
	t.Logf("a new namespace had kube-root-ca.crt %v after its create returned", time.Since(start))

	cms := c.Client.CoreV1().ConfigMaps(ns)
	if err := cms.Delete(c.Ctx, Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "kube-root-ca.crt back after deletion", published(c, ns))

	cm, err := cms.Get(c.Ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{DataKey: "not a CA", "extra": "x"}
	if _, err := cms.Update(c.Ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "kube-root-ca.crt restored after an edit", published(c, ns))

	// Other ConfigMaps are their users'.
	if _, err := cms.Create(c.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 500*time.Millisecond, "a user's ConfigMap left alone", func() (bool, error) {
		cm, err := cms.Get(c.Ctx, "app", metav1.GetOptions{})
		return err == nil && cm.Data["a"] == "b" && len(cm.Data) == 1, err
	})

	// Terminating (no namespace controller runs here): not put back.
	if err := c.Client.CoreV1().Namespaces().Delete(c.Ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(c.Ctx, Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	testenv.Consistently(t, time.Second, "no kube-root-ca.crt in a terminating namespace", func() (bool, error) {
		_, err := cms.Get(c.Ctx, Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// Without a CA the publisher writes nothing (and says so in its log).
func TestNoRootCANoPublishing(t *testing.T) {
	c := testenv.StartControllerCluster(t, "rootca")
	c.Controllers.RootCA = []byte("")
	testenv.RunController(t, New(c.Controllers), c.Controllers)
	ns := c.Namespace(t)
	testenv.Consistently(t, time.Second, "nothing published without a CA", func() (bool, error) {
		_, err := c.Client.CoreV1().ConfigMaps(ns).Get(c.Ctx, Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}
