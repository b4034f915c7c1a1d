package defaultpreemption

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/noderesources"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pod is a bound pod with a priority, a cpu request and a start time
// (minutes after t0).
func pod(name, node string, prio int32, cpu string, startMin int, labels ...string) *corev1.Pod {
	w := st.MakePod().Name(name).Node(node).Priority(prio).Req("cpu", cpu)
	for i := 0; i+1 < len(labels); i += 2 {
		w.Label(labels[i], labels[i+1])
	}
	p := w.Obj()
	p.Status.StartTime = &metav1.Time{Time: t0.Add(time.Duration(startMin) * time.Minute)}
	return p
}

func node(name, cpu string) *corev1.Node { return st.MakeNode().Name(name).Capacity("cpu", cpu).Obj() }

func pdb(name string, allowed int32, app string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// The choice of victims, as upstream's: table of clusters, one preemptor
// each, the node and victims expected (or why none).
func TestSelectVictims(t *testing.T) {
	never := corev1.PreemptNever
	high := func(cpu string) *corev1.Pod { return st.MakePod().Name("high").Priority(100).Req("cpu", cpu).Obj() }
	for _, tc := range []struct {
		name     string
		nodes    []*corev1.Node
		pods     []*corev1.Pod
		pdbs     []*policyv1.PodDisruptionBudget
		pod      *corev1.Pod
		node     string
		victims  []string
		noneWhy  string // FitError message of the PostFilter when no node is chosen
		pdbViols int
	}{{
		name:  "fewest victims: one big pod rather than two small ones",
		nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 0, "1", 0), pod("a2", "a", 0, "1", 0), pod("b1", "b", 0, "2", 0)},
		pod:   high("2"), node: "b", victims: []string{"b1"},
	}, {
		name:  "lowest priority: the node whose victim matters least",
		nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 10, "2", 0), pod("b1", "b", 5, "2", 0)},
		pod:   high("2"), node: "b", victims: []string{"b1"},
	}, {
		name:  "only what is needed: the more important pod is reprieved",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("keep", "a", 50, "1", 0), pod("go", "a", 1, "1", 0)},
		pod:   high("1"), node: "a", victims: []string{"go"},
	}, {
		name:  "equal priorities: the pod that started last goes",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("old", "a", 0, "1", 0), pod("new", "a", 0, "1", 5)},
		pod:   high("1"), node: "a", victims: []string{"new"},
	}, {
		name:  "higher and equal priority pods are never victims",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("same", "a", 100, "1", 0), pod("above", "a", 200, "1", 0)},
		pod:   high("1"), noneWhy: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
	}, {
		name:  "PDB respected where a choice exists: the unprotected node",
		nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 0, "2", 0, "app", "db"), pod("b1", "b", 10, "2", 0, "app", "web")},
		pdbs:  []*policyv1.PodDisruptionBudget{pdb("db", 0, "db")},
		pod:   high("2"), node: "b", victims: []string{"b1"},
	}, {
		name:  "PDB respected on one node: the protected pod is reprieved first",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("db", "a", 0, "1", 5, "app", "db"), pod("web", "a", 0, "1", 0, "app", "web")},
		pdbs:  []*policyv1.PodDisruptionBudget{pdb("db", 0, "db")},
		pod:   high("1"), node: "a", victims: []string{"web"},
	}, {
		name:  "PDB violated when there is no other choice",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("db", "a", 0, "2", 0, "app", "db")},
		pdbs:  []*policyv1.PodDisruptionBudget{pdb("db", 0, "db")},
		pod:   high("2"), node: "a", victims: []string{"db"}, pdbViols: 1,
	}, {
		name:  "a budget that allows one disruption is not violated by one",
		nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 0, "2", 0, "app", "db"), pod("b1", "b", 10, "2", 0)},
		pdbs:  []*policyv1.PodDisruptionBudget{pdb("db", 1, "db")},
		pod:   high("2"), node: "a", victims: []string{"a1"},
	}, {
		name:  "the pod does not fit even without every lower-priority pod",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 0, "1", 0)},
		pod:   high("3"), noneWhy: "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
	}, {
		name:  "preemptionPolicy Never",
		nodes: []*corev1.Node{node("a", "2")},
		pods:  []*corev1.Pod{pod("a1", "a", 0, "2", 0)},
		pod: func() *corev1.Pod {
			p := high("2")
			p.Spec.PreemptionPolicy = &never
			return p
		}(),
		noneWhy: "preemption: not eligible due to preemptionPolicy=Never.",
	}, {
		name:  "nominated, its victim still terminating: it waits",
		nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
		pods: []*corev1.Pod{func() *corev1.Pod {
			p := pod("a1", "a", 0, "2", 0)
			p.DeletionTimestamp = &metav1.Time{Time: t0}
			return p
		}(), pod("b1", "b", 0, "2", 0)},
		pod: func() *corev1.Pod {
			p := high("2")
			p.Status.NominatedNodeName = "a"
			return p
		}(),
		noneWhy: "preemption: not eligible due to a terminating pod on the nominated node.",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			snap := cache.NewSnapshot(tc.pods, tc.nodes)
			fit := &noderesources.Fit{}
			h := &st.Handle{Lister: snap, Filters: []framework.FilterPlugin{fit}}
			p, err := New(h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*DefaultPreemption)
			state := framework.NewCycleState()
			if s := fit.PreFilter(ctx, state, tc.pod); !s.IsSuccess() {
				t.Fatal(s)
			}
			statuses := framework.NodeToStatus{}
			for _, ni := range snap.List() {
				if s := fit.Filter(ctx, state, tc.pod, ni); !s.IsSuccess() {
					statuses[ni.Node().Name] = s
				}
			}
			if tc.noneWhy != "" {
				// No client: a PostFilter that chose a node would fail
				// evicting; one that chose none says why.
				node, s := pl.postFilterWith(ctx, state, tc.pod, statuses, tc.pdbs)
				if node != "" || s.Code() != framework.Unschedulable || s.Message() != tc.noneWhy {
					t.Fatalf("PostFilter = %q, %v; want none: %q", node, s, tc.noneWhy)
				}
				return
			}
			cands, why := pl.FindCandidates(ctx, state, tc.pod, statuses, tc.pdbs)
			if len(cands) == 0 {
				t.Fatalf("no candidate: %v", why)
			}
			best := SelectCandidate(cands)
			if best.Node != tc.node || !slices.Equal(names(best.Victims), tc.victims) || best.NumPDBViolations != tc.pdbViols {
				t.Fatalf("chose %s, victims %v, %d PDB violations; want %s, %v, %d", best.Node, names(best.Victims), best.NumPDBViolations, tc.node, tc.victims, tc.pdbViols)
			}
		})
	}
}

// Candidates on many nodes: the dry run stops once it has upstream's
// number of them (10% of the nodes, at least 100), not after every node.
func TestFindCandidatesStopsEarly(t *testing.T) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range 300 {
		n := fmt.Sprintf("n%03d", i)
		nodes = append(nodes, node(n, "1"))
		pods = append(pods, pod("p-"+n, n, 0, "1", 0))
	}
	ctx := context.Background()
	snap := cache.NewSnapshot(pods, nodes)
	fit := &noderesources.Fit{}
	p, _ := New(&st.Handle{Lister: snap, Filters: []framework.FilterPlugin{fit}})
	pl := p.(*DefaultPreemption)
	preemptor := st.MakePod().Name("high").Priority(100).Req("cpu", "1").Obj()
	state := framework.NewCycleState()
	fit.PreFilter(ctx, state, preemptor)
	statuses := framework.NodeToStatus{}
	for _, ni := range snap.List() {
		statuses[ni.Node().Name] = fit.Filter(ctx, state, preemptor, ni)
	}
	cands, _ := pl.FindCandidates(ctx, state, preemptor, statuses, nil)
	// Parallel workers may finish a few nodes past the stop.
	if len(cands) < 100 || len(cands) >= 300 {
		t.Fatalf("%d candidates of 300 nodes, want about 100", len(cands))
	}
	if got := []int{numCandidates(300), numCandidates(5000), numCandidates(7)}; !slices.Equal(got, []int{100, 500, 7}) {
		t.Fatalf("numCandidates(300, 5000, 7) = %v", got)
	}
}
