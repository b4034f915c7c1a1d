package nodeports

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

// port is "ip/protocol/port" shorthand for a container port.
func withPorts(name string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := st.MakePod().Name(name).Obj()
	p.Spec.Containers[0].Ports = ports
	return p
}

func hp(ip string, proto corev1.Protocol, port int32) corev1.ContainerPort {
	return corev1.ContainerPort{ContainerPort: 80, HostIP: ip, Protocol: proto, HostPort: port}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		fits     bool
		skip     bool
	}{
		{name: "no host ports: skipped", pod: withPorts("p", corev1.ContainerPort{ContainerPort: 80}), skip: true},
		{name: "free port", pod: withPorts("p", hp("", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("", "", 8081))}, fits: true},
		{name: "same port, defaults (0.0.0.0/TCP)", pod: withPorts("p", hp("", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("0.0.0.0", corev1.ProtocolTCP, 8080))}},
		{name: "same port, other protocol", pod: withPorts("p", hp("", corev1.ProtocolUDP, 8080)), existing: []*corev1.Pod{withPorts("e", hp("", "", 8080))}, fits: true},
		{name: "same port, two distinct IPs", pod: withPorts("p", hp("10.0.0.1", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("10.0.0.2", "", 8080))}, fits: true},
		{name: "same IP and port", pod: withPorts("p", hp("10.0.0.1", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("10.0.0.1", "TCP", 8080))}},
		{name: "0.0.0.0 wanted, a specific IP holds it", pod: withPorts("p", hp("0.0.0.0", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("10.0.0.2", "", 8080))}},
		{name: "a specific IP wanted, 0.0.0.0 holds it", pod: withPorts("p", hp("10.0.0.2", "", 8080)), existing: []*corev1.Pod{withPorts("e", hp("", "", 8080))}},
		{name: "one of several ports taken", pod: withPorts("p", hp("", "", 1), hp("", "", 2)), existing: []*corev1.Pod{withPorts("e", hp("", "", 2))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &NodePorts{}
			state := framework.NewCycleState()
			pre := pl.PreFilter(context.Background(), state, tt.pod)
			if pre.IsSkip() != tt.skip {
				t.Fatalf("PreFilter = %v, want skip=%v", pre, tt.skip)
			}
			if tt.skip {
				return
			}
			ni := st.NodeInfo(st.MakeNode().Name("n").Obj(), tt.existing...)
			s := pl.Filter(context.Background(), state, tt.pod, ni)
			if s.IsSuccess() != tt.fits {
				t.Fatalf("Filter = %v, want fits=%v", s, tt.fits)
			}
			if !tt.fits && (s.Code() != framework.Unschedulable || s.Message() != ErrReason) {
				t.Errorf("Filter = %v, want Unschedulable %q", s, ErrReason)
			}
			if Fits(tt.pod, ni.UsedPorts) != tt.fits {
				t.Errorf("Fits disagrees with Filter")
			}
		})
	}
}

// TestUsedPortsFollowPods: removing one of two pods holding a port keeps
// it in use; removing both frees it; a clone is independent.
func TestUsedPortsFollowPods(t *testing.T) {
	a, b := withPorts("a", hp("", "", 80)), withPorts("b", hp("", "", 80))
	ni := st.NodeInfo(st.MakeNode().Name("n").Obj(), a, b)
	want := withPorts("p", hp("", "", 80))
	clone := ni.Clone()
	if err := ni.RemovePod(a); err != nil {
		t.Fatal(err)
	}
	if Fits(want, ni.UsedPorts) {
		t.Fatal("port free while b still holds it")
	}
	if err := ni.RemovePod(b); err != nil {
		t.Fatal(err)
	}
	if !Fits(want, ni.UsedPorts) {
		t.Fatal("port still taken with no pod on the node")
	}
	if Fits(want, clone.UsedPorts) {
		t.Fatal("the clone shares the original's ports")
	}
}
