package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestPodCreate(t *testing.T) {
	httpProbe := func() *corev1.Probe {
		// As defaults.Apply leaves it.
		return &corev1.Probe{
			ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http"), Scheme: "HTTP"}},
			TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"valid", func(p *corev1.Pod) {}, nil},
		{"no containers", func(p *corev1.Pod) { p.Spec.Containers = nil }, []want{"Required spec.containers"}},
		{"container name not a label", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App_1" },
			[]want{"Invalid spec.containers[0].name: a lowercase RFC 1123 label"}},
		{"container name missing", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, []want{"Required spec.containers[0].name"}},
		{"duplicate container names", func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Ports = nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, []want{`Duplicate spec.containers[1].name: "app"`}},
		{"init container name clashes", func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Ports = nil
			p.Spec.InitContainers = []corev1.Container{c}
		}, []want{`Duplicate spec.initContainers[0].name: "app"`}},
		{"image required", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []want{"Required spec.containers[0].image"}},
		{"image whitespace", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" },
			[]want{"Invalid spec.containers[0].image: must not have leading or trailing whitespace"}},
		{"port out of range", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 },
			[]want{"Invalid spec.containers[0].ports[0].containerPort: must be between 1 and 65535, inclusive"}},
		{"port missing", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 },
			[]want{"Required spec.containers[0].ports[0].containerPort"}},
		{"port protocol", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "HTTP" },
			[]want{`NotSupported spec.containers[0].ports[0].protocol: supported values: "SCTP", "TCP", "UDP"`}},
		{"port name", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Name = "this-name-is-too-long" },
			[]want{"Invalid spec.containers[0].ports[0].name: must be no more than 15 characters"}},
		{"duplicate port name", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: "TCP"})
		}, []want{`Duplicate spec.containers[0].ports[1].name: "http"`}},
		{"host port conflict", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080, Protocol: "TCP"}, {ContainerPort: 81, HostPort: 8080, Protocol: "TCP"}}
		}, []want{"Duplicate spec.containers[0].ports[1].hostPort"}},
		{"requests above limits", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": qty("500m"), "memory": qty("1Gi")},
				Requests: corev1.ResourceList{"cpu": qty("1"), "memory": qty("1Gi")},
			}
		}, []want{`Invalid spec.containers[0].resources.requests: "1": must be less than or equal to cpu limit of 500m`}},
		{"requests at limits", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"cpu": qty("1")}, Requests: corev1.ResourceList{"cpu": qty("1")}}
		}, nil},
		{"negative request", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"memory": qty("-1")}
		}, []want{"Invalid spec.containers[0].resources.requests[memory]: must be greater than or equal to 0"}},
		{"unknown resource", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"gpu": qty("1")}
		}, []want{"Invalid spec.containers[0].resources.requests[gpu]: must be a standard resource for containers"}},
		{"extended resource needs equal limit", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"example.com/gpu": qty("2")}, Requests: corev1.ResourceList{"example.com/gpu": qty("1")}}
		}, []want{"Invalid spec.containers[0].resources.requests: must be equal to example.com/gpu limit of 2"}},
		{"restartPolicy", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" },
			[]want{`NotSupported spec.restartPolicy: supported values: "Always", "OnFailure", "Never"`}},
		{"restartPolicy OnFailure", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, nil},
		{"dnsPolicy", func(p *corev1.Pod) { p.Spec.DNSPolicy = "Google" }, []want{"NotSupported spec.dnsPolicy"}},
		{"probe with one handler", func(p *corev1.Pod) { p.Spec.Containers[0].LivenessProbe = httpProbe() }, nil},
		{"probe without handler", func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 10}
		}, []want{"Required spec.containers[0].readinessProbe: must specify a handler type"}},
		{"probe with two handlers", func(p *corev1.Pod) {
			pr := httpProbe()
			pr.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}
			p.Spec.Containers[0].LivenessProbe = pr
		}, []want{"Forbidden spec.containers[0].livenessProbe.tcpSocket: may not specify more than 1 handler type"}},
		{"liveness successThreshold", func(p *corev1.Pod) {
			pr := httpProbe()
			pr.SuccessThreshold = 3
			p.Spec.Containers[0].LivenessProbe = pr
		}, []want{"Invalid spec.containers[0].livenessProbe.successThreshold: must be 1"}},
		{"readiness successThreshold may be more", func(p *corev1.Pod) {
			pr := httpProbe()
			pr.SuccessThreshold = 3
			p.Spec.Containers[0].ReadinessProbe = pr
		}, nil},
		{"negative probe period", func(p *corev1.Pod) {
			pr := httpProbe()
			pr.PeriodSeconds = -1
			p.Spec.Containers[0].StartupProbe = pr
		}, []want{"Invalid spec.containers[0].startupProbe.periodSeconds: must be greater than or equal to 0"}},
		{"probe bad port", func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(0)}}}
		}, []want{"Invalid spec.containers[0].livenessProbe.tcpSocket.port"}},
		{"probe on init container", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", ImagePullPolicy: "Always",
				TerminationMessagePolicy: "File", LivenessProbe: httpProbe()}}
		}, []want{"Forbidden spec.initContainers[0].livenessProbe: may not be set for init containers without restartPolicy=Always"}},
		{"sidecar may have probes", func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "side", Image: "envoy", ImagePullPolicy: "Always",
				TerminationMessagePolicy: "File", RestartPolicy: &always, ReadinessProbe: &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}}
		}, nil},
		{"restartPolicy on regular container", func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.Containers[0].RestartPolicy = &always
		}, []want{"Forbidden spec.containers[0].restartPolicy: may not be set for non-init containers"}},
		{"env name", func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}} },
			[]want{"Invalid spec.containers[0].env[0].name"}},
		{"env value and valueFrom", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
		}, []want{"Invalid spec.containers[0].env[0].valueFrom: may not be specified when `value` is not empty"}},
		{"env fieldRef unsupported", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.priority"}}}}
		}, []want{"NotSupported spec.containers[0].env[0].valueFrom.fieldRef.fieldPath"}},
		{"env fieldRef label", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['app']"}}}}
		}, nil},
		{"volume mount without volume", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, []want{`NotFound spec.containers[0].volumeMounts[0].name: "data"`}},
		{"volume mount ok", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
		}, nil},
		{"subPath escapes", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "../etc"}}
		}, []want{"Invalid spec.containers[0].volumeMounts[0].subPath: must not contain '..'"}},
		{"volume with two sources", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}
		}, []want{"Forbidden spec.volumes[0].emptyDir: may not specify more than 1 volume type"}},
		{"duplicate volume", func(p *corev1.Pod) {
			v := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
			p.Spec.Volumes = []corev1.Volume{v, v}
		}, []want{`Duplicate spec.volumes[1].name: "data"`}},
		{"secret volume without name", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}}}
		}, []want{"Required spec.volumes[0].secret.secretName"}},
		{"toleration", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists", Value: "v"}}
		}, []want{"Invalid spec.tolerations[0].operator: value must be empty when `operator` is 'Exists'"}},
		{"nodeName", func(p *corev1.Pod) { p.Spec.NodeName = "Node_1" }, []want{"Invalid spec.nodeName"}},
		{"activeDeadlineSeconds zero", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(0)) },
			[]want{"Invalid spec.activeDeadlineSeconds: must be between 1 and 2147483647, inclusive"}},
		{"terminationGracePeriodSeconds required", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil },
			[]want{"Required spec.terminationGracePeriodSeconds"}},
		{"hostNetwork port mismatch", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, []want{"Invalid spec.containers[0].ports[0].hostPort: must match `containerPort` when `hostNetwork` is true"}},
		{"ephemeral containers on create", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"}}}
		}, []want{"Forbidden spec.ephemeralContainers: cannot be set on create"}},
		{"nodeName with scheduling gates", func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}, []want{"Forbidden spec.nodeName: cannot be set until all schedulingGates have been cleared"}},
		{"serviceAccountName", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "Bad"; p.Spec.DeprecatedServiceAccount = "Bad" },
			[]want{"Invalid spec.serviceAccountName"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validPod()
			tc.mutate(p)
			expectErrs(t, ValidateCreate(p), tc.want...)
		})
	}
}

func TestPodUpdate(t *testing.T) {
	const notUpdatable = "Forbidden spec: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds`"
	withToleration := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: "Exists", Effect: "NoSchedule"}}
		return p
	}
	tests := []struct {
		name   string
		old    func() *corev1.Pod
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"no change", storedPod, func(p *corev1.Pod) {}, nil},
		{"image", storedPod, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }, nil},
		{"image emptied", storedPod, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" },
			[]want{"Required spec.containers[0].image"}},
		{"init container image", func() *corev1.Pod {
			p := storedPod()
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1", ImagePullPolicy: "IfNotPresent", TerminationMessagePolicy: "File"}}
			return p
		}, func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "busybox:2" }, nil},
		{"activeDeadlineSeconds set", storedPod, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(60)) }, nil},
		{"activeDeadlineSeconds raised", func() *corev1.Pod {
			p := storedPod()
			p.Spec.ActiveDeadlineSeconds = ptr(int64(60))
			return p
		}, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(120)) },
			[]want{"Invalid spec.activeDeadlineSeconds: must be less than or equal to previous value"}},
		{"toleration added", func() *corev1.Pod { return withToleration(storedPod()) }, func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: "Exists"})
		}, nil},
		{"toleration removed", func() *corev1.Pod { return withToleration(storedPod()) }, func(p *corev1.Pod) {
			p.Spec.Tolerations = nil
		}, []want{"Forbidden spec.tolerations: existing toleration can not be modified except its tolerationSeconds"}},
		{"terminationGracePeriodSeconds from negative to 1", func() *corev1.Pod {
			p := storedPod()
			p.Spec.TerminationGracePeriodSeconds = ptr(int64(-1))
			return p
		}, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(1)) }, nil},
		{"terminationGracePeriodSeconds changed", storedPod, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(10)) },
			[]want{notUpdatable}},
		{"container port changed", storedPod, func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8080 },
			[]want{notUpdatable}},
		{"nodeName set by update", storedPod, func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }, []want{notUpdatable}},
		{"nodeName changed", func() *corev1.Pod {
			p := storedPod()
			p.Spec.NodeName = "node-1"
			return p
		}, func(p *corev1.Pod) { p.Spec.NodeName = "node-2" }, []want{notUpdatable}},
		{"container added", storedPod, func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "x", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"})
		}, []want{"Forbidden spec.containers: pod updates may not add or remove containers"}},
		{"scheduling gate removed", func() *corev1.Pod {
			p := storedPod()
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
			return p
		}, func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }, nil},
		{"labels change", storedPod, func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := tc.old()
			p := old.DeepCopy()
			tc.mutate(p)
			errs := ValidateUpdate(p, old)
			expectErrs(t, errs, tc.want...)
			for _, e := range errs {
				if e.Field == "spec" && !strings.Contains(e.Detail, "\n") {
					t.Errorf("spec error without a diff: %v", e)
				}
			}
		})
	}
}

func TestPodStatusUpdate(t *testing.T) {
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	tests := []struct {
		name   string
		old    func() *corev1.Pod
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"phase and IPs", storedPod, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.PodIP = "10.0.0.5"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}}
			p.Status.HostIP = "192.168.1.2"
			p.Status.HostIPs = []corev1.HostIP{{IP: "192.168.1.2"}}
		}, nil},
		{"bad pod IP", storedPod, func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0"}} },
			[]want{"Invalid status.podIPs[0].ip"}},
		{"two IPv4 pod IPs", storedPod, func(p *corev1.Pod) {
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "10.0.0.6"}}
		}, []want{"Invalid status.podIPs: may specify no more than one IP for each IP family"}},
		{"nodeName changed", storedPod, func(p *corev1.Pod) { p.Spec.NodeName = "node-1" },
			[]want{"Forbidden status.nodeName: may not be changed directly"}},
		{"custom condition type", storedPod, func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: "True"}}
		}, []want{"Invalid status.conditions[0].type"}},
		{"terminated container restarts under Never", func() *corev1.Pod {
			p := storedPod()
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated}}
			return p
		}, func(p *corev1.Pod) { p.Status.ContainerStatuses[0].State = running },
			[]want{"Forbidden status.containerStatuses[0].state: may not be transitioned to non-terminated state"}},
		{"terminated container restarts under Always", func() *corev1.Pod {
			p := storedPod()
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated}}
			return p
		}, func(p *corev1.Pod) { p.Status.ContainerStatuses[0].State = running }, nil},
		{"qosClass changed", func() *corev1.Pod {
			p := storedPod()
			p.Status.QOSClass = corev1.PodQOSBestEffort
			return p
		}, func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSGuaranteed },
			[]want{"Invalid status.qosClass: field is immutable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := tc.old()
			p := old.DeepCopy()
			tc.mutate(p)
			expectErrs(t, ValidateStatusUpdate(p, old), tc.want...)
		})
	}
}

func TestBinding(t *testing.T) {
	tests := []struct {
		name   string
		target corev1.ObjectReference
		want   []want
	}{
		{"node", corev1.ObjectReference{Kind: "Node", Name: "node-1"}, nil},
		{"no kind", corev1.ObjectReference{Name: "node-1"}, nil},
		{"no name", corev1.ObjectReference{Kind: "Node"}, []want{"Required target.name"}},
		{"wrong kind", corev1.ObjectReference{Kind: "Pod", Name: "x"}, []want{`NotSupported target.kind: supported values: "Node", "<empty>"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectErrs(t, ValidateCreate(&corev1.Binding{ObjectMeta: meta("web"), Target: tc.target}), tc.want...)
		})
	}
}
