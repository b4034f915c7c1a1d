package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func withHostPort(ip string, proto corev1.Protocol, port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostIP: ip, Protocol: proto, HostPort: port}}
	}
}

const rejectedMessage = "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"

func rejected(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "NodePorts" && p.Status.Message == rejectedMessage
}

// TestAdmitHostPorts: of two pods racing for one host port exactly one
// runs and the other is Failed with upstream's reason and message; the
// host IP and protocol rules hold; the port is free again once its holder
// is gone.
func TestAdmitHostPorts(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-h", nil, nil)
	createPod(t, c, newPod("race-1", "node-h", withHostPort("", "", 8080)))
	createPod(t, c, newPod("race-2", "node-h", withHostPort("", "", 8080)))
	var winner, loser string
	testenv.Eventually(t, 10*time.Second, "one racer Running, the other rejected", func() (bool, error) {
		a, err := getPod(c, "race-1")
		if err != nil {
			return false, err
		}
		b, err := getPod(c, "race-2")
		if err != nil {
			return false, err
		}
		switch {
		case podReady(a) && rejected(b):
			winner, loser = "race-1", "race-2"
		case podReady(b) && rejected(a):
			winner, loser = "race-2", "race-1"
		default:
			return false, nil
		}
		return true, nil
	}, fastPoll)
	l, _ := getPod(c, loser)
	if l.Status.StartTime != nil || len(l.Status.ContainerStatuses) > 0 {
		t.Errorf("the rejected pod ran: %+v", l.Status)
	}
	if cond := findPodCondition(l.Status.Conditions, corev1.PodScheduled); cond == nil || cond.Status != corev1.ConditionTrue {
		t.Errorf("the rejected pod lost its PodScheduled condition: %+v", l.Status.Conditions)
	}

	createPod(t, c, newPod("udp", "node-h", withHostPort("", corev1.ProtocolUDP, 8080)))
	createPod(t, c, newPod("specific-ip", "node-h", withHostPort("10.0.0.7", "", 8080)))
	createPod(t, c, newPod("other-port", "node-h", withHostPort("10.0.0.7", "", 9090)))
	waitPod(t, c, "udp", 10*time.Second, "ready (another protocol)", podReady)
	waitPod(t, c, "specific-ip", 10*time.Second, "rejected (0.0.0.0 holds the port on every IP)", rejected)
	waitPod(t, c, "other-port", 10*time.Second, "ready", podReady)

	if err := c.Client.CoreV1().Pods("default").Delete(context.Background(), winner, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, winner+" gone", func() (bool, error) {
		_, err := getPod(c, winner)
		return err != nil, nil
	}, fastPoll)
	createPod(t, c, newPod("after", "node-h", withHostPort("", "", 8080)))
	waitPod(t, c, "after", 10*time.Second, "ready once the holder is gone", podReady)
}

func findPodCondition(cs []corev1.PodCondition, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
