package tainttoleration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func TestFilter(t *testing.T) {
	tainted := st.MakeNode().Name("n").Taint("key", "value", corev1.TaintEffectNoSchedule).Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want string // "" fits
	}{
		{"no taints", st.MakePod().Obj(), st.MakeNode().Name("n").Obj(), ""},
		{"untolerated NoSchedule", st.MakePod().Obj(), tainted, "node(s) had untolerated taint {key: value}"},
		{"untolerated NoExecute", st.MakePod().Obj(), st.MakeNode().Name("n").Taint("k", "", corev1.TaintEffectNoExecute).Obj(), "node(s) had untolerated taint {k: }"},
		{"PreferNoSchedule does not filter", st.MakePod().Obj(), st.MakeNode().Name("n").Taint("k", "v", corev1.TaintEffectPreferNoSchedule).Obj(), ""},
		{"tolerated by Equal", st.MakePod().Toleration("key", "value", corev1.TolerationOpEqual, corev1.TaintEffectNoSchedule).Obj(), tainted, ""},
		{"Equal with another value", st.MakePod().Toleration("key", "other", corev1.TolerationOpEqual, corev1.TaintEffectNoSchedule).Obj(), tainted, "node(s) had untolerated taint {key: value}"},
		{"tolerated by Exists", st.MakePod().Toleration("key", "", corev1.TolerationOpExists, "").Obj(), tainted, ""},
		{"empty key Exists tolerates all", st.MakePod().Toleration("", "", corev1.TolerationOpExists, "").Obj(), tainted, ""},
		{"effect mismatch", st.MakePod().Toleration("key", "value", corev1.TolerationOpEqual, corev1.TaintEffectNoExecute).Obj(), tainted, "node(s) had untolerated taint {key: value}"},
		{"numeric Gt", st.MakePod().Toleration("gen", "3", corev1.TolerationOpGt, "").Obj(), st.MakeNode().Name("n").Taint("gen", "5", corev1.TaintEffectNoSchedule).Obj(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&TaintToleration{}).Filter(context.Background(), framework.NewCycleState(), tt.pod, st.NodeInfo(tt.node))
			if tt.want == "" {
				if !s.IsSuccess() {
					t.Fatalf("Filter = %v, want success", s)
				}
				return
			}
			if s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != tt.want {
				t.Fatalf("Filter = %v, want UnschedulableAndUnresolvable %q", s, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("clean").Obj(),
		st.MakeNode().Name("one").Taint("a", "", corev1.TaintEffectPreferNoSchedule).Obj(),
		st.MakeNode().Name("two").Taint("a", "", corev1.TaintEffectPreferNoSchedule).Taint("b", "", corev1.TaintEffectPreferNoSchedule).Obj(),
		st.MakeNode().Name("hard").Taint("c", "", corev1.TaintEffectNoSchedule).Obj(), // only PreferNoSchedule counts
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []int64
	}{
		{"fewer untolerated is better", st.MakePod().Obj(), []int64{100, 50, 0, 100}},
		{"tolerating a levels", st.MakePod().Toleration("a", "", corev1.TolerationOpExists, corev1.TaintEffectPreferNoSchedule).Obj(), []int64{100, 100, 0, 100}},
		{"tolerating all", st.MakePod().Toleration("", "", corev1.TolerationOpExists, "").Obj(), []int64{100, 100, 100, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &TaintToleration{}
			state := framework.NewCycleState()
			_ = pl.PreScore(context.Background(), state, tt.pod, nil)
			scores := make([]framework.NodeScore, len(nodes))
			for i, n := range nodes {
				s, st := pl.Score(context.Background(), state, tt.pod, st.NodeInfo(n))
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				scores[i] = framework.NodeScore{Name: n.Name, Score: s}
			}
			_ = pl.NormalizeScore(context.Background(), state, tt.pod, scores)
			for i := range scores {
				if scores[i].Score != tt.want[i] {
					t.Errorf("%s: %d, want %d", scores[i].Name, scores[i].Score, tt.want[i])
				}
			}
		})
	}
}
