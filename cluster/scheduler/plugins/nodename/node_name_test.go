package nodename

import (
	"context"
	"testing"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func TestFilter(t *testing.T) {
	ni := st.NodeInfo(st.MakeNode().Name("n1").Obj())
	tests := []struct {
		name, nodeName string
		fits           bool
	}{
		{"no node named", "", true},
		{"this node", "n1", true},
		{"another node", "n2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := st.MakePod().Node(tt.nodeName).Obj()
			s := (&NodeName{}).Filter(context.Background(), framework.NewCycleState(), pod, ni)
			if s.IsSuccess() != tt.fits || (!tt.fits && (s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != ErrReason)) {
				t.Fatalf("Filter = %v, want fits=%v", s, tt.fits)
			}
		})
	}
}
