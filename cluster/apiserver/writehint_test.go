package apiserver_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// TestWriteRefusedOnStaleHintIsJudgedOnEtcd: a write starts from the watch
// cache's copy, which may be older than a write the client has already
// seen acknowledged (the cache hears of it a moment after the client).
// What that copy refuses (a JSON patch's test, a resourceVersion
// precondition) is judged again on etcd's copy before the client hears
// it, as upstream's GuaranteedUpdate does; what etcd's copy refuses is
// still refused. Each round writes, then at once sends a write that holds
// only on what was just acknowledged.
func TestWriteRefusedOnStaleHintIsJudgedOnEtcd(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs, _ := kubernetes.NewForConfig(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	refusedTest, refusedRV := 0, 0
	for i := 1; i <= rounds; i++ {
		cm.Data["v"] = fmt.Sprint(3 * i)
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`[{"op":"test","path":"/data/v","value":"%d"},{"op":"replace","path":"/data/v","value":"%d"}]`, 3*i, 3*i+1)
		if cm, err = cms.Patch(ctx, "x", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			if !apierrors.IsInvalid(err) {
				t.Fatal(err)
			}
			refusedTest++
			if cm, err = cms.Get(ctx, "x", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Pinned to the version just acknowledged.
		cm.Data["v"] = fmt.Sprint(3*i + 2)
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			if !apierrors.IsConflict(err) {
				t.Fatal(err)
			}
			refusedRV++
			if cm, err = cms.Get(ctx, "x", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if refusedTest > 0 || refusedRV > 0 {
		t.Errorf("of %d rounds, %d JSON patches refused a test that held on what was acknowledged, %d updates refused its resourceVersion", rounds, refusedTest, refusedRV)
	}
	// What etcd's copy refuses is still refused.
	stale := cm.DeepCopy()
	stale.ResourceVersion = "1"
	if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update at an old resourceVersion: %v, want 409", err)
	}
	if _, err := cms.Patch(ctx, "x", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/v","value":"nope"}]`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a test that fails on etcd's copy: %v, want 422", err)
	}
}
