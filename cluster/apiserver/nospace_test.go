package apiserver_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/etcd"
	"github.com/kstep-dev/kstep/cluster/etcdadmin"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// An etcd whose space quota fills with history refuses writes (its NOSPACE
// alarm): the apiserver answers 507 with etcd's message, at once (no
// retrying against a full database), reads go on, every write acknowledged
// is there, /readyz stays ready, and recovery makes writes work again.
func TestNoSpaceIsAClearError(t *testing.T) {
	url, cli := testenv.EtcdWith(t, func(c *etcd.Config) { c.QuotaBackendBytes = 2 << 20 })
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	// Churn fills the quota, as a soak does: four objects of 100 KiB
	// rewritten over and over, their history piling up.
	value := strings.Repeat("x", 100<<10)
	acked := map[string]string{} // name → the last value acknowledged
	var objs []*corev1.ConfigMap
	for i := range 4 {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, cm)
		acked[cm.Name] = ""
	}
	writes := 0
	var last error
	for ; writes < 400; writes++ {
		cm := objs[writes%4].DeepCopy()
		v := fmt.Sprint(writes) + value
		cm.Data = map[string]string{"v": v}
		got, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			last = err
			break
		}
		objs[writes%4], acked[cm.Name] = got, v
	}
	if last == nil {
		t.Fatalf("400 writes of 100 KiB into a 2 MiB quota all succeeded")
	}
	created := writes
	var se apierrors.APIStatus
	if !apierrors.IsInternalError(last) || !errors.As(last, &se) || se.Status().Code != http.StatusInsufficientStorage ||
		!strings.Contains(last.Error(), "etcdserver: mvcc: database space exceeded") {
		t.Fatalf("after %d writes: %v (want 507 with etcd's message)", created, last)
	}
	t.Logf("quota full after %d writes of 100 KiB: %v", created, last)
	// A small write fails the same way; reads go on; nothing is lost.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "space exceeded") {
		t.Errorf("small write: %v", err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list with the quota full: %v", err)
	}
	intact := func(l *corev1.ConfigMapList) {
		t.Helper()
		have := map[string]string{}
		for _, cm := range l.Items {
			have[cm.Name] = cm.Data["v"]
		}
		for n, v := range acked {
			if have[n] != v {
				t.Errorf("%s: not the last value acknowledged (%.6q, want %.6q)", n, have[n], v)
			}
		}
	}
	intact(l)
	// /readyz stays ready (every apiserver shares this etcd: failing them all
	// would take reads away too); the verbose form names the alarm.
	get := func(path string) (int, string) {
		resp, err := http.Get(api.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz with NOSPACE: %d %q, want 200 ok", code, body)
	}
	if code, body := get("/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "[-]etcd-space: NOSPACE alarm raised on 1 member(s)") || !strings.Contains(body, "readyz check passed") {
		t.Errorf("/readyz?verbose with NOSPACE: %d\n%s", code, body)
	}

	// Recovery (what kstep etcd recover runs): writes work again, nothing
	// acknowledged is lost, the alarm is gone.
	r, err := etcdadmin.Recover(ctx, cli, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	t.Logf("recovered: compacted to %d, %d alarm disarmed, db %d → %d bytes (in use %d)", r.CompactedTo, r.Disarmed,
		r.Before[0].DBSize, r.After[0].DBSize, r.After[0].DBSizeInUse)
	if r.Disarmed != 1 || r.After[0].NoSpace {
		t.Errorf("after recovery: %d disarmed, NOSPACE %v", r.Disarmed, r.After[0].NoSpace)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-recovery"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("write after recovery: %v", err)
	}
	if _, body := get("/readyz?verbose"); !strings.Contains(body, "[+]etcd-space ok") {
		t.Errorf("/readyz?verbose after recovery:\n%s", body)
	}
	if l, err = cms.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	intact(l)
}
