package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/results"
)

// Node kinds as the external provider's run records them (results.External).
const (
	KindHollowKstep = "hollow (kstep)"
	KindFakeKwok    = "fake (kwok)"
	KindReal        = "real"
)

// kindsBy says how inspect tells node kinds apart.
const kindsBy = `nodeInfo.osImage "kstep hollow node" is a kstep hollow node; annotation kwok.x-k8s.io/node=fake is a kwok node; any other node is real`

// nodeKind is what ran n's pods, by what the node object says of itself.
func nodeKind(n *corev1.Node) string {
	switch {
	case n.Status.NodeInfo.OSImage == "kstep hollow node":
		return KindHollowKstep
	case n.Annotations["kwok.x-k8s.io/node"] == "fake":
		return KindFakeKwok
	}
	return KindReal
}

// inspect counts the cluster's nodes by kind, and maps each node to the
// population its pods belong to (results.NodesReal, results.NodesHollow:
// kstep's hollow nodes and kwok's fake ones run no container).
func inspect(ctx context.Context, cs kubernetes.Interface, e *results.External) (map[string]string, error) {
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	e.Nodes, e.Ready, e.Kinds, e.KindsBy = len(l.Items), 0, map[string]int{}, kindsBy
	pop := map[string]string{}
	for i := range l.Items {
		n := &l.Items[i]
		k := nodeKind(n)
		e.Kinds[k]++
		pop[n.Name] = results.NodesHollow
		if k == KindReal {
			pop[n.Name] = results.NodesReal
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				e.Ready++
			}
		}
	}
	return pop, nil
}
