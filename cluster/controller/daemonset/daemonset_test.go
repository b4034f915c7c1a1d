package daemonset_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/daemonset"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

func start(t *testing.T) kubernetes.Interface {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cc := testenv.ControllerContext(t, api.Config)
	testenv.RunController(t, daemonset.New(cc), cc)
	return cc.Client
}

// placement is "node:hash" of every live pod of the DaemonSet, sorted.
func placement(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		node := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
		out = append(out, node+":"+p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])
	}
	sort.Strings(out)
	return out
}

func nodesOf(pl []string) string {
	var n []string
	for _, p := range pl {
		n = append(n, strings.SplitN(p, ":", 2)[0])
	}
	return strings.Join(n, ",")
}

// TestDaemonSetPlacementAndRollingUpdate: one pod per matching node, none
// on a node that does not match its selector or has a taint it does not
// tolerate; relabelling a node moves the set; a new template replaces
// every pod.
func TestDaemonSetPlacementAndRollingUpdate(t *testing.T) {
	cs := start(t)
	ctx := context.Background()
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"role": "agent"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"role": "agent"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"role": "other"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"role": "agent"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}}},
		// Cordoned: daemon pods tolerate it, as upstream's.
		{ObjectMeta: metav1.ObjectMeta{Name: "e", Labels: map[string]string{"role": "agent"}}, Spec: corev1.NodeSpec{Unschedulable: true,
			Taints: []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}}},
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"role": "agent"},
				Containers:   []corev1.Container{{Name: "agent", Image: "registry.kstep.local/app:v1"}}}}}}
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pl []string
	testenv.Eventually(t, 30*time.Second, "pods on a, b and e", func() bool { pl = placement(t, cs); return nodesOf(pl) == "a,b,e" })
	testenv.Eventually(t, 30*time.Second, "status", func() bool {
		got, err := cs.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		return err == nil && got.Status.DesiredNumberScheduled == 3 && got.Status.CurrentNumberScheduled == 3 && got.Status.UpdatedNumberScheduled == 3
	})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"labels":{"role":"other"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "c", types.MergePatchType, []byte(`{"metadata":{"labels":{"role":"agent"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "pods on a, c and e", func() bool { pl = placement(t, cs); return nodesOf(pl) == "a,c,e" })
	oldHash := strings.SplitN(pl[0], ":", 2)[1]
	if _, err := cs.AppsV1().DaemonSets("default").Patch(ctx, "agent", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"registry.kstep.local/app:v2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "every pod of the new template", func() bool {
		pl = placement(t, cs)
		if nodesOf(pl) != "a,c,e" {
			return false
		}
		for _, p := range pl {
			if strings.HasSuffix(p, ":"+oldHash) {
				return false
			}
		}
		return true
	})
}
