package nodeunschedulable

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		fits bool
	}{
		{"schedulable", st.MakePod().Obj(), st.MakeNode().Name("n").Obj(), true},
		{"cordoned", st.MakePod().Obj(), st.MakeNode().Name("n").Unschedulable().Obj(), false},
		{"cordoned, tolerated", st.MakePod().Toleration(corev1.TaintNodeUnschedulable, "", corev1.TolerationOpExists, corev1.TaintEffectNoSchedule).Obj(), st.MakeNode().Name("n").Unschedulable().Obj(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&NodeUnschedulable{}).Filter(context.Background(), framework.NewCycleState(), tt.pod, st.NodeInfo(tt.node))
			if s.IsSuccess() != tt.fits || (!tt.fits && s.Message() != ErrReason) {
				t.Fatalf("Filter = %v, want fits=%v", s, tt.fits)
			}
		})
	}
}
