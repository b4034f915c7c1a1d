package apiserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// metric reads one sample of the apiserver's /metrics (the first line
// starting with name, labels included); 0 when there is none yet (a gauge
// vector has no series before its first use).
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	return metricVia(t, http.DefaultClient, url, name)
}

// metricVia is metric through hc (a TLS or HTTP/2 client).
func metricVia(t *testing.T, hc *http.Client, url, name string) float64 {
	t.Helper()
	resp, err := hc.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, name+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, name)), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// heapInUse is the apiserver's heap in use right after a garbage
// collection (pprof's heap profile with gc=1 runs one).
func heapInUse(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/debug/pprof/heap?gc=1")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return metric(t, url, "go_memstats_heap_inuse_bytes")
}

// bigConfigMap is a ConfigMap of about n bytes.
func bigConfigMap(name string, n int, gen int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{"blob": fmt.Sprintf("%08d", gen) + strings.Repeat("x", n-8)}}
}

// A watch cache of 1 MiB objects stays under its byte bound, and a watch
// from an evicted version is 410; a watcher that never reads is closed
// once its writes stall, and the apiserver's heap returns within 50 MB of
// where it was (the real binary, so etcd's memory is not in the figure).
func TestBoundedWatchMemory(t *testing.T) {
	etcdURL, _ := testenv.Etcd(t)
	const bound = 8 << 20
	api := testenv.StartAPIServerProcess(t, etcdURL, "--watch-cache-bytes="+strconv.Itoa(bound), "--watch-stall-timeout=2s")
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cms := cs.CoreV1().ConfigMaps("default")

	first, err := cms.Create(ctx, bigConfigMap("big-0", 1<<20, 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := heapInUse(t, api.URL)

	// A watcher that never reads: a raw connection that sends its request
	// and then takes nothing.
	conn, err := net.Dial("tcp", strings.TrimPrefix(api.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	fmt.Fprintf(conn, "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s HTTP/1.1\r\nHost: x\r\n\r\n", first.ResourceVersion)
	registered := func() float64 { return metric(t, api.URL, `apiserver_registered_watchers{resource="configmaps"}`) }
	testenv.Eventually(t, 10*time.Second, "the stalled watch registered", func() (bool, error) { return registered() >= 1, nil })

	// 40 updates of 1 MiB objects: 40 MiB through the cache.
	for i := 1; i <= 40; i++ {
		name := fmt.Sprintf("big-%d", i%4)
		cm := bigConfigMap(name, 1<<20, i)
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			cur, gerr := cms.Get(ctx, name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			cur.Data = cm.Data
			_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	peak := heapInUse(t, api.URL)
	cached := metric(t, api.URL, `apiserver_watch_cache_bytes{resource="configmaps"}`)
	t.Logf("watch cache of configmaps: %.1f MiB after 40 MiB of updates (bound %d MiB)", cached/(1<<20), bound>>20)
	if cached > bound {
		t.Errorf("the watch cache holds %.1f MiB, over its %d MiB bound", cached/(1<<20), bound>>20)
	}
	// A watch from before the evicted events: 410 in the stream.
	code, _, body := do(t, http.DefaultClient, "GET", api.URL+"/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion="+first.ResourceVersion, "", "")
	if code != 200 || !strings.Contains(string(body), `"code":410`) {
		t.Errorf("watch from an evicted version: HTTP %d %.200s, want a 410 in the stream", code, body)
	}

	stalled := time.Now()
	testenv.Eventually(t, 30*time.Second, "the watcher that never reads closed", func() (bool, error) { return registered() == 0, nil })
	closedIn := time.Since(stalled).Round(time.Millisecond)
	for i := range 4 {
		_ = cms.Delete(ctx, fmt.Sprintf("big-%d", i), metav1.DeleteOptions{})
	}
	// The ring still holds up to its bound of the deleted objects' history.
	var after float64
	testenv.Eventually(t, 30*time.Second, "the heap back within 50 MB", func() (bool, error) {
		after = heapInUse(t, api.URL)
		return after-base < 50<<20, nil
	})
	rss, _ := api.Memory(t)
	t.Logf("heap in use: %.1f MB before, %.1f MB with the stalled watcher, %.1f MB after it was closed (%v) and the objects deleted; RSS %.1f MB",
		base/1e6, peak/1e6, after/1e6, closedIn, float64(rss)/1e6)
}
