package framework

import (
	"testing"
)

func TestFitErrorMessage(t *testing.T) {
	cpu := NewStatus(Unschedulable, "Insufficient cpu")
	taint := NewStatus(UnschedulableAndUnresolvable, "node(s) had untolerated taint {key: value}")
	both := NewStatus(Unschedulable, "Insufficient cpu", "Insufficient memory")
	tests := []struct {
		name string
		err  FitError
		want string
	}{
		{
			name: "counted reasons, sorted as strings like upstream",
			err: FitError{NumAllNodes: 5, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{
				"n1": cpu, "n2": cpu, "n3": cpu, "n4": taint, "n5": taint,
			}}},
			want: "0/5 nodes are available: 2 node(s) had untolerated taint {key: value}, 3 Insufficient cpu.",
		},
		{
			name: "a node counts once per reason",
			err:  FitError{NumAllNodes: 2, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{"n1": both, "n2": cpu}}},
			want: "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
		},
		{
			name: "prefilter rejection replaces the histogram",
			err:  FitError{NumAllNodes: 3, Diagnosis: Diagnosis{PreFilterMsg: "pod has unbound claims", NodeToStatus: NodeToStatus{"n1": cpu}}},
			want: "0/3 nodes are available: pod has unbound claims.",
		},
		{
			name: "postfilter message appended",
			err:  FitError{NumAllNodes: 1, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{"n1": cpu}, PostFilterMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod"}},
			want: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	var s *Status
	if !s.IsSuccess() || s.Code() != Success || s.AsError() != nil || s.Message() != "" {
		t.Fatal("nil status is not Success")
	}
	if NewStatus(Success) != nil {
		t.Fatal("a Success without reasons allocates")
	}
	r := NewStatus(Unschedulable, "a", "b").WithPlugin("P")
	if !r.IsRejected() || r.Plugin() != "P" || r.Message() != "a, b" || r.AsError() == nil {
		t.Fatalf("rejection status: %v", r)
	}
	if NewStatus(Skip).AsError() != nil {
		t.Fatal("Skip is an error")
	}
}
