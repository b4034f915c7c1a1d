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
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// An etcd whose space quota fills refuses writes (its NOSPACE alarm): the
// apiserver answers 507 with etcd's message, at once (no retrying against
// a full database), reads go on, and every write acknowledged before is
// there.
func TestNoSpaceIsAClearError(t *testing.T) {
	url, cli := testenv.EtcdWith(t, func(c *etcd.Config) { c.QuotaBackendBytes = 2 << 20 })
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	value := strings.Repeat("x", 100<<10)
	var created []string
	var last error
	for i := range 200 {
		name := fmt.Sprintf("fill-%03d", i)
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}, metav1.CreateOptions{})
		if err != nil {
			last = err
			break
		}
		created = append(created, name)
	}
	if last == nil {
		t.Fatalf("200 writes of 100 KiB into a 2 MiB quota all succeeded")
	}
	var se apierrors.APIStatus
	if !apierrors.IsInternalError(last) || !errors.As(last, &se) || se.Status().Code != http.StatusInsufficientStorage ||
		!strings.Contains(last.Error(), "etcdserver: mvcc: database space exceeded") {
		t.Fatalf("after %d writes: %v (want 507 with etcd's message)", len(created), last)
	}
	t.Logf("quota full after %d writes of 100 KiB: %v", len(created), last)
	// A small write fails the same way; reads go on; nothing is lost.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "space exceeded") {
		t.Errorf("small write: %v", err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list with the quota full: %v", err)
	}
	have := map[string]bool{}
	for _, cm := range l.Items {
		have[cm.Name] = len(cm.Data["v"]) == len(value)
	}
	for _, n := range created {
		if !have[n] {
			t.Errorf("%s acknowledged, then missing or changed", n)
		}
	}

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
	r, err := storage.NewStore(cli, nil).Recover(ctx, slog.New(slog.DiscardHandler))
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
	if l, err = cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) < len(created)+1 {
		t.Errorf("after recovery: %v, %d objects, want at least %d", err, len(l.Items), len(created)+1)
	}
}
