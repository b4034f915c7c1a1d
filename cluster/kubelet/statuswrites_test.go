package kubelet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func statusWrites() uint64 {
	var m dto.Metric
	_ = statusWriteDuration.Write(&m)
	return m.GetHistogram().GetSampleCount()
}

// With realistic latencies a pod with a readiness probe is written three
// times (Pending, Running, Ready), and syncs that change nothing write
// nothing, even while the informer lags behind the kubelet's own writes.
func TestStatusWrittenOnlyOnChange(t *testing.T) {
	c := testenv.StartCluster(t)
	sim, err := simruntime.New("node-w", simruntime.NodeCIDR(9), simruntime.Profiles["realistic"], nil)
	if err != nil {
		t.Fatal(err)
	}
	h := startHollow(t, c, "node-w", sim, nil)
	before := statusWrites()
	createPod(t, c, newPod("w", "node-w", withEnv("START_DELAY", "1s"), func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1) }))
	p := waitPod(t, c, "w", 10*time.Second, "ready", podReady)
	time.Sleep(500 * time.Millisecond)
	ready := statusWrites()
	for i := 0; i < 5; i++ {
		h.k.podChanged(p.UID)
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if n := ready - before; n > 3 {
		t.Errorf("%d status writes to Ready, want at most 3", n)
	}
	if n := statusWrites() - ready; n != 0 {
		t.Errorf("%d status writes by syncs that changed nothing", n)
	}
}

// On a runtime that answers at once a pod with a readiness probe is written
// once, Ready: the sync's "being created" status is provisional and its
// outcome replaces it, and the first readiness probe runs in the sync that
// started the container (prober.Manager.ProbeNow), so no "Running, not
// Ready" write goes out a moment before the verdict. With a sandbox that
// takes longer than ProvisionalStatusDelay the "being created" status is
// still reported while the sandbox is made.
func TestStatusWrittenOnceWhenTheSyncIsQuick(t *testing.T) {
	c := testenv.StartCluster(t)
	zero, err := simruntime.New("node-q", simruntime.NodeCIDR(10), simruntime.Profiles["zero"], nil)
	if err != nil {
		t.Fatal(err)
	}
	startHollow(t, c, "node-q", zero, nil)
	before := statusWrites()
	createPod(t, c, newPod("q", "node-q", func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1) }))
	waitPod(t, c, "q", 10*time.Second, "ready", podReady)
	time.Sleep(300 * time.Millisecond) // a provisional write, were it due, would be out by now
	if n := statusWrites() - before; n != 1 {
		t.Errorf("%d status writes to Ready on a zero-latency runtime, want 1", n)
	}

	slow, err := simruntime.New("node-s", simruntime.NodeCIDR(11), simruntime.Config{Latency: map[string]simruntime.Model{
		"RunPodSandbox": {Dist: "fixed", Value: 600 * time.Millisecond}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	startHollow(t, c, "node-s", slow, nil)
	createPod(t, c, newPod("s", "node-s"))
	waitPod(t, c, "s", 5*time.Second, "reported as being created", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodPending && p.Status.HostIP != ""
	})
	waitPod(t, c, "s", 10*time.Second, "ready", podReady)
}

// loseReadyReply passes every request on, except that the reply to the
// first status write that makes a pod Ready is lost: the write lands, the
// kubelet hears an error.
type loseReadyReply struct {
	rt   http.RoundTripper
	lost atomic.Bool
}

func (l *loseReadyReply) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPatch || !strings.HasSuffix(req.URL.Path, "/status") || req.GetBody == nil || l.lost.Load() {
		return l.rt.RoundTrip(req)
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(body)
	if !bytes.Contains(b, []byte(`"type":"Ready","status":"True"`)) || !l.lost.CompareAndSwap(false, true) {
		return l.rt.RoundTrip(req)
	}
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("test: the write whose reply is lost failed: %s", resp.Status)
	}
	return nil, errors.New("test: the reply was lost")
}

// A status write that lands but whose reply is lost still gets its step
// stamped, once the kubelet's informer shows the status persisted: the
// pod does not lack ⑧ (a saturated run lost 116 such replies when its
// hollow nodes failed over between apiservers, and was invalid).
func TestStatusPersistedStampedWhenTheReplyIsLost(t *testing.T) {
	c := testenv.StartCluster(t)
	lose := &loseReadyReply{}
	cfg := rest.CopyConfig(c.API.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { lose.rt = rt; return lose })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := startHollow(t, c, "node-lost", nil, func(k *Config) { k.Client = cs })
	failedBefore := testutil.ToFloat64(statusWriteErrors)
	createPod(t, c, newPod("lost", "node-lost", func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1) }))
	waitPod(t, c, "lost", 10*time.Second, "ready", podReady)
	if !lose.lost.Load() {
		t.Fatal("no Ready status write went out")
	}
	testenv.Eventually(t, 5*time.Second, "pod.status.persisted stamped", func() (bool, error) {
		return slices.Contains(steps(h.trace, "lost"), trace.PodStatusPersisted), nil
	}, fastPoll)
	if n := testutil.ToFloat64(statusWriteErrors) - failedBefore; n < 1 {
		t.Errorf("%v status writes failed, want the one whose reply was lost", n)
	}
	n := 0
	for _, s := range steps(h.trace, "lost") {
		if s == trace.PodStatusPersisted {
			n++
		}
	}
	if n != 1 {
		t.Errorf("pod.status.persisted stamped %d times", n)
	}
}
