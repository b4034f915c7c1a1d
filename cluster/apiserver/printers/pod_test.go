package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podsGR = schema.GroupResource{Resource: "pods"}

func TestPodColumns(t *testing.T) {
	checkColumns(t, podsGR, &corev1.Pod{}, []column{
		{"Name", "string", 0},
		{"Ready", "string", 0},
		{"Status", "string", 0},
		{"Restarts", "string", 0},
		{"Age", "string", 0},
		{"IP", "string", 1},
		{"Node", "string", 1},
		{"Nominated Node", "string", 1},
		{"Readiness Gates", "string", 1},
	})
}

// pod builds a pod named p with one container per name in containers.
func pod(phase corev1.PodPhase, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: objMeta("p"), Status: corev1.PodStatus{Phase: phase}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: c + ":1"})
	}
	return p
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string, exitCode, signal int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exitCode, Signal: signal}}
}

// lastTerminated is a LastTerminationState that finished d ago.
func lastTerminated(d time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: ago(d)}}
}

func cond(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s}
}

func TestPodCells(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name     string
		pod      func() *corev1.Pod
		ready    string
		status   string
		restarts string
		wide     [4]string // IP, NODE, NOMINATED NODE, READINESS GATES
	}{{
		name:  "unscheduled pending",
		pod:   func() *corev1.Pod { return pod(corev1.PodPending, "app") },
		ready: "0/1", status: "Pending", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "nominated node",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Status.NominatedNodeName = "n2"
			return p
		},
		ready: "0/1", status: "Pending", restarts: "0",
		wide: [4]string{"<none>", "<none>", "n2", "<none>"},
	}, {
		name: "scheduling gated",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
			return p
		},
		ready: "0/1", status: "SchedulingGated", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "container creating",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.NodeName = "n1"
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("ContainerCreating")}}
			return p
		},
		ready: "0/1", status: "ContainerCreating", restarts: "0",
		wide: [4]string{"<none>", "n1", "<none>", "<none>"},
	}, {
		name: "running with readiness gates",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.Spec.NodeName = "n1"
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/missing"}}
			p.Status.PodIP = "10.244.0.5"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "fd00::5"}}
			p.Status.Conditions = []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue), cond("example.com/lb", corev1.ConditionTrue)}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}
			return p
		},
		ready: "1/1", status: "Running", restarts: "0",
		wide: [4]string{"10.244.0.5", "n1", "<none>", "1/2"},
	}, {
		name: "pod IP from podIPs only",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.Status.PodIPs = []corev1.PodIP{{IP: "fd00::7"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}
			return p
		},
		ready: "1/1", status: "Running", restarts: "0",
		wide: [4]string{"fd00::7", "<none>", "<none>", "<none>"},
	}, {
		name: "running but not ready",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app", "side")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "app", Ready: true, State: running()},
				{Name: "side", Ready: false, State: running()},
			}
			return p
		},
		ready: "1/2", status: "Running", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "crash looping",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "app", State: waiting("CrashLoopBackOff"), RestartCount: 5, LastTerminationState: lastTerminated(5 * time.Minute),
			}}
			return p
		},
		ready: "0/1", status: "CrashLoopBackOff", restarts: "5 (5m ago)",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "restarts without a termination time",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running(), RestartCount: 2}}
			return p
		},
		ready: "1/1", status: "Running", restarts: "2",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "restarts summed over containers, latest time wins",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "a", "b")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running(), RestartCount: 3, LastTerminationState: lastTerminated(3 * time.Hour)},
				{Name: "b", Ready: true, State: running(), RestartCount: 4, LastTerminationState: lastTerminated(90 * time.Second)},
			}
			return p
		},
		ready: "2/2", status: "Running", restarts: "7 (90s ago)",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "terminating",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.DeletionTimestamp = agoPtr(10 * time.Second)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}
			return p
		},
		ready: "1/1", status: "Terminating", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "deleted pod of a lost node",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.DeletionTimestamp = agoPtr(10 * time.Second)
			p.Status.Reason = "NodeLost"
			return p
		},
		ready: "0/1", status: "Unknown", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "deleted terminal pod is not Terminating",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodSucceeded, "app")
			p.DeletionTimestamp = agoPtr(10 * time.Second)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("Completed", 0, 0)}}
			return p
		},
		ready: "0/1", status: "Completed", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "completed",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodSucceeded, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("Completed", 0, 0)}}
			return p
		},
		ready: "0/1", status: "Completed", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "error",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodFailed, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("Error", 1, 0)}}
			return p
		},
		ready: "0/1", status: "Error", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "exit code without reason",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodFailed, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("", 137, 0)}}
			return p
		},
		ready: "0/1", status: "ExitCode:137", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "signal without reason",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodFailed, "app")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("", 0, 9)}}
			return p
		},
		ready: "0/1", status: "Signal:9", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "evicted",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodFailed, "app")
			p.Status.Reason = "Evicted"
			return p
		},
		ready: "0/1", status: "Evicted", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "completed container while another runs and pod is ready",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "a", "b")
			p.Status.Conditions = []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue)}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running()},
				{Name: "b", State: terminated("Completed", 0, 0)},
			}
			return p
		},
		ready: "1/2", status: "Running", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "completed container while another runs and pod is not ready",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "a", "b")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running()},
				{Name: "b", State: terminated("Completed", 0, 0)},
			}
			return p
		},
		ready: "1/2", status: "NotReady", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "completed container after another failed",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodFailed, "a", "b")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: terminated("Completed", 0, 0)},
				{Name: "b", State: terminated("Error", 2, 0)},
			}
			return p
		},
		ready: "0/2", status: "Error", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "second of two init containers running",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: terminated("Completed", 0, 0)},
				{Name: "i2", State: running()},
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("PodInitializing")}}
			return p
		},
		ready: "0/1", status: "Init:1/2", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init container waiting to initialize",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: waiting("PodInitializing")},
				{Name: "i2", State: waiting("PodInitializing")},
			}
			return p
		},
		ready: "0/1", status: "Init:0/2", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init container crash looping",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
				Name: "i1", State: waiting("CrashLoopBackOff"), RestartCount: 3, LastTerminationState: lastTerminated(2 * time.Minute),
			}}
			return p
		},
		ready: "0/1", status: "Init:CrashLoopBackOff", restarts: "3 (2m ago)",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init container failed",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: terminated("Error", 1, 0)}}
			return p
		},
		ready: "0/1", status: "Init:Error", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init container exit code without reason",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: terminated("", 2, 0)}}
			return p
		},
		ready: "0/1", status: "Init:ExitCode:2", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init container signal without reason",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: terminated("", 143, 15)}}
			return p
		},
		ready: "0/1", status: "Init:Signal:15", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "terminating while initializing",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.DeletionTimestamp = agoPtr(time.Second)
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: running()}}
			return p
		},
		ready: "0/1", status: "Terminating", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "sidecar counts toward ready and restarts",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "init"}, {Name: "proxy", RestartPolicy: &always}}
			p.Status.Conditions = []corev1.PodCondition{cond(corev1.PodInitialized, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue)}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "init", State: terminated("Completed", 0, 0), RestartCount: 1, LastTerminationState: lastTerminated(50 * time.Minute)},
				{Name: "proxy", State: running(), Ready: true, Started: ptr(true), RestartCount: 1, LastTerminationState: lastTerminated(10 * time.Minute)},
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}
			return p
		},
		// The completed init container's restart is not counted once the
		// pod is initialized; the sidecar's is.
		ready: "2/2", status: "Running", restarts: "1 (10m ago)",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "sidecar not started yet",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: running(), Started: ptr(false)}}
			return p
		},
		ready: "0/2", status: "Init:0/1", restarts: "0",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}, {
		name: "init restarts count while initializing",
		pod: func() *corev1.Pod {
			p := pod(corev1.PodPending, "app")
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: terminated("Completed", 0, 0), RestartCount: 2, LastTerminationState: lastTerminated(2 * 24 * time.Hour)},
				{Name: "i2", State: running()},
			}
			return p
		},
		ready: "0/1", status: "Init:1/2", restarts: "2 (2d ago)",
		wide: [4]string{"<none>", "<none>", "<none>", "<none>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := row(t, podsGR, tt.pod())
			want := []interface{}{"p", tt.ready, tt.status, tt.restarts, "60m", tt.wide[0], tt.wide[1], tt.wide[2], tt.wide[3]}
			checkCells(t, got, want)
		})
	}
}

func TestPodAge(t *testing.T) {
	for _, tt := range []struct {
		created metav1.Time
		want    string
	}{
		{metav1.Time{}, "<unknown>"},
		{ago(30 * time.Second), "30s"},
		{ago(5*time.Minute + 10*time.Second), "5m10s"},
		{ago(3*time.Hour + 20*time.Minute), "3h20m"},
		{ago(50 * time.Hour), "2d2h"},
		{ago(400 * 24 * time.Hour), "400d"},
		{metav1.NewTime(now.Add(time.Minute)), "<invalid>"},
	} {
		p := pod(corev1.PodPending, "app")
		p.CreationTimestamp = tt.created
		if got := row(t, podsGR, p)[4]; got != tt.want {
			t.Errorf("age of pod created %v: got %q, want %q", tt.created, got, tt.want)
		}
	}
}
