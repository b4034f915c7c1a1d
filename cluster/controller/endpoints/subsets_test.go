package endpoints

import (
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

type podOpt func(*corev1.Pod)

func mkPod(name, ip string, ready bool, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	if ip != "" {
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func addr(name, ip string) corev1.EndpointAddress {
	return corev1.EndpointAddress{IP: ip, NodeName: ptr.To("n1"),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func svcWith(ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: ports}}
}

var (
	httpByName   = corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}
	metricsByNum = corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9100), Protocol: corev1.ProtocolTCP}
)

func TestSubsets(t *testing.T) {
	now := metav1.Now()
	tcp := func(name string, port int32) corev1.EndpointPort {
		return corev1.EndpointPort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
	}
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		pods []*corev1.Pod
		want []corev1.EndpointSubset
	}{
		{
			name: "ready and not ready, sorted by IP",
			svc:  svcWith(httpByName),
			pods: []*corev1.Pod{mkPod("b", "10.0.0.2", true), mkPod("a", "10.0.0.1", true), mkPod("c", "10.0.0.3", false)},
			want: []corev1.EndpointSubset{{
				Addresses:         []corev1.EndpointAddress{addr("a", "10.0.0.1"), addr("b", "10.0.0.2")},
				NotReadyAddresses: []corev1.EndpointAddress{addr("c", "10.0.0.3")},
				Ports:             []corev1.EndpointPort{tcp("http", 8080)},
			}},
		},
		{
			name: "no IP, finished, being deleted: left out",
			svc:  svcWith(httpByName),
			pods: []*corev1.Pod{
				mkPod("pending", "", false),
				mkPod("done", "10.0.0.4", false, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
				mkPod("failed", "10.0.0.5", false, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
				mkPod("going", "10.0.0.6", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
				mkPod("a", "10.0.0.1", true),
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []corev1.EndpointPort{tcp("http", 8080)}}},
		},
		{
			name: "publishNotReadyAddresses: every pod with an IP is an address",
			svc: func() *corev1.Service {
				s := svcWith(httpByName)
				s.Spec.PublishNotReadyAddresses = true
				return s
			}(),
			pods: []*corev1.Pod{mkPod("a", "10.0.0.1", false), mkPod("going", "10.0.0.6", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now })},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1"), addr("going", "10.0.0.6")}, Ports: []corev1.EndpointPort{tcp("http", 8080)}}},
		},
		{
			name: "a named port that differs between pods splits the subsets",
			svc:  svcWith(httpByName, metricsByNum),
			pods: []*corev1.Pod{
				mkPod("a", "10.0.0.1", true),
				mkPod("b", "10.0.0.2", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8081 }),
				mkPod("noname", "10.0.0.3", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil }),
			},
			want: []corev1.EndpointSubset{
				{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []corev1.EndpointPort{tcp("http", 8080), tcp("metrics", 9100)}},
				{Addresses: []corev1.EndpointAddress{addr("b", "10.0.0.2")}, Ports: []corev1.EndpointPort{tcp("http", 8081), tcp("metrics", 9100)}},
				{Addresses: []corev1.EndpointAddress{addr("noname", "10.0.0.3")}, Ports: []corev1.EndpointPort{tcp("metrics", 9100)}},
			},
		},
		{
			name: "a pod where no port resolves serves nothing",
			svc:  svcWith(httpByName),
			pods: []*corev1.Pod{mkPod("noname", "10.0.0.3", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil })},
			want: nil,
		},
		{
			name: "named port must match the protocol; sidecar ports count",
			svc:  svcWith(corev1.ServicePort{Name: "dns", Port: 53, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP}),
			pods: []*corev1.Pod{
				mkPod("tcp-only", "10.0.0.1", true, func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolTCP}}
				}),
				mkPod("sidecar", "10.0.0.2", true, func(p *corev1.Pod) {
					p.Spec.InitContainers = []corev1.Container{{Name: "s", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
						Ports: []corev1.ContainerPort{{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}}}}
				}),
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("sidecar", "10.0.0.2")},
				Ports: []corev1.EndpointPort{{Name: "dns", Port: 5353, Protocol: corev1.ProtocolUDP}}}},
		},
		{
			name: "unset targetPort is the port",
			svc:  svcWith(corev1.ServicePort{Port: 80}),
			pods: []*corev1.Pod{mkPod("a", "10.0.0.1", true)},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []corev1.EndpointPort{tcp("", 80)}}},
		},
		{
			name: "headless without ports: addresses only; hostname under its subdomain",
			svc: func() *corev1.Service {
				s := svcWith()
				s.Spec.ClusterIP = corev1.ClusterIPNone
				return s
			}(),
			pods: []*corev1.Pod{mkPod("a", "10.0.0.1", true, func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "a-host", "web" })},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{func() corev1.EndpointAddress {
				a := addr("a", "10.0.0.1")
				a.Hostname = "a-host"
				return a
			}()}}},
		},
		{
			name: "the Service's IP family picks the pod's IP",
			svc: func() *corev1.Service {
				s := svcWith(httpByName)
				s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
				return s
			}(),
			pods: []*corev1.Pod{
				mkPod("dual", "10.0.0.1", true, func(p *corev1.Pod) { p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: "fd00::1"}) }),
				mkPod("v4only", "10.0.0.2", true),
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("dual", "fd00::1")}, Ports: []corev1.EndpointPort{tcp("http", 8080)}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := subsets(tc.svc, tc.pods)
			if !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("subsets:\n got %+v\nwant %+v", got, tc.want)
			}
			// Any order of the same pods gives the same subsets: no write
			// for a reordered cache.
			for range 5 {
				shuffled := append([]*corev1.Pod(nil), tc.pods...)
				rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				if again := subsets(tc.svc, shuffled); !reflect.DeepEqual(again, got) {
					t.Fatalf("order-dependent: %+v vs %+v", again, got)
				}
			}
		})
	}
}

func TestNewlyReady(t *testing.T) {
	prev := []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1")},
		NotReadyAddresses: []corev1.EndpointAddress{addr("b", "10.0.0.2")}}}
	next := []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{addr("a", "10.0.0.1"), addr("b", "10.0.0.2")}},
		{Addresses: []corev1.EndpointAddress{addr("c", "10.0.0.3"), addr("b", "10.0.0.2")}},
	}
	var got []string
	for _, r := range newlyReady(prev, next) {
		got = append(got, r.Name)
	}
	if want := []string{"b", "c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("newly ready = %v, want %v (once each, not a)", got, want)
	}
	if n := len(newlyReady(next, prev)); n != 0 {
		t.Fatalf("pods leaving addresses are not newly ready: %d", n)
	}
}

func TestDesiredLabels(t *testing.T) {
	svc := svcWith()
	svc.Labels = map[string]string{"team": "a", headlessLabel: ""}
	if got := desiredLabels(svc); !reflect.DeepEqual(got, map[string]string{"team": "a"}) {
		t.Errorf("cluster IP service: %v", got)
	}
	if svc.Labels[headlessLabel] != "" || len(svc.Labels) != 2 {
		t.Error("the Service's own labels were modified")
	}
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	if got := desiredLabels(svc); !reflect.DeepEqual(got, map[string]string{"team": "a", headlessLabel: ""}) {
		t.Errorf("headless: %v", got)
	}
}
