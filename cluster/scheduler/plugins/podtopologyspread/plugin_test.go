package podtopologyspread

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

const (
	hostname = corev1.LabelHostname
	zone     = corev1.LabelTopologyZone
)

func spread(p *st.PodWrapper, maxSkew int32, key string, action corev1.UnsatisfiableConstraintAction, mod func(*corev1.TopologySpreadConstraint)) *st.PodWrapper {
	c := corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: action,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	if mod != nil {
		mod(&c)
	}
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	return p
}

func web(name, node string) *corev1.Pod {
	return st.MakePod().Name(name).Label("app", "web").Node(node).Obj()
}

func TestFilter(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a1").Label(zone, "a").Obj(),
		st.MakeNode().Name("a2").Label(zone, "a").Obj(),
		st.MakeNode().Name("b1").Label(zone, "b").Obj(),
		st.MakeNode().Name("b2").Label(zone, "b").Label("tainted", "yes").Taint("k", "v", corev1.TaintEffectNoSchedule).Obj(),
		st.MakeNode().Name("nozone").Obj(),
		st.MakeNode().Name("c1").Label("tainted", "no").Obj(),
	}
	const ok, skew, label = "", ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []*corev1.Pod
		want     map[string]string
		skip     bool
	}{
		{name: "no constraints: skipped", pod: st.MakePod().Name("p").Obj(), skip: true},
		{name: "ScheduleAnyway only: skipped", pod: spread(st.MakePod().Name("p").Label("app", "web"), 1, zone, corev1.ScheduleAnyway, nil).Obj(), skip: true},
		{
			name:     "zone maxSkew 1: the emptier zone only",
			pod:      spread(st.MakePod().Name("p").Label("app", "web"), 1, zone, corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{web("w1", "a1"), web("w2", "a2")},
			want:     map[string]string{"a1": skew, "a2": skew, "b1": ok, "b2": ok, "nozone": label},
		},
		{
			name:     "hostname maxSkew 1: empty nodes only",
			pod:      spread(st.MakePod().Name("p").Label("app", "web"), 1, hostname, corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{web("w1", "a1")},
			want:     map[string]string{"a1": skew, "a2": ok, "b1": ok, "nozone": ok},
		},
		{
			name:     "pods of other namespaces and unmatched labels do not count",
			pod:      spread(st.MakePod().Name("p").Label("app", "web"), 1, zone, corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{st.MakePod().Name("o").Namespace("other").Label("app", "web").Node("a1").Obj(), st.MakePod().Name("x").Label("app", "db").Node("a1").Obj()},
			want:     map[string]string{"a1": ok, "b1": ok},
		},
		{
			name:     "a pod its selector does not match adds nothing to the skew",
			pod:      spread(st.MakePod().Name("p").Label("app", "other"), 1, zone, corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{web("w1", "a1")},
			want:     map[string]string{"a1": ok, "b1": ok},
		},
		{
			name: "minDomains above the domains: global minimum 0",
			pod: spread(st.MakePod().Name("p").Label("app", "web"), 1, zone, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) {
				c.MinDomains = ptr.To[int32](3)
			}).Obj(),
			existing: []*corev1.Pod{web("w1", "a1"), web("w2", "b1")},
			want:     map[string]string{"a1": skew, "b1": skew},
		},
		{
			name:     "nodeAffinityPolicy Honor (default): nodes outside the node affinity do not count",
			pod:      spread(st.MakePod().Name("p").Label("app", "web").NodeSelector(map[string]string{zone: "a"}), 1, zone, corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{web("w1", "a1")},
			// Only zone a is a domain; its minimum is its own count.
			want: map[string]string{"a1": ok, "a2": ok},
		},
		{
			name: "nodeAffinityPolicy Ignore: every node counts",
			pod: spread(st.MakePod().Name("p").Label("app", "web").NodeSelector(map[string]string{zone: "a"}), 1, zone, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) {
				c.NodeAffinityPolicy = ptr.To(corev1.NodeInclusionPolicyIgnore)
			}).Obj(),
			existing: []*corev1.Pod{web("w1", "a1")},
			want:     map[string]string{"a1": skew, "a2": skew},
		},
		{
			name: "nodeTaintsPolicy Honor: an untolerated node's domain is left out",
			pod: spread(st.MakePod().Name("p").Label("app", "web"), 1, "tainted", corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) {
				c.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
			}).Obj(),
			existing: []*corev1.Pod{web("w1", "b2"), web("w2", "b2")},
			// b2's pods are not counted: 0+1-0.
			want: map[string]string{"b2": ok, "c1": ok},
		},
		{
			name:     "nodeTaintsPolicy Ignore (default): the tainted node's pods count",
			pod:      spread(st.MakePod().Name("p").Label("app", "web"), 1, "tainted", corev1.DoNotSchedule, nil).Obj(),
			existing: []*corev1.Pod{web("w1", "b2"), web("w2", "b2")},
			want:     map[string]string{"b2": skew, "c1": ok},
		},
		{
			name: "matchLabelKeys narrow the selector to the pod's value",
			pod: spread(st.MakePod().Name("p").Label("app", "web").Label("rev", "2"), 1, zone, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) {
				c.MatchLabelKeys = []string{"rev"}
			}).Obj(),
			existing: []*corev1.Pod{
				st.MakePod().Name("old1").Label("app", "web").Label("rev", "1").Node("b1").Obj(),
				st.MakePod().Name("old2").Label("app", "web").Label("rev", "1").Node("b1").Obj(),
				st.MakePod().Name("new").Label("app", "web").Label("rev", "2").Node("a1").Obj(),
			},
			want: map[string]string{"a1": skew, "b1": ok},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &PodTopologySpread{h: &st.Handle{Lister: cache.NewSnapshot(tt.existing, nodes)}}
			state := framework.NewCycleState()
			pre := pl.PreFilter(context.Background(), state, tt.pod)
			if pre.IsSkip() != tt.skip || (!tt.skip && !pre.IsSuccess()) {
				t.Fatalf("PreFilter = %v, want skip=%v", pre, tt.skip)
			}
			if tt.skip {
				return
			}
			for name, want := range tt.want {
				s := pl.Filter(context.Background(), state, tt.pod, pl.h.SnapshotLister().Get(name))
				if s.Message() != want {
					t.Errorf("%s: %v, want %q", name, s, want)
				}
			}
		})
	}
}

// score runs PreScore, Score and NormalizeScore over every node.
func score(t *testing.T, pl *PodTopologySpread, pod *corev1.Pod) (map[string]int64, bool) {
	t.Helper()
	state := framework.NewCycleState()
	all := pl.h.SnapshotLister().List()
	if s := pl.PreScore(context.Background(), state, pod, all); s.IsSkip() {
		return nil, true
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	scores := make([]framework.NodeScore, len(all))
	for i, ni := range all {
		v, s := pl.Score(context.Background(), state, pod, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		scores[i] = framework.NodeScore{Name: ni.Node().Name, Score: v}
	}
	if s := pl.NormalizeScore(context.Background(), state, pod, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.Score
	}
	return out, false
}

func TestScore(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a1").Label(zone, "a").Obj(),
		st.MakeNode().Name("a2").Label(zone, "a").Obj(),
		st.MakeNode().Name("b1").Label(zone, "b").Obj(),
		st.MakeNode().Name("nozone").Obj(),
	}
	existing := []*corev1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "a2")}
	pl := &PodTopologySpread{h: &st.Handle{Lister: cache.NewSnapshot(existing, nodes)}}

	got, skipped := score(t, pl, spread(st.MakePod().Name("p").Label("app", "web"), 1, zone, corev1.ScheduleAnyway, nil).Obj())
	if skipped {
		t.Fatal("skipped with a ScheduleAnyway constraint")
	}
	if got["b1"] != framework.MaxNodeScore || got["a1"] >= got["b1"] || got["a1"] != got["a2"] || got["nozone"] != 0 {
		t.Errorf("zone scores %v: want b1 100, a1 = a2 below it, nozone (missing key) 0", got)
	}
	got, _ = score(t, pl, spread(st.MakePod().Name("p").Label("app", "web"), 1, hostname, corev1.ScheduleAnyway, nil).Obj())
	if !(got["b1"] == framework.MaxNodeScore && got["nozone"] == framework.MaxNodeScore && got["a2"] < got["b1"] && got["a1"] < got["a2"]) {
		t.Errorf("hostname scores %v: want fewer matching pods higher (b1 = nozone > a2 > a1)", got)
	}
	if _, skipped := score(t, pl, st.MakePod().Name("p").Label("app", "web").Obj()); !skipped {
		t.Error("a pod without constraints nor workloads was scored")
	}
}

// TestSystemDefaults: a pod selected by a Service, or owned by a
// ReplicaSet, gets upstream's soft defaults with that selector; others
// none.
func TestSystemDefaults(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("a1").Label(zone, "a").Obj(),
		st.MakeNode().Name("b1").Label(zone, "b").Obj(),
	}
	existing := []*corev1.Pod{web("w1", "a1"), web("w2", "a1")}
	svcs := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	rss := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	_ = svcs.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}})
	_ = rss.Add(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	wl := &framework.WorkloadListers{Services: corelisters.NewServiceLister(svcs), ReplicaSets: appslisters.NewReplicaSetLister(rss)}
	pl := &PodTopologySpread{h: &st.Handle{Lister: cache.NewSnapshot(existing, nodes), Listers: wl}}

	selected := st.MakePod().Name("p").Label("app", "web").Obj()
	got, skipped := score(t, pl, selected)
	if skipped || got["b1"] <= got["a1"] {
		t.Errorf("a pod a Service selects: skipped=%v scores %v, want b1 above a1", skipped, got)
	}
	owned := st.MakePod().Name("q").Label("app", "web").Obj()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}}
	if sel := DefaultSelector(owned, &framework.WorkloadListers{ReplicaSets: wl.ReplicaSets}); sel.Empty() || sel.String() != "app=web" {
		t.Errorf("DefaultSelector of a ReplicaSet's pod = %q, want app=web", sel)
	}
	if _, skipped := score(t, pl, st.MakePod().Name("lonely").Label("app", "db").Obj()); !skipped {
		t.Error("a pod nothing selects got default constraints")
	}
	// The defaults are ScheduleAnyway: they never filter.
	state := framework.NewCycleState()
	if s := pl.PreFilter(context.Background(), state, selected); !s.IsSkip() {
		t.Errorf("PreFilter with only default constraints = %v, want Skip", s)
	}
}
