package resourcequota

import (
	"context"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// status.used follows the namespace's pods: creates count, terminal pods
// and deleted pods stop counting; status.hard mirrors spec.hard.
func TestQuotaStatus(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	cc := testenv.ControllerContext(t, api.Config)
	testenv.RunController(t, New(cc), cc)
	ctx := context.Background()
	if _, err := cs.CoreV1().ResourceQuotas("default").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("2")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	usedIs := func(pods, cpu string) {
		t.Helper()
		testenv.Eventually(t, 10*time.Second, "status.used pods="+pods+" requests.cpu="+cpu, func() (bool, error) {
			q, err := cs.CoreV1().ResourceQuotas("default").Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			p, c := q.Status.Used[corev1.ResourcePods], q.Status.Used[corev1.ResourceRequestsCPU]
			h := q.Status.Hard[corev1.ResourcePods]
			return p.String() == pods && c.String() == cpu && h.String() == "10", nil
		})
	}
	usedIs("0", "0")
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	usedIs("2", "600m")
	p, _ := cs.CoreV1().Pods("default").Get(ctx, "a", metav1.GetOptions{})
	p.Status.Phase = corev1.PodSucceeded
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	usedIs("1", "300m")
	if err := cs.CoreV1().Pods("default").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	usedIs("0", "0")
}
