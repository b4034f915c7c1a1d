package nodeaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n").Label("zone", "a").Label("gen", "5").Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		fits bool
	}{
		{"nothing required", st.MakePod().Obj(), true},
		{"nodeSelector matches", st.MakePod().NodeSelector(map[string]string{"zone": "a"}).Obj(), true},
		{"nodeSelector does not", st.MakePod().NodeSelector(map[string]string{"zone": "b"}).Obj(), false},
		{"In", st.MakePod().RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpIn, "a", "b")).Obj(), true},
		{"NotIn", st.MakePod().RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpNotIn, "a")).Obj(), false},
		{"Exists", st.MakePod().RequiredNodeAffinity(req("gen", corev1.NodeSelectorOpExists)).Obj(), true},
		{"DoesNotExist", st.MakePod().RequiredNodeAffinity(req("gpu", corev1.NodeSelectorOpDoesNotExist)).Obj(), true},
		{"Gt", st.MakePod().RequiredNodeAffinity(req("gen", corev1.NodeSelectorOpGt, "4")).Obj(), true},
		{"Lt", st.MakePod().RequiredNodeAffinity(req("gen", corev1.NodeSelectorOpLt, "4")).Obj(), false},
		{"terms are ORed", st.MakePod().RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpIn, "b")).RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpIn, "a")).Obj(), true},
		{"expressions are ANDed", st.MakePod().RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpIn, "a"), req("gen", corev1.NodeSelectorOpIn, "6")).Obj(), false},
		{"selector and affinity both apply", st.MakePod().NodeSelector(map[string]string{"zone": "b"}).RequiredNodeAffinity(req("zone", corev1.NodeSelectorOpIn, "a")).Obj(), false},
		{"empty term matches nothing", st.MakePod().RequiredNodeAffinity().Obj(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &NodeAffinity{}
			state := framework.NewCycleState()
			pre := pl.PreFilter(context.Background(), state, tt.pod)
			if pre.IsSkip() {
				if !tt.fits {
					t.Fatal("PreFilter skipped a pod with requirements")
				}
				return
			}
			s := pl.Filter(context.Background(), state, tt.pod, st.NodeInfo(node))
			if s.IsSuccess() != tt.fits {
				t.Fatalf("Filter = %v, want fits=%v", s, tt.fits)
			}
			if !tt.fits && (s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != ErrReason) {
				t.Fatalf("Filter = %v", s)
			}
		})
	}
}

func TestScore(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a-ssd").Label("zone", "a").Label("disk", "ssd").Obj(),
		st.MakeNode().Name("a").Label("zone", "a").Obj(),
		st.MakeNode().Name("b-ssd").Label("zone", "b").Label("disk", "ssd").Obj(),
		st.MakeNode().Name("b").Label("zone", "b").Obj(),
	}
	pod := st.MakePod().
		PreferredNodeAffinity(3, req("zone", corev1.NodeSelectorOpIn, "a")).
		PreferredNodeAffinity(1, req("disk", corev1.NodeSelectorOpIn, "ssd")).Obj()
	pl := &NodeAffinity{}
	state := framework.NewCycleState()
	if s := pl.PreScore(context.Background(), state, pod, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	scores := make([]framework.NodeScore, len(nodes))
	for i, n := range nodes {
		s, _ := pl.Score(context.Background(), state, pod, st.NodeInfo(n))
		scores[i] = framework.NodeScore{Name: n.Name, Score: s}
	}
	_ = pl.NormalizeScore(context.Background(), state, pod, scores)
	want := []int64{100, 75, 25, 0}
	for i := range scores {
		if scores[i].Score != want[i] {
			t.Errorf("%s: %d, want %d", scores[i].Name, scores[i].Score, want[i])
		}
	}
	if s := pl.PreScore(context.Background(), framework.NewCycleState(), st.MakePod().Obj(), nil); !s.IsSkip() {
		t.Errorf("PreScore without preferences = %v, want Skip", s)
	}
}
