package interpodaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func preferred(weight int32, key, value, topologyKey string) corev1.WeightedPodAffinityTerm {
	return corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}, TopologyKey: topologyKey}}
}

func withPreferred(p *st.PodWrapper, affinity, anti []corev1.WeightedPodAffinityTerm) *corev1.Pod {
	pod := p.Obj()
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if affinity != nil {
		pod.Spec.Affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: affinity}
	}
	if anti != nil {
		pod.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: anti}
	}
	return pod
}

func TestScore(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a1").Label(zone, "a").Obj(),
		st.MakeNode().Name("a2").Label(zone, "a").Obj(),
		st.MakeNode().Name("b1").Label(zone, "b").Obj(),
	}
	anchor := st.MakePod().Name("anchor").Label("app", "anchor").Node("a1").Obj()
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     map[string]int64
		skip     bool
	}{
		{name: "no terms anywhere: skipped", pod: st.MakePod().Name("p").Obj(), existing: []*corev1.Pod{anchor}, skip: true},
		{
			name:     "preferred affinity on hostname: the anchor's node",
			pod:      withPreferred(st.MakePod().Name("p"), []corev1.WeightedPodAffinityTerm{preferred(100, "app", "anchor", hostname)}, nil),
			existing: []*corev1.Pod{anchor},
			want:     map[string]int64{"a1": 100, "a2": 0, "b1": 0},
		},
		{
			name:     "preferred affinity on zone: the anchor's zone",
			pod:      withPreferred(st.MakePod().Name("p"), []corev1.WeightedPodAffinityTerm{preferred(100, "app", "anchor", zone)}, nil),
			existing: []*corev1.Pod{anchor},
			want:     map[string]int64{"a1": 100, "a2": 100, "b1": 0},
		},
		{
			name:     "preferred anti-affinity: away from the anchor's zone",
			pod:      withPreferred(st.MakePod().Name("p"), nil, []corev1.WeightedPodAffinityTerm{preferred(50, "app", "anchor", zone)}),
			existing: []*corev1.Pod{anchor},
			want:     map[string]int64{"a1": 0, "a2": 0, "b1": 100},
		},
		{
			name: "weights add up: affinity 100 to a1's pod outweighs anti-affinity 30 to b1's",
			pod: withPreferred(st.MakePod().Name("p"), []corev1.WeightedPodAffinityTerm{preferred(100, "app", "anchor", hostname)},
				[]corev1.WeightedPodAffinityTerm{preferred(30, "app", "db", hostname)}),
			existing: []*corev1.Pod{anchor, st.MakePod().Name("db").Label("app", "db").Node("b1").Obj()},
			// raw: a1 100, a2 0, b1 -30 → normalized over [-30, 100].
			want: map[string]int64{"a1": 100, "a2": 23, "b1": 0},
		},
		{
			name: "an existing pod's preferred anti-affinity pushes the newcomer away",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			existing: []*corev1.Pod{withPreferred(st.MakePod().Name("guard").Node("a1"), nil,
				[]corev1.WeightedPodAffinityTerm{preferred(10, "app", "web", hostname)})},
			want: map[string]int64{"a1": 0, "a2": 100, "b1": 100},
		},
		{
			name: "an existing pod's preferred affinity pulls the newcomer in",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			existing: []*corev1.Pod{withPreferred(st.MakePod().Name("friend").Node("b1"),
				[]corev1.WeightedPodAffinityTerm{preferred(10, "app", "web", zone)}, nil)},
			want: map[string]int64{"a1": 0, "a2": 0, "b1": 100},
		},
		{
			name:     "an existing pod's required affinity selecting the newcomer counts with the hard weight",
			pod:      st.MakePod().Name("p").Label("app", "web").Obj(),
			existing: []*corev1.Pod{st.MakePod().Name("needy").Node("a2").PodAffinity("app", "web", hostname).Obj()},
			want:     map[string]int64{"a1": 0, "a2": 100, "b1": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &InterPodAffinity{h: &st.Handle{Lister: cache.NewSnapshot(tt.existing, nodes)}}
			state := framework.NewCycleState()
			all := pl.h.SnapshotLister().List()
			pre := pl.PreScore(context.Background(), state, tt.pod, all)
			if pre.IsSkip() != tt.skip || (!tt.skip && !pre.IsSuccess()) {
				t.Fatalf("PreScore = %v, want skip=%v", pre, tt.skip)
			}
			if tt.skip {
				return
			}
			scores := make([]framework.NodeScore, len(all))
			for i, ni := range all {
				v, s := pl.Score(context.Background(), state, tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatal(s)
				}
				scores[i] = framework.NodeScore{Name: ni.Node().Name, Score: v}
			}
			if s := pl.NormalizeScore(context.Background(), state, tt.pod, scores); !s.IsSuccess() {
				t.Fatal(s)
			}
			for _, s := range scores {
				if s.Score != tt.want[s.Name] {
					t.Errorf("%s scored %d, want %d (all %v)", s.Name, s.Score, tt.want[s.Name], scores)
				}
			}
		})
	}
}
