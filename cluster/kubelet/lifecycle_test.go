package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func httpProbe(path string, period int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
		PeriodSeconds: period, TimeoutSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1}
}

func TestReadinessProbeGatesReady(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-r", nil, nil)
	createPod(t, c, newPod("slow", "node-r", withEnv("START_DELAY", "2s"), func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1)
	}))
	created := time.Now()
	p := waitPod(t, c, "slow", 5*time.Second, "running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	if podReady(p) || p.Status.ContainerStatuses[0].Ready {
		t.Fatalf("ready before its readiness probe passed: %+v", p.Status)
	}
	if c := findCondition(p.Status.Conditions, corev1.ContainersReady); c == nil || c.Reason != "ContainersNotReady" {
		t.Errorf("ContainersReady %+v", c)
	}
	p = waitPod(t, c, "slow", 10*time.Second, "ready", podReady)
	if d := time.Since(created); d < 2*time.Second {
		t.Errorf("ready after %v, before the 2 s start delay", d)
	}
}

func TestExecProbe(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-x", nil, nil)
	createPod(t, c, newPod("exec-ok", "node-x", func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ready"}}}, PeriodSeconds: 1}
	}))
	createPod(t, c, newPod("exec-bad", "node-x", func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}}, PeriodSeconds: 1}
	}))
	waitPod(t, c, "exec-ok", 5*time.Second, "ready", podReady)
	time.Sleep(1500 * time.Millisecond)
	if p, _ := getPod(c, "exec-bad"); p == nil || podReady(p) || p.Status.Phase != corev1.PodRunning {
		t.Errorf("exec-bad: %+v", p.Status)
	}
}

func TestLivenessFailureRestarts(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-v", nil, nil)
	createPod(t, c, newPod("sick", "node-v", withEnv("SIM_UNHEALTHY_AFTER", "300ms"), func(p *corev1.Pod) {
		p.Spec.Containers[0].LivenessProbe = httpProbe("/healthz", 1)
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}))
	p := waitPod(t, c, "sick", 15*time.Second, "restarted twice", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 2
	})
	cs := p.Status.ContainerStatuses[0]
	if cs.LastTerminationState.Terminated == nil {
		t.Errorf("lastState %+v, want terminated", cs.LastTerminationState)
	}
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s", p.Status.Phase)
	}
}

func TestRestartPolicies(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-p", nil, nil)
	exit := func(code string, policy corev1.RestartPolicy) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.RestartPolicy = policy
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "100ms"}, {Name: "SIM_EXIT_CODE", Value: code}}
		}
	}
	createPod(t, c, newPod("crash", "node-p", exit("1", corev1.RestartPolicyAlways)))
	createPod(t, c, newPod("fail", "node-p", exit("3", corev1.RestartPolicyNever)))
	createPod(t, c, newPod("done", "node-p", exit("0", corev1.RestartPolicyOnFailure)))
	createPod(t, c, newPod("retry", "node-p", exit("1", corev1.RestartPolicyOnFailure)))

	p := waitPod(t, c, "crash", 15*time.Second, "in CrashLoopBackOff", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 2 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff"
	})
	if p.Status.Phase != corev1.PodRunning || p.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("crash: phase %s status %+v", p.Status.Phase, p.Status.ContainerStatuses[0])
	}
	p = waitPod(t, c, "fail", 10*time.Second, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if cs := p.Status.ContainerStatuses[0]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 3 || cs.RestartCount != 0 {
		t.Errorf("fail: %+v", cs)
	}
	waitPod(t, c, "done", 10*time.Second, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	waitPod(t, c, "retry", 10*time.Second, "restarted", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1 && p.Status.Phase == corev1.PodRunning
	})
}

func TestImagePullPolicies(t *testing.T) {
	c := testenv.StartCluster(t)
	h := startHollow(t, c, "node-i", nil, nil)
	createPod(t, c, newPod("never", "node-i", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever }))
	createPod(t, c, newPod("missing", "node-i", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.kstep.local/app:missing" }))
	waitPod(t, c, "never", 5*time.Second, "ErrImageNeverPull", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ErrImageNeverPull"
	})
	waitPod(t, c, "missing", 5*time.Second, "ImagePullBackOff", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ImagePullBackOff" && p.Status.Phase == corev1.PodPending
	})
	// IfNotPresent pulls once for many pods; Always pulls per container.
	for _, n := range []string{"a1", "a2", "a3"} {
		createPod(t, c, newPod(n, "node-i", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.kstep.local/app:v2" }))
	}
	for _, n := range []string{"a1", "a2", "a3"} {
		waitPod(t, c, n, 5*time.Second, "ready", podReady)
	}
	pulls := h.sim.Calls()["PullImage"]
	createPod(t, c, newPod("always", "node-i", func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = "registry.kstep.local/app:v2"
		p.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	}))
	waitPod(t, c, "always", 5*time.Second, "ready", podReady)
	if got := h.sim.Calls()["PullImage"]; got != pulls+1 {
		t.Errorf("PullImage calls %d after Always, want %d", got, pulls+1)
	}
}

func TestGracefulDeletionCompletes(t *testing.T) {
	c := testenv.StartCluster(t)
	h := startHollow(t, c, "node-d", nil, nil)
	createPod(t, c, newPod("bye", "node-d"))
	waitPod(t, c, "bye", 5*time.Second, "ready", podReady)
	ctx := context.Background()
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, "bye", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](5)}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "pod object gone", func() (bool, error) {
		_, err := getPod(c, "bye")
		return apierrors.IsNotFound(err), nil
	}, fastPoll)
	if ready, notReady := h.sim.Sandboxes(); ready+notReady != 0 {
		t.Errorf("sandboxes left: %d ready, %d not", ready, notReady)
	}
	if calls := h.sim.Calls(); calls["StopContainer"] == 0 || calls["StopPodSandbox"] == 0 || calls["RemovePodSandbox"] == 0 {
		t.Errorf("calls %v", calls)
	}
}

func TestForceDeletedPodIsRemoved(t *testing.T) {
	c := testenv.StartCluster(t)
	h := startHollow(t, c, "node-f", nil, nil)
	createPod(t, c, newPod("gone", "node-f"))
	waitPod(t, c, "gone", 5*time.Second, "ready", podReady)
	if err := c.Client.CoreV1().Pods("default").Delete(context.Background(), "gone", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "sandbox removed", func() (bool, error) {
		r, n := h.sim.Sandboxes()
		return r+n == 0, nil
	}, fastPoll)
}

// A restarted kubelet adopts what the runtime runs: no new sandbox, no
// restart, the pods stay Ready; a pod force-deleted while it was down is
// an orphan and goes.
func TestRestartAdoptsAndCleansOrphans(t *testing.T) {
	c := testenv.StartCluster(t)
	sim, err := simruntime.New("node-k", simruntime.NodeCIDRFor("node-k"), simruntime.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := startHollow(t, c, "node-k", sim, nil)
	names := []string{"p0", "p1", "p2", "p3", "p4"}
	for _, n := range names {
		createPod(t, c, newPod(n, "node-k", func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1) }))
	}
	ips := map[string]string{}
	for _, n := range names {
		ips[n] = waitPod(t, c, n, 10*time.Second, "ready", podReady).Status.PodIP
	}
	h.stop()
	if ready, _ := sim.Sandboxes(); ready != 5 {
		t.Fatalf("%d ready sandboxes before restart", ready)
	}
	// While the kubelet is down, p4 is deleted by force.
	if err := c.Client.CoreV1().Pods("default").Delete(context.Background(), "p4", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	before := sim.Calls()
	h2 := startHollow(t, c, "node-k", sim, nil)
	testenv.Eventually(t, 5*time.Second, "orphan removed", func() (bool, error) {
		r, n := sim.Sandboxes()
		return r == 4 && n == 0, nil
	}, fastPoll)
	time.Sleep(1500 * time.Millisecond) // a few relists and probe periods
	after := sim.Calls()
	for _, m := range []string{"RunPodSandbox", "CreateContainer", "StartContainer"} {
		if after[m] != before[m] {
			t.Errorf("%s called %d times after the restart", m, after[m]-before[m])
		}
	}
	if n := after["StopContainer"] - before["StopContainer"]; n != 1 {
		t.Errorf("StopContainer called %d times after the restart, want 1 (the orphan's)", n)
	}
	for _, n := range names[:4] {
		p, err := getPod(c, n)
		if err != nil {
			t.Fatal(err)
		}
		if !podReady(p) || p.Status.PodIP != ips[n] || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("%s after restart: ready=%v ip=%s (was %s) restarts=%d", n, podReady(p), p.Status.PodIP, ips[n], p.Status.ContainerStatuses[0].RestartCount)
		}
	}
	if got := steps(h2.trace, "p0"); len(got) != 0 {
		t.Errorf("adopted pod stamped again: %v", got)
	}
}
