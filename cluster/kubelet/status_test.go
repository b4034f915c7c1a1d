package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func always(string, string) bool { return true }
func never(string, string) bool  { return false }

func running(name, id string, attempt uint32) *containerState {
	return &containerState{id: id, sandboxID: "sb", name: name, attempt: attempt,
		state: runtimeapi.ContainerState_CONTAINER_RUNNING, startedAt: t0.UnixNano(), imageRef: "sha256:x"}
}

func exited(name, id string, attempt uint32, code int32) *containerState {
	return &containerState{id: id, sandboxID: "sb", name: name, attempt: attempt,
		state: runtimeapi.ContainerState_CONTAINER_EXITED, startedAt: t0.UnixNano(), finishedAt: t0.Add(time.Second).UnixNano(), exitCode: code}
}

func input(policy corev1.RestartPolicy, cs ...*containerState) statusInput {
	pod := newPod("p", "n")
	pod.Spec.RestartPolicy = policy
	return statusInput{pod: pod, rt: &podRuntime{sandboxes: []*sandboxState{{id: "sb", ready: true, ip: "240.0.0.2"}}, containers: cs},
		waiting: map[string]waitingState{}, ready: always, started: always, nodeIP: "240.0.0.1", runtimeName: "sim", now: t0, startTime: t0}
}

func TestComputeStatus(t *testing.T) {
	tests := []struct {
		name      string
		in        statusInput
		phase     corev1.PodPhase
		ready     bool
		state     string // running, waiting:<reason>, terminated:<code>
		restarts  int32
		lastState bool
	}{
		{"nothing yet", input(corev1.RestartPolicyAlways), corev1.PodPending, false, "waiting:ContainerCreating", 0, false},
		{"running", input(corev1.RestartPolicyAlways, running("app", "c1", 0)), corev1.PodRunning, true, "running", 0, false},
		{"running, readiness pending", func() statusInput {
			in := input(corev1.RestartPolicyAlways, running("app", "c1", 0))
			in.ready = never
			return in
		}(), corev1.PodRunning, false, "running", 0, false},
		{"restarted", input(corev1.RestartPolicyAlways, running("app", "c2", 1), exited("app", "c1", 0, 1)), corev1.PodRunning, true, "running", 1, true},
		{"crash loop", func() statusInput {
			in := input(corev1.RestartPolicyAlways, exited("app", "c2", 1, 1))
			in.waiting["app"] = waitingState{reason: "CrashLoopBackOff"}
			return in
		}(), corev1.PodRunning, false, "waiting:CrashLoopBackOff", 1, true},
		{"never, failed", input(corev1.RestartPolicyNever, exited("app", "c1", 0, 2)), corev1.PodFailed, false, "terminated:2", 0, false},
		{"never, succeeded", input(corev1.RestartPolicyNever, exited("app", "c1", 0, 0)), corev1.PodSucceeded, false, "terminated:0", 0, false},
		{"onfailure, succeeded", input(corev1.RestartPolicyOnFailure, exited("app", "c1", 0, 0)), corev1.PodSucceeded, false, "terminated:0", 0, false},
		{"onfailure, failing", input(corev1.RestartPolicyOnFailure, exited("app", "c1", 0, 1)), corev1.PodRunning, false, "waiting:ContainerCreating", 0, true},
		{"image pull", func() statusInput {
			in := input(corev1.RestartPolicyAlways)
			in.waiting["app"] = waitingState{reason: "ErrImagePull", message: "nope"}
			return in
		}(), corev1.PodPending, false, "waiting:ErrImagePull", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := computeStatus(tt.in)
			if st.Phase != tt.phase {
				t.Errorf("phase %s, want %s", st.Phase, tt.phase)
			}
			if isReady(&st) != tt.ready {
				t.Errorf("ready %v, want %v", isReady(&st), tt.ready)
			}
			cs := st.ContainerStatuses[0]
			var got string
			switch {
			case cs.State.Running != nil:
				got = "running"
			case cs.State.Waiting != nil:
				got = "waiting:" + cs.State.Waiting.Reason
			case cs.State.Terminated != nil:
				got = "terminated:" + string(rune('0'+cs.State.Terminated.ExitCode))
			}
			if got != tt.state {
				t.Errorf("state %s, want %s", got, tt.state)
			}
			if cs.RestartCount != tt.restarts || (cs.LastTerminationState.Terminated != nil) != tt.lastState {
				t.Errorf("restarts %d lastState %+v", cs.RestartCount, cs.LastTerminationState)
			}
			// The five conditions of upstream's kubelet; the sandbox is up
			// (with its network) unless the pod has finished.
			for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
				if findCondition(st.Conditions, ct) == nil {
					t.Errorf("no %s condition: %+v", ct, st.Conditions)
				}
			}
			terminal := tt.phase == corev1.PodSucceeded || tt.phase == corev1.PodFailed
			if c := findCondition(st.Conditions, corev1.PodReadyToStartContainers); c != nil && (c.Status == corev1.ConditionTrue) == terminal {
				t.Errorf("PodReadyToStartContainers %s in phase %s", c.Status, st.Phase)
			}
			if st.PodIP != "240.0.0.2" || st.HostIP != "240.0.0.1" || st.StartTime == nil || !st.StartTime.Time.Equal(t0) {
				t.Errorf("ips %s %s start %v", st.PodIP, st.HostIP, st.StartTime)
			}
		})
	}
}

// No ready sandbox yet (being created, or its network failed): the pod is
// not ready to start containers.
func TestNotReadyToStartContainersWithoutASandbox(t *testing.T) {
	in := input(corev1.RestartPolicyAlways)
	in.rt.sandboxes = nil
	st := computeStatus(in)
	if c := findCondition(st.Conditions, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("PodReadyToStartContainers %+v, want False", c)
	}
}

// Transition times move only when a condition's status changes, and
// conditions the kubelet does not own are kept.
func TestComputeStatusTransitions(t *testing.T) {
	in := input(corev1.RestartPolicyAlways, running("app", "c1", 0))
	in.ready = never
	first := computeStatus(in)
	in.pod.Status = first
	in.pod.Status.Conditions = append(in.pod.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue})
	in.now = t0.Add(time.Minute)
	in.ready = always
	second := computeStatus(in)
	for _, c := range second.Conditions {
		switch c.Type {
		case corev1.PodReady, corev1.ContainersReady:
			if !c.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
				t.Errorf("%s transition %v, want the change's time", c.Type, c.LastTransitionTime)
			}
		case corev1.PodInitialized:
			if !c.LastTransitionTime.Time.Equal(t0) {
				t.Errorf("Initialized moved to %v", c.LastTransitionTime)
			}
		}
	}
	if findCondition(second.Conditions, "example.com/gate") == nil {
		t.Error("foreign condition dropped")
	}
	// A readiness gate not True keeps the pod not Ready.
	in.pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/other"}}
	if st := computeStatus(in); isReady(&st) || findCondition(st.Conditions, corev1.PodReady).Reason != "ReadinessGatesNotReady" {
		t.Errorf("readiness gate ignored: %+v", findCondition(st.Conditions, corev1.PodReady))
	}
	// A status computed twice at different nanoseconds is equal: times are
	// at the second.
	in.now = t0.Add(time.Minute + 300*time.Millisecond)
	a := computeStatus(in)
	in.pod.Status = a
	in.now = t0.Add(time.Minute + 700*time.Millisecond)
	b := computeStatus(in)
	if !ownedEqual(&a, &b) {
		t.Error("unchanged status differs")
	}
}

func TestTerminalPhaseSticks(t *testing.T) {
	in := input(corev1.RestartPolicyNever)
	in.pod.Status.Phase = corev1.PodSucceeded
	if st := computeStatus(in); st.Phase != corev1.PodSucceeded {
		t.Errorf("phase %s", st.Phase)
	}
}

func TestBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	b := NewBackoff(10*time.Second, 40*time.Second, clk)
	finish := t0
	if in, _ := b.InBackoffSince("k", finish); in {
		t.Fatal("first restart must be immediate")
	}
	b.Next("k", finish)
	// Second crash one second later: wait 10 s from its finish.
	finish = t0.Add(time.Second)
	clk.SetTime(finish)
	if in, left := b.InBackoffSince("k", finish); !in || left != 10*time.Second {
		t.Fatalf("in=%v left=%v, want 10s", in, left)
	}
	clk.Step(10 * time.Second)
	if in, _ := b.InBackoffSince("k", finish); in {
		t.Fatal("still in backoff after 10s")
	}
	b.Next("k", finish)
	for _, want := range []time.Duration{20 * time.Second, 40 * time.Second, 40 * time.Second} {
		if got := b.Delay("k"); got != want {
			t.Fatalf("delay %v, want %v", got, want)
		}
		b.Next("k", clk.Now())
	}
	// A container that ran for longer than 2×max starts over.
	clk.Step(81 * time.Second)
	if in, _ := b.InBackoffSince("k", clk.Now()); in {
		t.Error("backoff not reset after a long run")
	}
	b.Next("k", clk.Now())
	if got := b.Delay("k"); got != 10*time.Second {
		t.Errorf("delay after reset %v", got)
	}
	b.ForgetPrefix("k")
	if b.Delay("k") != 0 {
		t.Error("ForgetPrefix kept the key")
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	for in, want := range map[string]string{
		"plain": "plain", "$(A)": "1", "x$(B)y": "xtwoy", "$$(A)": "$(A)", "$(C)": "$(C)", "$(A": "$(A", "a$": "a$", "$x": "$x",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPullPolicy(t *testing.T) {
	for img, want := range map[string]corev1.PullPolicy{
		"app": corev1.PullAlways, "app:latest": corev1.PullAlways, "registry.kstep.local:5000/app": corev1.PullAlways,
		"registry.kstep.local:5000/app:v1": corev1.PullIfNotPresent, "app@sha256:abc": corev1.PullIfNotPresent,
	} {
		if got := pullPolicy(&corev1.Container{Image: img}); got != want {
			t.Errorf("%s: %s, want %s", img, got, want)
		}
	}
}

func TestParseTaints(t *testing.T) {
	ts, err := ParseTaints([]string{"dedicated=infra:NoSchedule", "gpu:NoExecute"})
	if err != nil || len(ts) != 2 || ts[0].Value != "infra" || ts[1].Key != "gpu" || ts[1].Effect != corev1.TaintEffectNoExecute {
		t.Fatalf("%+v %v", ts, err)
	}
	for _, bad := range []string{"novalue", "k=v:Sometimes", ":NoSchedule"} {
		if _, err := ParseTaints([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRVNewer(t *testing.T) {
	if !rvNewer("10", "9") || rvNewer("9", "10") || rvNewer("x", "1") || rvNewer("5", "5") {
		t.Error("rvNewer")
	}
	_ = metav1.Now
}
