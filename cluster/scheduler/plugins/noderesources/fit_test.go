package noderesources

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func TestFitFilter(t *testing.T) {
	node := st.MakeNode().Name("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "3").Obj()
	used := st.MakePod().Name("used").Node("n").Req("cpu", "3", "memory", "2Gi").Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		on   []*corev1.Pod
		want framework.Code
		why  []string
	}{
		{"fits", st.MakePod().Name("p").Req("cpu", "1", "memory", "1Gi").Obj(), []*corev1.Pod{used}, framework.Success, nil},
		{"cpu", st.MakePod().Name("p").Req("cpu", "1500m").Obj(), []*corev1.Pod{used}, framework.Unschedulable, []string{"Insufficient cpu"}},
		{"cpu and memory", st.MakePod().Name("p").Req("cpu", "2", "memory", "7Gi").Obj(), []*corev1.Pod{used}, framework.Unschedulable, []string{"Insufficient cpu", "Insufficient memory"}},
		{"no requests fit anywhere with room for a pod", st.MakePod().Name("p").Obj(), []*corev1.Pod{used, used}, framework.Success, nil},
		{"pod count", st.MakePod().Name("p").Obj(), []*corev1.Pod{used, used, used}, framework.Unschedulable, []string{"Too many pods"}},
		{"extended resource the node lacks", st.MakePod().Name("p").Req("example.com/gpu", "1").Obj(), nil, framework.Unschedulable, []string{"Insufficient example.com/gpu"}},
		// init containers run before the app containers: the larger wins.
		{"init container peak", st.MakePod().Name("p").Req("cpu", "500m").InitReq(false, "cpu", "2").Obj(), []*corev1.Pod{used}, framework.Unschedulable, []string{"Insufficient cpu"}},
		{"init container below app", st.MakePod().Name("p").Req("cpu", "1").InitReq(false, "cpu", "500m").Obj(), []*corev1.Pod{used}, framework.Success, nil},
		// a sidecar keeps running: it adds to the app containers.
		{"sidecar adds", st.MakePod().Name("p").Req("cpu", "600m").InitReq(true, "cpu", "500m").Obj(), []*corev1.Pod{used}, framework.Unschedulable, []string{"Insufficient cpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for i, p := range tt.on {
				c := p.DeepCopy()
				c.UID = types.UID(fmt.Sprintf("%s-%d", c.UID, i))
				pods = append(pods, c)
			}
			ni := st.NodeInfo(node, pods...)
			pl := &Fit{}
			state := framework.NewCycleState()
			if s := pl.PreFilter(context.Background(), state, tt.pod); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			s := pl.Filter(context.Background(), state, tt.pod, ni)
			if s.Code() != tt.want || !reflect.DeepEqual(s.Reasons(), tt.why) {
				t.Errorf("Filter = %v, want %v %v", s, tt.want, tt.why)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name    string
		pod     *corev1.Pod
		cpu     int64
		nonZero int64
	}{
		{"containers sum", st.MakePod().Req("cpu", "1").Container("x", "cpu", "500m").Obj(), 1500, 1500},
		{"init max", st.MakePod().Req("cpu", "1").InitReq(false, "cpu", "3").InitReq(false, "cpu", "2").Obj(), 3000, 3000},
		{"sidecar then init", st.MakePod().Req("cpu", "1").InitReq(true, "cpu", "1").InitReq(false, "cpu", "2").Obj(), 3000, 3000},
		{"sidecar plus app", st.MakePod().Req("cpu", "2").InitReq(true, "cpu", "1").InitReq(false, "cpu", "1").Obj(), 3000, 3000},
		{"no request scores as 100m", st.MakePod().Obj(), 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := framework.PodRequests(tt.pod).MilliCPU; got != tt.cpu {
				t.Errorf("PodRequests cpu = %d, want %d", got, tt.cpu)
			}
			if got := framework.PodRequestsNonZero(tt.pod).MilliCPU; got != tt.nonZero {
				t.Errorf("PodRequestsNonZero cpu = %d, want %d", got, tt.nonZero)
			}
		})
	}
}

func TestScores(t *testing.T) {
	node := st.MakeNode().Name("n").Capacity("cpu", "4", "memory", "8Gi").Obj()
	half := st.MakePod().Name("half").Node("n").Req("cpu", "2", "memory", "4Gi").Obj()
	tests := []struct {
		name            string
		pod             *corev1.Pod
		on              []*corev1.Pod
		least, balanced int64
	}{
		{"empty node, even pod", st.MakePod().Name("p").Req("cpu", "1", "memory", "2Gi").Obj(), nil, 75, 100},
		{"half full node", st.MakePod().Name("p").Req("cpu", "1", "memory", "2Gi").Obj(), []*corev1.Pod{half}, 25, 100},
		{"cpu heavy pod", st.MakePod().Name("p").Req("cpu", "2", "memory", "1Gi").Obj(), nil, 68, 81},
		{"best effort pod counts defaults", st.MakePod().Name("p").Obj(), nil, 97, 100},
		{"over capacity scores 0", st.MakePod().Name("p").Req("cpu", "8", "memory", "16Gi").Obj(), nil, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ni := st.NodeInfo(node, tt.on...)
			state := framework.NewCycleState()
			fit := &Fit{}
			_ = fit.PreScore(context.Background(), state, tt.pod, nil)
			if got, _ := fit.Score(context.Background(), state, tt.pod, ni); got != tt.least {
				t.Errorf("LeastAllocated = %d, want %d", got, tt.least)
			}
			ba := &BalancedAllocation{}
			if s := ba.PreScore(context.Background(), state, tt.pod, nil); s.IsSkip() {
				if tt.balanced != 100 {
					t.Errorf("BalancedAllocation skipped, want %d", tt.balanced)
				}
				return
			}
			if got, _ := ba.Score(context.Background(), state, tt.pod, ni); got != tt.balanced {
				t.Errorf("BalancedAllocation = %d, want %d", got, tt.balanced)
			}
		})
	}
}
