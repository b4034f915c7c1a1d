package bench

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// outsideEvents is what the load generator's watches stamp of one
// ReplicaSet with two pods on a cluster whose components stamp nothing:
// times in ms after the send.
func outsideEvents(skip string) []trace.Event {
	ms := func(v float64) int64 { return 1_000_000_000 + int64(v*1e6) }
	ev := func(at float64, step string, uid types.UID) trace.Event {
		return trace.Event{TS: ms(at), Step: step, Actor: loadgen.Actor, Kind: "Pod", Namespace: "ns", UID: uid}
	}
	out := []trace.Event{ev(0, loadgen.ClientRSSent, "rs"), ev(12, loadgen.ClientRSAcked, "rs")}
	for i, p := range []types.UID{"a", "b"} {
		d := float64(i) // pod b is 1 ms behind a at every step
		for _, e := range []trace.Event{
			ev(20+d, loadgen.ClientPodAdded, p), ev(25+d, loadgen.ClientPodBound, p), ev(60+d, loadgen.ClientPodRunning, p),
			ev(70+d, trace.PodReadyObserved, p), ev(80+d, loadgen.ClientEndpointsListed, p),
		} {
			if p == "b" && e.Step == skip {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

func outsideInput(events []trace.Event) Input {
	return Input{Events: events, Objects: []types.UID{"rs"}, Replicas: 2, Outside: true, External: true,
		Pods: []loadgen.PodOwner{
			{Namespace: "ns", Name: "rs-a", UID: "a", RSUID: "rs", Node: "hollow-0"},
			{Namespace: "ns", Name: "rs-b", UID: "b", RSUID: "rs", Node: "node-1"},
		},
		NodeKinds: map[string]string{"hollow-0": results.NodesHollow, "node-1": results.NodesReal}}
}

// On a cluster whose components stamp nothing, the outside rows are
// measured from the load generator's stamps, pods split by what their
// nodes say they are; the component steps are not observable, never
// invented; and the run says where each step came from.
func TestAnalyzeOutside(t *testing.T) {
	r := &results.Run{Valid: true}
	Analyze(outsideInput(outsideEvents("")), r)
	if !r.Valid {
		t.Fatalf("invalid: %v", r.Invalid)
	}
	want := map[string]float64{ // name/nodes → p50
		"outside: client sent → pod seen created/real":                21,
		"outside: client sent → pod seen created/hollow":              20,
		"outside: pod seen created → seen bound/hollow":               5,
		"outside: control plane: client sent → pod seen bound/hollow": 25,
		"outside: seen bound → seen Running/real":                     35,
		"outside: seen Running → seen Ready/hollow":                   10,
		"outside: client sent → Endpoints seen listing the pod/real":  81,
		"client → apiserver: sent → 201/all":                          12,
	}
	got := map[string]float64{}
	for _, s := range r.Steps {
		got[s.Name+"/"+s.Nodes] = s.P50
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: p50 %v (present %v), want %v; rows %v", k, g, ok, v, got)
		}
	}
	if r.EndToEnd.Count != 2 || r.EndToEnd.Max != 71 {
		t.Errorf("end to end %+v, want 2 samples up to 71 ms", r.EndToEnd.Summary)
	}
	for _, s := range r.Steps {
		if s.From == trace.RSReceived || s.To == trace.PodBound {
			t.Errorf("row %q from component stamps nobody made", s.Name)
		}
	}
	for _, step := range []string{trace.RSReceived, trace.PodBound, trace.PodObservedKubelet, trace.EndpointsUpdated} {
		if !slices.Contains(r.NotObservable, step) {
			t.Errorf("%s not listed not observable: %v", step, r.NotObservable)
		}
	}
	where := map[string]string{}
	for _, s := range r.Sources {
		where[s.Step] = s.Where
	}
	for step, w := range map[string]string{
		loadgen.ClientRSAcked: results.FromHarness, loadgen.ClientPodBound: results.FromHarness, trace.PodReadyObserved: results.FromHarness,
		loadgen.ClientEndpointsListed: results.FromHarness, trace.PodScheduled: results.NotObservable, trace.PodProbeReady: results.NotObservable,
	} {
		if where[step] != w {
			t.Errorf("source of %s: %q, want %q", step, where[step], w)
		}
	}
	if len(r.Populations) != 2 {
		t.Errorf("populations %+v, want real and hollow", r.Populations)
	}
}

// A pod the watch never saw Running, where the others were, makes the run
// invalid and is named: the outside steps are held to the same
// completeness as the actors'.
func TestAnalyzeOutsideIncomplete(t *testing.T) {
	r := &results.Run{Valid: true}
	Analyze(outsideInput(outsideEvents(loadgen.ClientPodRunning)), r)
	if r.Valid || len(r.Incomplete) != 1 || r.Incomplete[0].Name != "rs-b" || !slices.Equal(r.Incomplete[0].Missing, []string{loadgen.ClientPodRunning}) {
		t.Errorf("valid %v incomplete %+v, want rs-b missing %s", r.Valid, r.Incomplete, loadgen.ClientPodRunning)
	}
}

// A run without the outside view neither reports its steps nor lists them
// unavailable: the process provider's runs are as before.
func TestAnalyzeInsideHasNoOutsideSteps(t *testing.T) {
	in := outsideInput([]trace.Event{
		{TS: 1, Step: loadgen.ClientRSSent, Actor: loadgen.Actor, UID: "rs"},
		{TS: 5, Step: trace.PodReadyObserved, Actor: loadgen.Actor, UID: "a"},
		{TS: 6, Step: trace.PodReadyObserved, Actor: loadgen.Actor, UID: "b"},
	})
	in.Outside, in.External = false, false
	r := &results.Run{Valid: true}
	Analyze(in, r)
	for _, s := range r.Unavailable {
		if outsideSteps[s] {
			t.Errorf("%s listed unavailable in a run without the outside view", s)
		}
	}
	if len(r.NotObservable) != 0 {
		t.Errorf("not observable %v in a run of kstep's own actors", r.NotObservable)
	}
}

func TestNodeKind(t *testing.T) {
	for _, c := range []struct {
		node corev1.Node
		want string
	}{
		{corev1.Node{Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "kstep hollow node", KernelVersion: "hollow"}}}, KindHollowKstep},
		{corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}, KindFakeKwok},
		{corev1.Node{Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "Debian GNU/Linux 12 (bookworm)"}}}, KindReal},
	} {
		if got := nodeKind(&c.node); got != c.want {
			t.Errorf("%+v: %s, want %s", c.node.Status.NodeInfo, got, c.want)
		}
	}
}

// The outside view on a cluster of kstep's own actors (a profile's
// outsideView): its rows beside the actors', and a step no actor stamped
// is unavailable, not "not observable".
func TestAnalyzeOutsideOnKstepCluster(t *testing.T) {
	in := outsideInput(append(outsideEvents(""),
		trace.Event{TS: 1_000_000_000 + 2e6, Step: trace.RSReceived, Actor: "apiserver-0", UID: "rs"},
		trace.Event{TS: 1_000_000_000 + 3e6, Step: trace.RSPersisted, Actor: "apiserver-0", UID: "rs"}))
	in.External = false
	r := &results.Run{Valid: true}
	Analyze(in, r)
	if !r.Valid || len(r.NotObservable) != 0 {
		t.Fatalf("valid %v (%v), not observable %v: want valid, none", r.Valid, r.Invalid, r.NotObservable)
	}
	names := map[string]bool{}
	for _, s := range r.Steps {
		names[s.Name] = true
	}
	if !names["inside: admission + etcd write"] || !names["outside: pod seen created → seen bound"] {
		t.Errorf("rows %v, want the actors' and the outside ones", names)
	}
	where := map[string]string{}
	for _, s := range r.Sources {
		where[s.Step] = s.Where
	}
	if where[trace.RSPersisted] != results.FromCluster || where[trace.PodBound] != results.FromNowhere || where[loadgen.ClientPodAdded] != results.FromHarness {
		t.Errorf("sources %v", where)
	}
}
