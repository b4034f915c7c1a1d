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
