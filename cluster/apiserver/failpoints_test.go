package apiserver_test

import (
	"fmt"
	"io"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	fp "github.com/kstep-dev/kstep/cluster/failpoint"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func failpoint(t *testing.T, cfg *rest.Config, method, path string) (int, string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(cfg.Host, "/")+fp.Path+path, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestFailpointFreezeServesStaleLists: a frozen watch cache answers a
// consistent LIST with what it held before a write that was acknowledged,
// which is what the chaos engine's linearizability check must catch;
// thawed, it catches up. Without --enable-failpoints there is no such path.
func TestFailpointFreezeServesStaleLists(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.Failpoints = true })
	cs, _ := kubernetes.NewForConfig(api.Config)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	value := func() string {
		l, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range l.Items {
			if cm.Name == "x" {
				return cm.Data["v"]
			}
		}
		return "absent"
	}
	if v := value(); v != "1" {
		t.Fatalf("before: %s", v)
	}
	for _, bad := range []string{"/freeze-watch-cache?for=1h", "/freeze-watch-cache", "/freeze-watch-cache?for=1s&resource=nope",
		"/drop-watch-event?resource=pods", "/drop-watch-event?resource=pods&userAgent=x&count=1000", "/nope"} {
		if code, body := failpoint(t, api.Config, http.MethodPost, bad); code != http.StatusBadRequest && code != http.StatusNotFound {
			t.Errorf("POST %s: %d %s, want 400 or 404", bad, code, body)
		}
	}
	if code, body := failpoint(t, api.Config, http.MethodPost, "/freeze-watch-cache?for=10s&resource=configmaps"); code != 200 || !strings.Contains(body, "configmaps") {
		t.Fatalf("freeze: %d %s", code, body)
	}
	if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"v": "2"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := cms.Get(ctx, "x", metav1.GetOptions{}); err != nil || got.Data["v"] != "2" {
		t.Fatalf("a consistent GET reads etcd: %v %v", got, err)
	}
	if v := value(); v != "1" {
		t.Fatalf("frozen: a consistent list gave %s, want the stale 1", v)
	}
	if code, body := failpoint(t, api.Config, http.MethodDelete, "/freeze-watch-cache"); code != 200 {
		t.Fatalf("thaw: %d %s", code, body)
	}
	if v := value(); v != "2" {
		t.Fatalf("thawed: %s, want 2", v)
	}

	plain := testenv.StartAPIServer(t, url, nil)
	if code, _ := failpoint(t, plain.Config, http.MethodPost, "/freeze-watch-cache?for=1s"); code != http.StatusNotFound {
		t.Errorf("without --enable-failpoints: %d, want 404", code)
	}
}

// TestFailpointDropsOneEvent: an armed drop-watch-event takes one event
// from the stream whose User-Agent matches, and from no other.
func TestFailpointDropsOneEvent(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.Failpoints = true })
	ctx := ctxT(t)
	watchAs := func(ua string) watch.Interface {
		cfg := rest.CopyConfig(api.Config)
		cfg.UserAgent = ua
		cs, _ := kubernetes.NewForConfig(cfg)
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	victim, other := watchAs("chaos-watcher/victim"), watchAs("chaos-watcher/other")
	if code, body := failpoint(t, api.Config, http.MethodPost, "/drop-watch-event?resource=configmaps&userAgent=victim"); code != 200 {
		t.Fatalf("arm: %d %s", code, body)
	}
	cs, _ := kubernetes.NewForConfig(api.Config)
	for i := range 3 {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(w watch.Interface, n int) []string {
		var out []string
		for len(out) < n {
			select {
			case ev := <-w.ResultChan():
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added && strings.HasPrefix(cm.Name, "c") {
					out = append(out, cm.Name)
				}
			case <-time.After(5 * time.Second):
				return out
			}
		}
		return out
	}
	if got := names(other, 3); strings.Join(got, ",") != "c0,c1,c2" {
		t.Errorf("the other watcher got %v, want every event", got)
	}
	if got := names(victim, 2); strings.Join(got, ",") != "c1,c2" {
		t.Errorf("the victim got %v, want c0 dropped", got)
	}
	if code, body := failpoint(t, api.Config, http.MethodGet, ""); code != 200 || !strings.Contains(body, `"dropped":1`) {
		t.Errorf("state: %d %s", code, body)
	}
}

// A create right after this apiserver answered a namespace's deletion is
// refused, even while its namespace cache lags (frozen here): the check
// waits for the cache to have the Terminating version.
func TestCreateAfterNamespaceDeletionWhileTheCacheLags(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.Failpoints = true })
	cs, _ := kubernetes.NewForConfig(api.Config)
	ctx := ctxT(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The cache has it Active (a list is served from the cache)...
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=going"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the namespace never reached the cache")
		}
	}
	// ... and keeps it so while the deletion is answered.
	if code, body := failpoint(t, api.Config, http.MethodPost, "/freeze-watch-cache?for=2s&resource=namespaces"); code != 200 {
		t.Fatalf("freeze: %d %s", code, body)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "going", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := cs.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create in a namespace just deleted: %v, want 403", err)
	}
	t.Logf("refused after %v (the cache was frozen for 2s)", time.Since(start))
}
