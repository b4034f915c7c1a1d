package chaos

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

func TestCheckExternal(t *testing.T) {
	api, err := Load("api-drain-delete-node")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExternal(api, true); err != nil {
		t.Errorf("API-level scenario with --allow-disruption refused: %v", err)
	}
	if err := CheckExternal(api, false); !errors.Is(err, ErrNeedsDisruption) || !strings.Contains(err.Error(), "--allow-disruption") ||
		errors.Is(err, ErrNeedsProvider) {
		t.Errorf("without --allow-disruption: %v, want the disruption refusal naming the flag", err)
	}
	kill, err := Load("etcd-leader-kill")
	if err != nil {
		t.Fatal(err)
	}
	err = CheckExternal(kill, true)
	if !errors.Is(err, ErrNeedsProvider) || !strings.Contains(err.Error(), "kill etcd-leader") {
		t.Errorf("etcd-leader-kill: %v, want refused as needing a provider", err)
	}
}

func TestAPIFaultsValidate(t *testing.T) {
	base := func(f Fault) *Scenario {
		s := &Scenario{Name: "x", Cluster: clusterOf(3), Faults: []Fault{f}}
		s.Defaults()
		return s
	}
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Name: "a", Action: ActionDrain, Target: TargetNode}, ""},
		{Fault{Name: "a", Action: ActionDeleteNode, Target: TargetNode}, ""},
		{Fault{Name: "a", Action: ActionDrain, Target: TargetKubelet}, "its target is node"},
		{Fault{Name: "a", Action: ActionDeletePod, Target: TargetNode}, "Lease holder's pod"},
	} {
		err := base(tc.f).Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s: %v, want %q", tc.f.Action, tc.f.Target, err, tc.want)
		}
	}
	s := base(Fault{Name: "a", Action: ActionDeleteNode, Target: TargetNode})
	if f := s.Faults[0]; f.Expect.Detection != DetectNodeGone || f.Expect.Recovery != RecoverNodeReturned {
		t.Errorf("delete-node measured by %s/%s", f.Expect.Detection, f.Expect.Recovery)
	}
	one := &Scenario{Name: "x", Cluster: clusterOf(1), Faults: []Fault{{Name: "a", Action: ActionDrain, Target: TargetNode}}}
	one.Defaults()
	if err := one.Validate(); err == nil || !strings.Contains(err.Error(), "another node") {
		t.Errorf("drain with one node: %v, want refused", err)
	}
}

func apiPod(ns, name, node string, mod func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if mod != nil {
		mod(&p)
	}
	return p
}

func TestDrainable(t *testing.T) {
	now := metav1.Now()
	pods := []corev1.Pod{
		apiPod("a", "web", "n1", nil),
		apiPod("a", "elsewhere", "n2", nil),
		apiPod("a", "ds", "n1", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d"}}
		}),
		apiPod("a", "mirror", "n1", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		apiPod("a", "going", "n1", func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		apiPod("a", "done", "n1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		apiPod("b", "api", "n1", nil),
	}
	got := drainable(pods, "n1")
	want := []types.NamespacedName{{Namespace: "a", Name: "web"}, {Namespace: "b", Name: "api"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("drainable = %v, want %v", got, want)
	}
}

// A PodDisruptionBudget's 429 is asked again until the budget allows it;
// a budget that never does ends the drain with the pods it kept.
func TestEvictHonoursBudgets(t *testing.T) {
	cs := fake.NewClientset()
	refusals := map[string]int{"a/kept": 2, "a/never": 1 << 30}
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		key := e.Namespace + "/" + e.Name
		if refusals[key] > 0 {
			refusals[key]--
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		if key == "a/gone" {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, e.Name)
		}
		evicted = append(evicted, key)
		return true, nil, nil
	})
	ctx := context.Background()
	pods := []types.NamespacedName{{Namespace: "a", Name: "free"}, {Namespace: "a", Name: "kept"}, {Namespace: "a", Name: "gone"}}
	n, refused, err := evict(ctx, cs, pods)
	if err != nil || n != 2 || refused != 2 || strings.Join(evicted, ",") != "a/free,a/kept" {
		t.Errorf("evict = %d evicted, %d refused, %v (%v), want 2, 2 refusals, no error", n, refused, err, evicted)
	}
	tctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	n, _, err = evict(tctx, cs, []types.NamespacedName{{Namespace: "a", Name: "never"}})
	if n != 0 || err == nil || !strings.Contains(err.Error(), "PodDisruptionBudgets") {
		t.Errorf("a budget that never allows: %d evicted, %v, want 0 and the budgets named", n, err)
	}
}

func TestLeaderPod(t *testing.T) {
	pods := []corev1.Pod{
		apiPod("kube-system", "kube-controller-manager-cp1", "cp1", nil),
		apiPod("kube-system", "kube-scheduler-cp1", "cp1", nil),
		apiPod("default", "cp2", "n1", nil),
	}
	for _, tc := range []struct {
		id, component, want string
	}{
		{"cp1_0b3f-uuid", "kube-controller-manager", "kube-controller-manager-cp1"},
		{"cp1_77aa", "kube-scheduler", "kube-scheduler-cp1"},
		{"cp2_x", "kube-scheduler", "cp2"},
		// kstep's components hold their Lease as their actor's name and
		// run as no pod.
		{"controller-manager-0", "kube-controller-manager", ""},
	} {
		p, ok := leaderPod(tc.id, tc.component, pods)
		got := ""
		if ok {
			got = p.Name
		}
		if got != tc.want {
			t.Errorf("leaderPod(%q, %s) = %q, want %q", tc.id, tc.component, got, tc.want)
		}
	}
}

func TestNodeReturned(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	h := &History{
		Nodes: []NodeSample{{At: at(0), Node: "n1", Ready: true}, {At: at(0), Node: "n2", Ready: true},
			{At: at(10.5), Node: "n1", Gone: true}, {At: at(19), Node: "n1", Ready: false}, {At: at(21), Node: "n1", Ready: true}},
		RS: []RSEvent{{At: at(0), Key: "a/rs", Replicas: 2}},
		Pods: []PodEvent{
			{At: at(1), UID: "p1", Key: "a/p1", Owner: "a/rs", Node: "n1", Ready: true, Active: true},
			{At: at(1), UID: "p2", Key: "a/p2", Owner: "a/rs", Node: "n2", Ready: true, Active: true},
			// A pod GC (upstream) deletes the orphan; its replacement is
			// Ready on n2 later than the Node returned.
			{At: at(12), UID: "p1", Key: "a/p1", Owner: "a/rs", Node: "n1", Deleted: true},
			{At: at(25), UID: "p3", Key: "a/p3", Owner: "a/rs", Node: "n2", Ready: true, Active: true},
		},
	}
	nodes := map[string]bool{"n1": true}
	if d, _ := nodeGone(h.Nodes, nodes, at(10), at(60)); d == nil || *d != 500 {
		t.Errorf("nodeGone = %v, want 500 ms", d)
	}
	got, note := nodeReturned(h, nodes, at(10), at(60))
	if !got.Equal(at(25)) || !strings.Contains(note, "Node back Ready after 11s") {
		t.Errorf("nodeReturned = %v (%s), want +25 s: the ReplicaSet whole after the Node came back at +21 s", got.Sub(t0), note)
	}
	// Never registered again: no recovery.
	h.Nodes = h.Nodes[:3]
	if got, _ := nodeReturned(h, nodes, at(10), at(60)); !got.IsZero() {
		t.Errorf("nodeReturned without the Node's return = %v, want none", got.Sub(t0))
	}
	if d, note := podEvicted(h.Pods, nodes, at(10), at(60)); d == nil || *d != 2000 || !strings.Contains(note, "a/p1") {
		t.Errorf("podEvicted = %v %s, want 2000 ms for a/p1", d, note)
	}
}

func clusterOf(hollow int) provider.Topology {
	return provider.Topology{HollowNodes: hollow}
}

// A deleted kwok node never returns (kwok registers no Node): the note
// says so; any other node's deletion needs none.
func TestDeletedNodeNote(t *testing.T) {
	kwok := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-1", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	note := deletedNodeNote("api-delete-node", kwok)
	for _, want := range []string{"api-delete-node: kwok-node-1 is a kwok node", "not registered again", string(RecoverNodeReturned), "pod GC"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "hollow-1"}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "kstep hollow node"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "real-1", Annotations: map[string]string{"kwok.x-k8s.io/node": "other"}}},
	} {
		if note := deletedNodeNote("f", n); note != "" {
			t.Errorf("%s: note %q, want none", n.Name, note)
		}
	}
}

// On external the log names the kubeconfig's cluster, never the
// scenario's topology (kstep starts none of it).
func TestUpLine(t *testing.T) {
	topo := provider.Topology{EtcdMembers: 3, APIServers: 2, HollowNodes: 3}
	ext := upLine(provider.External, topo, "/state", "/k/admin.kubeconfig")
	if !strings.Contains(ext, "cluster of /k/admin.kubeconfig") || strings.Contains(ext, topo.String()) || strings.Contains(ext, "etcd") {
		t.Errorf("external: %q", ext)
	}
	if got := upLine(provider.Process, topo, "/state", ""); !strings.Contains(got, "on the process provider: "+topo.String()) {
		t.Errorf("process: %q", got)
	}
}

// A pod the scheduler bound to the node after the cordon (its cache saw
// the cordon late) is evicted too: the drain lists the node again until
// nothing new is on it.
func TestDrainEvictsPodsBoundAfterCordon(t *testing.T) {
	cs := fake.NewClientset()
	pod := func(name string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	lists := [][]corev1.Pod{{pod("early")}, {pod("early"), pod("late")}, {pod("early"), pod("late")}}
	calls := 0
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		l := lists[min(calls, len(lists)-1)]
		calls++
		return true, &corev1.PodList{Items: l}, nil
	})
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		evicted = append(evicted, e.Namespace+"/"+e.Name)
		return true, nil, nil
	})
	listed, n, refused, err := drain(context.Background(), cs, "n1", time.Millisecond)
	if err != nil || listed != 2 || n != 2 || refused != 0 || strings.Join(evicted, ",") != "a/early,a/late" || calls != 3 {
		t.Errorf("drain = %d listed, %d evicted, %d refused, %v (evicted %v, %d lists), want 2, 2, 0, nil (a/early,a/late, 3 lists)", listed, n, refused, err, evicted, calls)
	}
}
