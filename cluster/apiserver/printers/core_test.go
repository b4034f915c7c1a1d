package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func core(resource string) schema.GroupResource { return schema.GroupResource{Resource: resource} }

func TestNode(t *testing.T) {
	checkColumns(t, core("nodes"), &corev1.Node{}, []column{
		{"Name", "string", 0}, {"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0}, {"Version", "string", 0},
		{"Internal-IP", "string", 1}, {"External-IP", "string", 1}, {"OS-Image", "string", 1}, {"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1},
	})

	ready := func(s corev1.ConditionStatus) []corev1.NodeCondition {
		return []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: s},
		}
	}
	tests := []struct {
		name string
		node corev1.Node
		want []interface{}
	}{{
		name: "control plane, ready",
		node: corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "cp", CreationTimestamp: ago(26 * time.Hour), Labels: map[string]string{
				"node-role.kubernetes.io/control-plane": "",
				"node-role.kubernetes.io/worker":        "true",
				"kubernetes.io/role":                    "infra",
				"node-role.kubernetes.io/":              "",
				"kubernetes.io/hostname":                "cp",
			}},
			Status: corev1.NodeStatus{
				Conditions: ready(corev1.ConditionTrue),
				Addresses: []corev1.NodeAddress{
					{Type: corev1.NodeHostName, Address: "cp"},
					{Type: corev1.NodeInternalIP, Address: "172.18.0.2"},
					{Type: corev1.NodeInternalIP, Address: "fc00::2"},
					{Type: corev1.NodeExternalIP, Address: "203.0.113.7"},
				},
				NodeInfo: corev1.NodeSystemInfo{
					KubeletVersion: "v1.32.4", OSImage: "Debian GNU/Linux 12 (bookworm)",
					KernelVersion: "6.1.0-18-amd64", ContainerRuntimeVersion: "containerd://1.7.18",
				},
			},
		},
		want: []interface{}{"cp", "Ready", "control-plane,infra,worker", "26h", "v1.32.4",
			"172.18.0.2", "203.0.113.7", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64", "containerd://1.7.18"},
	}, {
		name: "cordoned, not ready",
		node: corev1.Node{
			ObjectMeta: objMeta("w1"),
			Spec:       corev1.NodeSpec{Unschedulable: true},
			Status:     corev1.NodeStatus{Conditions: ready(corev1.ConditionFalse), NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.32.4"}},
		},
		want: []interface{}{"w1", "NotReady,SchedulingDisabled", "<none>", "60m", "v1.32.4",
			"<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
	}, {
		name: "ready unknown",
		node: corev1.Node{ObjectMeta: objMeta("w2"), Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionUnknown)}},
		want: []interface{}{"w2", "NotReady", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
	}, {
		name: "no conditions, cordoned",
		node: corev1.Node{ObjectMeta: objMeta("w3"), Spec: corev1.NodeSpec{Unschedulable: true}},
		want: []interface{}{"w3", "Unknown,SchedulingDisabled", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, row(t, core("nodes"), &tt.node), tt.want) })
	}
}

func TestService(t *testing.T) {
	checkColumns(t, core("services"), &corev1.Service{}, []column{
		{"Name", "string", 0}, {"Type", "string", 0}, {"Cluster-IP", "string", 0}, {"External-IP", "string", 0},
		{"Port(s)", "string", 0}, {"Age", "string", 0}, {"Selector", "string", 1},
	})

	tests := []struct {
		name string
		spec corev1.ServiceSpec
		lb   []corev1.LoadBalancerIngress
		want []interface{}
	}{{
		name: "cluster IP",
		spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
			Selector: map[string]string{"app": "web", "tier": "front"},
		},
		want: []interface{}{"s", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "60m", "app=web,tier=front"},
	}, {
		name: "defaults: type, protocol, clusterIPs",
		spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11", Ports: []corev1.ServicePort{{Port: 53}, {Port: 53, Protocol: corev1.ProtocolUDP}}},
		want: []interface{}{"s", "ClusterIP", "10.96.0.11", "<none>", "53/TCP,53/UDP", "60m", "<none>"},
	}, {
		name: "headless without ports",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}},
		want: []interface{}{"s", "ClusterIP", "None", "<none>", "<none>", "60m", "<none>"},
	}, {
		name: "node port with external IPs",
		spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.1.1", "fd00::1"}, ExternalIPs: []string{"192.0.2.1", "192.0.2.2"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP}},
		},
		want: []interface{}{"s", "NodePort", "10.96.1.1", "192.0.2.1,192.0.2.2", "80:30080/TCP,443:30443/TCP", "60m", "<none>"},
	}, {
		name: "pending load balancer",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.2.2"}, Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}}},
		want: []interface{}{"s", "LoadBalancer", "10.96.2.2", "<pending>", "80:31000/TCP", "60m", "<none>"},
	}, {
		name: "load balancer ingress, sorted, deduplicated, never clipped",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.2.3"}, Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}},
		lb:   []corev1.LoadBalancerIngress{{Hostname: "a-very-long-hostname.elb.example.com"}, {IP: "198.51.100.9"}, {IP: "198.51.100.9"}},
		want: []interface{}{"s", "LoadBalancer", "10.96.2.3", "198.51.100.9,a-very-long-hostname.elb.example.com", "443/TCP", "60m", "<none>"},
	}, {
		name: "load balancer ingress and external IPs",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.2.4"}, ExternalIPs: []string{"192.0.2.9"}},
		lb:   []corev1.LoadBalancerIngress{{IP: "198.51.100.1"}},
		want: []interface{}{"s", "LoadBalancer", "10.96.2.4", "198.51.100.1,192.0.2.9", "<none>", "60m", "<none>"},
	}, {
		name: "external name",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
		want: []interface{}{"s", "ExternalName", "<none>", "db.example.com", "<none>", "60m", "<none>"},
	}, {
		name: "SCTP",
		spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.12"}, Ports: []corev1.ServicePort{{Port: 9999, Protocol: corev1.ProtocolSCTP}}},
		want: []interface{}{"s", "ClusterIP", "10.96.0.12", "<none>", "9999/SCTP", "60m", "<none>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: objMeta("s"), Spec: tt.spec}
			svc.Status.LoadBalancer.Ingress = tt.lb
			checkCells(t, row(t, core("services"), svc), tt.want)
		})
	}
}

func TestEndpoints(t *testing.T) {
	checkColumns(t, core("endpoints"), &corev1.Endpoints{}, []column{{"Name", "string", 0}, {"Endpoints", "string", 0}, {"Age", "string", 0}})

	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	port := func(n int32) []corev1.EndpointPort {
		return []corev1.EndpointPort{{Port: n, Protocol: corev1.ProtocolTCP}}
	}
	tests := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    string
	}{
		{"none", nil, "<none>"},
		{"two", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: port(8080)}}, "10.0.0.1:8080,10.0.0.2:8080"},
		{"three", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3"), Ports: port(8080)}}, "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080"},
		{
			"five across subsets",
			[]corev1.EndpointSubset{
				{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: port(8080)},
				{Addresses: addrs("10.0.0.3", "10.0.0.4", "10.0.0.5"), Ports: port(8080)},
			},
			"10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 2 more...",
		},
		{
			"every port of every address",
			[]corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}}},
			"10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...",
		},
		{"headless without ports", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")}}, "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."},
		{"IPv6", []corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: port(53)}}, "[fd00::1]:53"},
		{"only not-ready addresses", []corev1.EndpointSubset{{NotReadyAddresses: addrs("10.0.0.1"), Ports: port(80)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &corev1.Endpoints{ObjectMeta: objMeta("web"), Subsets: tt.subsets}
			checkCells(t, row(t, core("endpoints"), ep), []interface{}{"web", tt.want, "60m"})
		})
	}
}

func TestNamespace(t *testing.T) {
	checkColumns(t, core("namespaces"), &corev1.Namespace{}, []column{{"Name", "string", 0}, {"Status", "string", 0}, {"Age", "string", 0}})
	ns := &corev1.Namespace{ObjectMeta: objMeta("kube-system"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	checkCells(t, row(t, core("namespaces"), ns), []interface{}{"kube-system", "Terminating", "60m"})
}

var eventColumnsWant = []column{
	{"Last Seen", "string", 0}, {"Type", "string", 0}, {"Reason", "string", 0}, {"Object", "string", 0},
	{"Subobject", "string", 1}, {"Source", "string", 1}, {"Message", "string", 0},
	{"First Seen", "string", 1}, {"Count", "string", 1}, {"Name", "string", 1},
}

func TestEvent(t *testing.T) {
	checkColumns(t, core("events"), &corev1.Event{}, eventColumnsWant)
	table, _ := Table(core("events"), nil, now, false)
	if c := table.ColumnDefinitions[9]; c.Format != "name" {
		t.Errorf("event NAME column format = %q, want name", c.Format)
	}

	tests := []struct {
		name string
		ev   corev1.Event
		want []interface{}
	}{{
		name: "legacy event with count",
		ev: corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "web-1.17a", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{app}"},
			Reason:         "BackOff", Message: "Back-off restarting failed container\n", Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
			FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(30 * time.Second), Count: 12,
		},
		want: []interface{}{"30s", "Warning", "BackOff", "pod/web-1", "spec.containers{app}", "kubelet, n1",
			"Back-off restarting failed container", "10m", int64(12), "web-1.17a"},
	}, {
		name: "new-style singleton event",
		ev: corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "web.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "web"},
			Reason:         "ScalingReplicaSet", Message: "Scaled up replica set web-5d to 3", Type: corev1.EventTypeNormal,
			EventTime:           metav1.NewMicroTime(now.Add(-3 * time.Minute)),
			ReportingController: "deployment-controller", ReportingInstance: "",
		},
		want: []interface{}{"3m", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller",
			"Scaled up replica set web-5d to 3", "3m", int64(1), "web.1"},
	}, {
		name: "series",
		ev: corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "n1.2"},
			InvolvedObject: corev1.ObjectReference{Kind: "Node"},
			Reason:         "Rebooted", Type: corev1.EventTypeWarning,
			EventTime:           metav1.NewMicroTime(now.Add(-time.Hour)),
			Series:              &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-5 * time.Second))},
			ReportingController: "kubelet", ReportingInstance: "n1",
		},
		want: []interface{}{"5s", "Warning", "Rebooted", "node", "", "kubelet, n1", "", "60m", int64(4), "n1.2"},
	}, {
		name: "no times",
		ev:   corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}},
		want: []interface{}{"<unknown>", "", "", "pod/p", "", "", "", "<unknown>", int64(1), "x"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, row(t, core("events"), &tt.ev), tt.want) })
	}
}

func TestEventsV1Event(t *testing.T) {
	gr := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	checkColumns(t, gr, &eventsv1.Event{}, eventColumnsWant)
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web-1.17a"},
		EventTime:           metav1.NewMicroTime(now.Add(-10 * time.Minute)),
		Series:              &eventsv1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-20 * time.Second))},
		ReportingController: "kubelet", ReportingInstance: "n1",
		Action: "Pulling", Reason: "Pulling", Type: "Normal",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{app}"},
		Note:      "Pulling image \"nginx\"",
	}
	checkCells(t, row(t, gr, ev), []interface{}{"20s", "Normal", "Pulling", "pod/web-1", "spec.containers{app}", "kubelet, n1",
		"Pulling image \"nginx\"", "10m", int64(7), "web-1.17a"})

	// Deprecated fields written through the core API show through.
	ev = &eventsv1.Event{
		ObjectMeta:               metav1.ObjectMeta{Name: "old"},
		Regarding:                corev1.ObjectReference{Kind: "Pod", Name: "p"},
		DeprecatedSource:         corev1.EventSource{Component: "kubelet", Host: "n2"},
		DeprecatedFirstTimestamp: ago(2 * time.Hour), DeprecatedLastTimestamp: ago(time.Minute), DeprecatedCount: 3,
	}
	checkCells(t, row(t, gr, ev), []interface{}{"60s", "", "", "pod/p", "", "kubelet, n2", "", "120m", int64(3), "old"})
}

func TestConfigMapSecretServiceAccount(t *testing.T) {
	checkColumns(t, core("configmaps"), &corev1.ConfigMap{}, []column{{"Name", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}})
	cm := &corev1.ConfigMap{ObjectMeta: objMeta("cfg"), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {0}}}
	checkCells(t, row(t, core("configmaps"), cm), []interface{}{"cfg", int64(3), "60m"})

	checkColumns(t, core("secrets"), &corev1.Secret{}, []column{{"Name", "string", 0}, {"Type", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}})
	s := &corev1.Secret{ObjectMeta: objMeta("tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}
	checkCells(t, row(t, core("secrets"), s), []interface{}{"tls", "kubernetes.io/tls", int64(2), "60m"})
	s = &corev1.Secret{ObjectMeta: objMeta("mixed"), Data: map[string][]byte{"a": nil}, StringData: map[string]string{"a": "x", "b": "y"}}
	checkCells(t, row(t, core("secrets"), s), []interface{}{"mixed", "Opaque", int64(2), "60m"})

	checkColumns(t, core("serviceaccounts"), &corev1.ServiceAccount{}, []column{{"Name", "string", 0}, {"Secrets", "string", 0}, {"Age", "string", 0}})
	sa := &corev1.ServiceAccount{ObjectMeta: objMeta("default")}
	checkCells(t, row(t, core("serviceaccounts"), sa), []interface{}{"default", int64(0), "60m"})
	sa.Secrets = []corev1.ObjectReference{{Name: "default-token"}}
	checkCells(t, row(t, core("serviceaccounts"), sa), []interface{}{"default", int64(1), "60m"})
}

func TestReplicationController(t *testing.T) {
	gr := core("replicationcontrollers")
	checkColumns(t, gr, &corev1.ReplicationController{}, []column{
		{"Name", "string", 0}, {"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	rc := &corev1.ReplicationController{
		ObjectMeta: objMeta("rc"),
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr(int32(3)), Selector: map[string]string{"app": "rc"},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "busybox"}}}},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2},
	}
	checkCells(t, row(t, gr, rc), []interface{}{"rc", int64(3), int64(3), int64(2), "60m", "a,b", "nginx,busybox", "app=rc"})
	rc = &corev1.ReplicationController{ObjectMeta: objMeta("bare")}
	checkCells(t, row(t, gr, rc), []interface{}{"bare", int64(1), int64(0), int64(0), "60m", "", "", "<none>"})
}
