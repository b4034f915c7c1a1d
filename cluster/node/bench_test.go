package node

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/images"
)

// benchPods is how many pods one iteration of BenchmarkCRIPodStart runs.
const benchPods = 20

// BenchmarkCRIPodStart measures the CRI floor of one real node, one pod at
// a time on a warm image, as crictl would: RunPodSandbox, CreateContainer
// and StartContainer of kstep-app, each pod stopped and removed before the
// next. It reports each call's p50 and p90 over 20 pods per iteration (so
// -benchtime 1x, as make bench-node runs it, is 20 pods). The floor
// documented for kstep's machines, with crictl: 335, 76 and 169 ms.
//
// Root on Linux with make build's binaries; not part of make test.
func BenchmarkCRIPodStart(b *testing.B) {
	rn := startRealNode(b, benchIndex)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	// Warm: the app image pulled, and one pod run and removed (which pulls
	// the pause image and loads the CNI plugins once).
	if _, err := rn.img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: images.AppV1}}); err != nil {
		b.Fatal(err)
	}
	if _, err := runAppPod(ctx, rn, "warm", nil); err != nil {
		b.Fatal(err)
	}
	rn.removeAllPods(b, ctx)

	var lat podLatencies
	iter := 0
	for b.Loop() {
		for i := range benchPods {
			p, err := runAppPod(ctx, rn, fmt.Sprintf("bench-%d-%d", iter, i), &lat)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rn.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
				b.Fatal(err)
			}
			if _, err := rn.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
				b.Fatal(err)
			}
		}
		iter++
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"sandbox", lat.sandbox}, {"create", lat.create}, {"start", lat.start}} {
		b.ReportMetric(ms(percentile(m.d, 0.50)), m.name+"-p50-ms")
		b.ReportMetric(ms(percentile(m.d, 0.90)), m.name+"-p90-ms")
	}
	b.Logf("%d pods: RunPodSandbox p50 %v, CreateContainer p50 %v, StartContainer p50 %v (documented crictl floor: 335 ms, 76 ms, 169 ms)",
		len(lat.sandbox), percentile(lat.sandbox, .5).Round(time.Millisecond),
		percentile(lat.create, .5).Round(time.Millisecond), percentile(lat.start, .5).Round(time.Millisecond))
}

type podLatencies struct{ sandbox, create, start []time.Duration }

// runAppPod runs a sandbox and starts kstep-app in it, recording each CRI
// call's latency in lat (if not nil).
func runAppPod(ctx context.Context, rn *realNode, name string, lat *podLatencies) (pod, error) {
	var p pod
	sb := sandboxConfig(name, rn.dir+"/pods")
	t0 := time.Now()
	rs, err := rn.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sb})
	if err != nil {
		return p, fmt.Errorf("RunPodSandbox %s: %w", name, err)
	}
	t1 := time.Now()
	p.sandboxID = rs.PodSandboxId
	cc, err := rn.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: p.sandboxID, Config: appContainerConfig(images.AppV1), SandboxConfig: sb})
	if err != nil {
		return p, fmt.Errorf("CreateContainer %s: %w", name, err)
	}
	t2 := time.Now()
	p.containerID = cc.ContainerId
	if _, err := rn.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.containerID}); err != nil {
		return p, fmt.Errorf("StartContainer %s: %w", name, err)
	}
	t3 := time.Now()
	if lat != nil {
		lat.sandbox = append(lat.sandbox, t1.Sub(t0))
		lat.create = append(lat.create, t2.Sub(t1))
		lat.start = append(lat.start, t3.Sub(t2))
	}
	return p, nil
}

// percentile is the nearest-rank q-quantile of ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
