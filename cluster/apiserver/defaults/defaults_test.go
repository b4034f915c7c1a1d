package defaults

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func qty(s string) resource.Quantity { return resource.MustParse(s) }

func TestPodDefaults(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"cpu": qty("500m"), "memory": qty("128Mi")},
					Requests: corev1.ResourceList{"cpu": qty("100m")},
				},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
				Env: []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "scratch"},
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
			},
		},
	}
	Apply(pod)
	spec := pod.Spec
	c := spec.Containers[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"restartPolicy", spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"dnsPolicy", spec.DNSPolicy, corev1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", *spec.TerminationGracePeriodSeconds, int64(30)},
		{"schedulerName", spec.SchedulerName, "default-scheduler"},
		{"securityContext", *spec.SecurityContext, corev1.PodSecurityContext{}},
		{"enableServiceLinks", *spec.EnableServiceLinks, true},
		{"terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", c.TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"imagePullPolicy tagged", c.ImagePullPolicy, corev1.PullIfNotPresent},
		{"imagePullPolicy untagged init", spec.InitContainers[0].ImagePullPolicy, corev1.PullAlways},
		{"init terminationMessagePolicy", spec.InitContainers[0].TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"port protocol", c.Ports[0].Protocol, corev1.ProtocolTCP},
		{"hostPort untouched", c.Ports[0].HostPort, int32(0)},
		{"cpu request kept", c.Resources.Requests.Cpu().String(), "100m"},
		{"memory request from limit", c.Resources.Requests.Memory().String(), "128Mi"},
		{"probe timeoutSeconds", c.LivenessProbe.TimeoutSeconds, int32(1)},
		{"probe periodSeconds", c.LivenessProbe.PeriodSeconds, int32(10)},
		{"probe successThreshold", c.LivenessProbe.SuccessThreshold, int32(1)},
		{"probe failureThreshold", c.LivenessProbe.FailureThreshold, int32(3)},
		{"probe httpGet scheme", c.LivenessProbe.HTTPGet.Scheme, corev1.URISchemeHTTP},
		{"probe httpGet path", c.LivenessProbe.HTTPGet.Path, "/"},
		{"fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"volume without source is emptyDir", spec.Volumes[0].EmptyDir != nil, true},
		{"configMap defaultMode", *spec.Volumes[1].ConfigMap.DefaultMode, int32(0644)},
	}
	for _, ck := range checks {
		if !apiequality.Semantic.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestPodRequestsFromLimits(t *testing.T) {
	tests := []struct {
		name             string
		limits, requests corev1.ResourceList
		want             corev1.ResourceList
	}{
		{"no limits", nil, nil, nil},
		{"only limits", corev1.ResourceList{"cpu": qty("1")}, nil, corev1.ResourceList{"cpu": qty("1")}},
		{"requests kept", corev1.ResourceList{"cpu": qty("1")}, corev1.ResourceList{"cpu": qty("250m")}, corev1.ResourceList{"cpu": qty("250m")}},
		{"only requests", nil, corev1.ResourceList{"cpu": qty("250m")}, corev1.ResourceList{"cpu": qty("250m")}},
		{"milli rounding", corev1.ResourceList{"cpu": qty("0.0001")}, nil, corev1.ResourceList{"cpu": qty("1m")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
				Resources: corev1.ResourceRequirements{Limits: tc.limits, Requests: tc.requests}}}}}
			Apply(p)
			if got := p.Spec.Containers[0].Resources.Requests; !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("requests %v, want %v", got, tc.want)
			}
		})
	}
	// Templates do not get requests from limits (upstream: Pods only).
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": qty("1")}}}}}}}}
	Apply(rs)
	if r := rs.Spec.Template.Spec.Containers[0].Resources.Requests; r != nil {
		t.Errorf("template got requests %v", r)
	}
}

func TestImagePullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"docker.io/library/nginx", corev1.PullAlways},
		{"localhost:5000/app", corev1.PullAlways},
		{"localhost:5000/app:v2", corev1.PullIfNotPresent},
		{"registry.example.com:443/team/app:latest", corev1.PullAlways},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:1.27@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
		{"Registry.Example.com/app", corev1.PullAlways},
		{"Nginx", corev1.PullIfNotPresent}, // not a valid reference
		{"", corev1.PullIfNotPresent},
	}
	for _, tc := range tests {
		t.Run(tc.image, func(t *testing.T) {
			c := corev1.Container{Image: tc.image}
			setContainer(&c)
			if c.ImagePullPolicy != tc.want {
				t.Errorf("%q: got %s, want %s", tc.image, c.ImagePullPolicy, tc.want)
			}
			c.ImagePullPolicy = corev1.PullNever
			setContainer(&c)
			if c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("%q: an explicit policy was overwritten", tc.image)
			}
		})
	}
}

func TestPodHostNetworkPorts(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "i",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 9090}}}}}}
	Apply(p)
	if got := p.Spec.Containers[0].Ports[0].HostPort; got != 8080 {
		t.Errorf("hostPort %d, want 8080", got)
	}
}

func TestServiceDefaults(t *testing.T) {
	tests := []struct {
		name  string
		in    corev1.ServiceSpec
		check func(t *testing.T, s corev1.ServiceSpec)
	}{
		{"cluster IP service", corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "type", s.Type, corev1.ServiceTypeClusterIP)
				eq(t, "sessionAffinity", s.SessionAffinity, corev1.ServiceAffinityNone)
				eq(t, "protocol", s.Ports[0].Protocol, corev1.ProtocolTCP)
				eq(t, "targetPort", s.Ports[0].TargetPort, intstr.FromInt32(80))
				eq(t, "ipFamilyPolicy", *s.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack)
				eq(t, "internalTrafficPolicy", *s.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster)
				eq(t, "externalTrafficPolicy", s.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicy(""))
			}},
		{"named targetPort kept", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http"), Protocol: "UDP"}}},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "targetPort", s.Ports[0].TargetPort, intstr.FromString("http"))
				eq(t, "protocol", s.Ports[0].Protocol, corev1.ProtocolUDP)
			}},
		{"load balancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "externalTrafficPolicy", s.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicyCluster)
				eq(t, "allocateLoadBalancerNodePorts", *s.AllocateLoadBalancerNodePorts, true)
			}},
		{"ClientIP affinity", corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "timeout", *s.SessionAffinityConfig.ClientIP.TimeoutSeconds, int32(10800))
			}},
		{"headless with selector", corev1.ServiceSpec{ClusterIP: "None", Selector: map[string]string{"a": "b"}},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "clusterIPs", s.ClusterIPs, []string{"None"})
				eq(t, "ipFamilyPolicy", *s.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack)
			}},
		{"headless without selector", corev1.ServiceSpec{ClusterIP: "None"},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "ipFamilyPolicy", *s.IPFamilyPolicy, corev1.IPFamilyPolicyRequireDualStack)
			}},
		{"clusterIPs only", corev1.ServiceSpec{ClusterIPs: []string{"10.96.0.5"}},
			func(t *testing.T, s corev1.ServiceSpec) { eq(t, "clusterIP", s.ClusterIP, "10.96.0.5") }},
		{"ExternalName", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
			func(t *testing.T, s corev1.ServiceSpec) {
				eq(t, "ipFamilyPolicy", s.IPFamilyPolicy, (*corev1.IPFamilyPolicy)(nil))
				eq(t, "internalTrafficPolicy", s.InternalTrafficPolicy, (*corev1.ServiceInternalTrafficPolicy)(nil))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: tc.in}
			Apply(svc)
			tc.check(t, svc.Spec)
		})
	}
}

func TestAppsDefaults(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: *tmpl.DeepCopy()}}
	Apply(d)
	eq(t, "deployment replicas", *d.Spec.Replicas, int32(1))
	eq(t, "strategy", d.Spec.Strategy.Type, appsv1.RollingUpdateDeploymentStrategyType)
	eq(t, "maxSurge", *d.Spec.Strategy.RollingUpdate.MaxSurge, intstr.FromString("25%"))
	eq(t, "maxUnavailable", *d.Spec.Strategy.RollingUpdate.MaxUnavailable, intstr.FromString("25%"))
	eq(t, "revisionHistoryLimit", *d.Spec.RevisionHistoryLimit, int32(10))
	eq(t, "progressDeadlineSeconds", *d.Spec.ProgressDeadlineSeconds, int32(600))
	eq(t, "template restartPolicy", d.Spec.Template.Spec.RestartPolicy, corev1.RestartPolicyAlways)
	eq(t, "template pull policy", d.Spec.Template.Spec.Containers[0].ImagePullPolicy, corev1.PullAlways)
	eq(t, "template enableServiceLinks (Pod only)", d.Spec.Template.Spec.EnableServiceLinks, (*bool)(nil))

	recreate := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: new(int32), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	Apply(recreate)
	eq(t, "recreate has no rollingUpdate", recreate.Spec.Strategy.RollingUpdate, (*appsv1.RollingUpdateDeployment)(nil))
	eq(t, "explicit zero replicas kept", *recreate.Spec.Replicas, int32(0))

	partial := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptrTo(intstr.FromInt32(0))}}}}
	Apply(partial)
	eq(t, "maxSurge kept", *partial.Spec.Strategy.RollingUpdate.MaxSurge, intstr.FromInt32(0))
	eq(t, "maxUnavailable filled", *partial.Spec.Strategy.RollingUpdate.MaxUnavailable, intstr.FromString("25%"))

	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: *tmpl.DeepCopy()}}
	Apply(rs)
	eq(t, "replicaset replicas", *rs.Spec.Replicas, int32(1))
	eq(t, "replicaset template dnsPolicy", rs.Spec.Template.Spec.DNSPolicy, corev1.DNSClusterFirst)
}

func TestReplicationControllerDefaults(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: tmpl.DeepCopy()}}
	Apply(rc)
	eq(t, "replicas", *rc.Spec.Replicas, int32(1))
	eq(t, "selector from the template's labels", rc.Spec.Selector, map[string]string{"app": "web"})
	eq(t, "labels from the template's labels", rc.Labels, map[string]string{"app": "web"})
	eq(t, "template restartPolicy", rc.Spec.Template.Spec.RestartPolicy, corev1.RestartPolicyAlways)
	eq(t, "template pull policy", rc.Spec.Template.Spec.Containers[0].ImagePullPolicy, corev1.PullAlways)
	eq(t, "template enableServiceLinks (Pod only)", rc.Spec.Template.Spec.EnableServiceLinks, (*bool)(nil))
	rc.Spec.Selector["app"] = "changed"
	eq(t, "selector is a copy, not the template's map", rc.Spec.Template.Labels["app"], "web")

	set := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
		Spec: corev1.ReplicationControllerSpec{Replicas: new(int32), Selector: map[string]string{"app": "web", "tier": "fe"}, Template: tmpl.DeepCopy()}}
	Apply(set)
	eq(t, "explicit zero replicas kept", *set.Spec.Replicas, int32(0))
	eq(t, "selector kept", set.Spec.Selector, map[string]string{"app": "web", "tier": "fe"})
	eq(t, "labels kept", set.Labels, map[string]string{"team": "a"})

	bare := &corev1.ReplicationController{}
	Apply(bare)
	eq(t, "no template: selector stays empty", bare.Spec.Selector, map[string]string(nil))
	eq(t, "no template: replicas", *bare.Spec.Replicas, int32(1))
}

func TestOtherDefaults(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	Apply(ns)
	eq(t, "namespace phase", ns.Status.Phase, corev1.NamespaceActive)
	eq(t, "namespace name label", ns.Labels[corev1.LabelMetadataName], "team-a")
	terminating := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	Apply(terminating)
	eq(t, "namespace phase kept", terminating.Status.Phase, corev1.NamespaceTerminating)

	s := &corev1.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"b": "3", "c": "4"}}
	Apply(s)
	eq(t, "secret type", s.Type, corev1.SecretTypeOpaque)
	eq(t, "secret data", s.Data, map[string][]byte{"a": []byte("1"), "b": []byte("3"), "c": []byte("4")})
	eq(t, "secret stringData", s.StringData, map[string]string(nil))
	tls := &corev1.Secret{Type: corev1.SecretTypeTLS}
	Apply(tls)
	eq(t, "secret type kept", tls.Type, corev1.SecretTypeTLS)

	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}}}}}
	Apply(ep)
	eq(t, "endpoint protocol", ep.Subsets[0].Ports[0].Protocol, corev1.ProtocolTCP)

	node := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": qty("4")}}}
	Apply(node)
	eq(t, "node allocatable", node.Status.Allocatable.Cpu().String(), "4")
}

// Apply(Apply(x)) == Apply(x), for every kind, from bare and from rich
// inputs.
func TestApplyIsIdempotent(t *testing.T) {
	richPodSpec := func() corev1.PodSpec {
		always := corev1.ContainerRestartPolicyAlways
		return corev1.PodSpec{
			HostNetwork: true,
			InitContainers: []corev1.Container{{Name: "side", Image: "envoy", RestartPolicy: &always,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": qty("64Mi")}}}},
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx",
				Ports:          []corev1.ContainerPort{{ContainerPort: 80}},
				Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": qty("0.0005")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}},
				StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
				Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox:1"}}},
			Volumes: []corev1.Volume{
				{Name: "a"},
				{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
				{Name: "d", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
			},
			DeprecatedServiceAccount: "builder",
			Overhead:                 corev1.ResourceList{"cpu": qty("10m")},
		}
	}
	objects := map[string]func() runtime.Object{
		"bare pod": func() runtime.Object { return &corev1.Pod{} },
		"rich pod": func() runtime.Object { return &corev1.Pod{Spec: richPodSpec()} },
		"namespace": func() runtime.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"x": "y"}}}
		},
		"node": func() runtime.Object {
			return &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": qty("2"), "memory": qty("1.5Gi")}}}
		},
		"bare service": func() runtime.Object { return &corev1.Service{} },
		"rich service": func() runtime.Object {
			return &corev1.Service{
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP,
					Ports: []corev1.ServicePort{{Port: 80}, {Port: 53, Protocol: "UDP", TargetPort: intstr.FromString("dns")}}},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}},
			}
		},
		"headless service": func() runtime.Object { return &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}} },
		"external name": func() runtime.Object {
			return &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}
		},
		"endpoints": func() runtime.Object {
			return &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 1}}}}}
		},
		"core event":   func() runtime.Object { return &corev1.Event{Reason: "r"} },
		"events event": func() runtime.Object { return &eventsv1.Event{Reason: "r"} },
		"configmap":    func() runtime.Object { return &corev1.ConfigMap{Data: map[string]string{"a": "b"}} },
		"secret": func() runtime.Object {
			return &corev1.Secret{StringData: map[string]string{"a": "b"}}
		},
		"serviceaccount":  func() runtime.Object { return &corev1.ServiceAccount{} },
		"lease":           func() runtime.Object { return &coordinationv1.Lease{} },
		"bare replicaset": func() runtime.Object { return &appsv1.ReplicaSet{} },
		"rich replicaset": func() runtime.Object {
			return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{Spec: richPodSpec()}}}
		},
		"bare replicationcontroller": func() runtime.Object { return &corev1.ReplicationController{} },
		"rich replicationcontroller": func() runtime.Object {
			return &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: richPodSpec()}}}
		},
		"bare deployment": func() runtime.Object { return &appsv1.Deployment{} },
		"rich deployment": func() runtime.Object {
			return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				Template: corev1.PodTemplateSpec{Spec: richPodSpec()}}}
		},
		"scale":   func() runtime.Object { return &autoscalingv1.Scale{} },
		"binding": func() runtime.Object { return &corev1.Binding{} },
	}
	for name, newObj := range objects {
		t.Run(name, func(t *testing.T) {
			once := newObj()
			Apply(once)
			twice := once.DeepCopyObject()
			Apply(twice)
			if !apiequality.Semantic.DeepEqual(once, twice) {
				t.Errorf("second Apply changed the object:\n%s", cmp.Diff(once, twice))
			}
			// Byte for byte too: that is what storage compares.
			a, _ := json.Marshal(once)
			b, _ := json.Marshal(twice)
			if string(a) != string(b) {
				t.Errorf("second Apply changed the encoding:\n%s\n%s", a, b)
			}
		})
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}
