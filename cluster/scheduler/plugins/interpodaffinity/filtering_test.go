package interpodaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

const (
	hostname = corev1.LabelHostname
	zone     = corev1.LabelTopologyZone
)

func TestFilter(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a1").Label(zone, "a").Obj(),
		st.MakeNode().Name("a2").Label(zone, "a").Obj(),
		st.MakeNode().Name("b1").Label(zone, "b").Obj(),
		st.MakeNode().Name("nozone").Obj(),
	}
	web := func(name, node string) *corev1.Pod {
		return st.MakePod().Name(name).Label("app", "web").Node(node).Obj()
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     map[string]string // node → reason ("" fits)
		skip     bool
	}{
		{
			name: "no terms, no anti-affinity in the cluster: skipped",
			pod:  st.MakePod().Name("p").Obj(), existing: []*corev1.Pod{web("w", "a1")}, skip: true,
		},
		{
			name:     "anti-affinity on hostname",
			pod:      st.MakePod().Name("p").Label("app", "web").PodAntiAffinity("app", "web", hostname).Obj(),
			existing: []*corev1.Pod{web("w", "a1")},
			want:     map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": "", "b1": "", "nozone": ""},
		},
		{
			name:     "anti-affinity on zone",
			pod:      st.MakePod().Name("p").PodAntiAffinity("app", "web", zone).Obj(),
			existing: []*corev1.Pod{web("w", "a1")},
			want:     map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": ErrReasonAntiAffinityRulesNotMatch, "b1": "", "nozone": ""},
		},
		{
			name:     "anti-affinity only within the namespace",
			pod:      st.MakePod().Name("p").Namespace("other").PodAntiAffinity("app", "web", hostname).Obj(),
			existing: []*corev1.Pod{web("w", "a1")},
			want:     map[string]string{"a1": "", "a2": ""},
		},
		{
			name:     "existing pod's anti-affinity rejects the newcomer",
			pod:      st.MakePod().Name("p").Label("app", "web").Obj(),
			existing: []*corev1.Pod{st.MakePod().Name("guard").Node("b1").PodAntiAffinity("app", "web", zone).Obj()},
			want:     map[string]string{"a1": "", "b1": ErrReasonExistingAntiAffinityRulesNotMatch, "nozone": ""},
		},
		{
			name:     "affinity to a zone with the pods",
			pod:      st.MakePod().Name("p").PodAffinity("app", "web", zone).Obj(),
			existing: []*corev1.Pod{web("w", "a1")},
			want:     map[string]string{"a1": "", "a2": "", "b1": ErrReasonAffinityRulesNotMatch, "nozone": ErrReasonAffinityRulesNotMatch},
		},
		{
			name: "affinity with no match anywhere: the first pod of its group may go where the key exists",
			pod:  st.MakePod().Name("p").Label("app", "db").PodAffinity("app", "db", zone).Obj(),
			want: map[string]string{"a1": "", "b1": "", "nozone": ErrReasonAffinityRulesNotMatch},
		},
		{
			name: "affinity with no match that does not select itself fits nowhere",
			pod:  st.MakePod().Name("p").PodAffinity("app", "db", zone).Obj(),
			want: map[string]string{"a1": ErrReasonAffinityRulesNotMatch, "b1": ErrReasonAffinityRulesNotMatch},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &InterPodAffinity{h: &st.Handle{Lister: cache.NewSnapshot(tt.existing, nodes)}}
			state := framework.NewCycleState()
			pre := pl.PreFilter(context.Background(), state, tt.pod)
			if pre.IsSkip() != tt.skip {
				t.Fatalf("PreFilter = %v, want skip=%v", pre, tt.skip)
			}
			if tt.skip {
				return
			}
			for _, n := range nodes {
				want, ok := tt.want[n.Name]
				if !ok {
					continue
				}
				s := pl.Filter(context.Background(), state, tt.pod, pl.h.SnapshotLister().Get(n.Name))
				if s.Message() != want {
					t.Errorf("%s: %v, want %q", n.Name, s, want)
				}
			}
		})
	}
}
