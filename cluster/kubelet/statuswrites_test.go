package kubelet

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
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
	c := startCluster(t)
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
	c := startCluster(t)
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
