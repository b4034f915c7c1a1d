package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/storage"
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

// A short soak under steady churn: objects rewritten as fast as the
// apiserver takes them, for 10 s. The apiserver compacts (every 300 ms here)
// and defragments, so etcd's file stays a small fraction of the history
// written instead of growing with it (without compaction it would hold all
// of it, and a week-long run would reach the quota).
func TestSoakKeepsEtcdBounded(t *testing.T) {
	url, cli := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) {
		o.EtcdCompactionInterval = 300 * time.Millisecond
		o.EtcdDefragThreshold, o.EtcdDefragMinBytes = 0.5, 1<<20
	})
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	value := strings.Repeat("x", 32<<10)
	const objects = 8
	objs := make([]*corev1.ConfigMap, objects)
	for i := range objs {
		var err error
		if objs[i], err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("soak-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st := storage.NewStore(cli, nil)
	var maxDB int64
	var written int64
	end := time.Now().Add(10 * time.Second)
	next := time.Now()
	for i := 0; time.Now().Before(end); i++ {
		cm := objs[i%objects].DeepCopy()
		cm.Data = map[string]string{"v": fmt.Sprint(i) + value}
		got, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		objs[i%objects] = got
		written += int64(len(value))
		if time.Now().After(next) {
			ms, err := st.Space(ctx)
			if err != nil {
				t.Fatal(err)
			}
			maxDB = max(maxDB, ms[0].DBSize)
			next = time.Now().Add(200 * time.Millisecond)
		}
	}
	ms, err := st.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, storage.CompactRevKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("no compaction recorded: %v %v", resp, err)
	}
	t.Logf("%.1f MiB of history written in 10 s; %d compactions; etcd file at most %.1f MiB, at the end %.1f MiB (%.1f MiB in use)",
		float64(written)/(1<<20), resp.Kvs[0].Version, float64(maxDB)/(1<<20), float64(ms[0].DBSize)/(1<<20), float64(ms[0].DBSizeInUse)/(1<<20))
	if resp.Kvs[0].Version < 10 {
		t.Errorf("%d compactions in 10 s at a 300 ms interval", resp.Kvs[0].Version)
	}
	if bound := max(int64(16<<20), written/4); maxDB > bound {
		t.Errorf("etcd's file reached %d bytes for %d bytes of history: not bounded (limit %d)", maxDB, written, bound)
	}
}
