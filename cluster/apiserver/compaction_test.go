package apiserver_test

import (
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// The apiserver compacts etcd on its interval: an exact list at a
// revision older than an interval is 410 Expired (the client relists), and
// serving goes on.
func TestAPIServerCompactsEtcd(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.EtcdCompactionInterval = 200 * time.Millisecond })
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := cm.ResourceVersion
	start := time.Now()
	for {
		cm.Data = map[string]string{"at": time.Now().String()}
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: old, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			break
		}
		if err != nil {
			t.Fatalf("exact list at %s: %v", old, err)
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("revision %s still listable after 15s of 200ms compaction", old)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("revision %s compacted away %v after it was written (interval 200ms)", old, time.Since(start).Round(time.Millisecond))
	// Still serving: a read and a write.
	if _, err := cms.Get(ctx, "c", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, http.DefaultClient, "GET", api.URL+"/readyz", "", "")
	if code != 200 {
		t.Fatalf("readyz %d: %s", code, body)
	}
}
