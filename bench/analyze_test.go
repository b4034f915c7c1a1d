package bench

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

// Two ReplicaSets, three pods; rs-0-b never became Ready. No kubelet and no
// apiserver stamps: those steps are unavailable, not invented.
func TestAnalyzeJoinGolden(t *testing.T) {
	events, _, err := trace.ReadFile(filepath.Join("testdata", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Events:  events,
		Objects: []types.UID{"rs0", "rs1"},
		Pods: []loadgen.PodOwner{
			{Namespace: "ns", Name: "rs-0-a", UID: "p0a", RSUID: "rs0"},
			{Namespace: "ns", Name: "rs-0-b", UID: "p0b", RSUID: "rs0"},
			{Namespace: "ns", Name: "rs-1-a", UID: "p1a", RSUID: "rs1"},
		},
		Replicas: 2,
	}
	r := &results.Run{Schema: results.Schema, ID: "golden", Valid: true}
	Analyze(in, r)
	for i := range r.Steps {
		r.Steps[i].SamplesMS = nil
	}
	r.EndToEnd.SamplesMS = nil
	got, _ := json.MarshalIndent(r, "", "  ")
	golden := filepath.Join("testdata", "run.golden.json")
	if *rewrite {
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("run differs from %s (go test ./bench -rewrite to accept):\n%s", golden, got)
	}
	// The points the golden file pins, spelled out.
	if r.Valid || len(r.Incomplete) != 1 || r.Incomplete[0].Name != "rs-0-b" {
		t.Errorf("rs-0-b lacks pod.ready.observed: want it listed and the run invalid, got valid=%v incomplete=%v", r.Valid, r.Incomplete)
	}
	if len(r.Waterfalls) != 2 || r.Waterfalls[0].Name != "rs-0-a" || r.Waterfalls[1].Name != "rs-1-a" || r.Waterfalls[1].EndToEnd != 300 {
		t.Errorf("waterfalls: want the p50 pod rs-0-a and the p99 pod rs-1-a (300 ms), got %+v", r.Waterfalls)
	}
	if r.EndToEnd.Count != 2 || r.EndToEnd.Max != 300 {
		t.Errorf("end to end %+v, want 2 samples, max 300 ms", r.EndToEnd.Summary)
	}
}

// ev is one synthetic stamp, at ms after the epoch.
func ev(ms float64, step, actor, name string, uid types.UID) trace.Event {
	kind := "Pod"
	if rsLevel[step] {
		kind = "ReplicaSet"
	}
	return trace.Event{TS: int64(ms * 1e6), Step: step, Actor: actor, Kind: kind, Namespace: "ns", Name: name, UID: uid}
}

// chainEvents is one ReplicaSet's pod through every step, every stamp in
// causal order, with two apiservers: the kubelet's (apiserver-1) gets the
// binding 0.5 ms after apiserver-0, and the kubelet sees it 0.2 ms after
// its own apiserver did (0.3 ms BEFORE the writer's acknowledgement, as
// etcd allows: it notifies watchers before it answers the writer).
func chainEvents(rs, pod types.UID, t0 float64, kubelet string) []trace.Event {
	n, p := string(rs), string(pod)
	return []trace.Event{
		ev(t0, loadgen.ClientRSSent, loadgen.Actor, n, rs),
		ev(t0+1, trace.RSReceived, "apiserver-0", n, rs),
		ev(t0+3, trace.RSCached, "apiserver-0", n, rs),
		ev(t0+3.2, trace.RSCached, "apiserver-1", n, rs),
		ev(t0+3.5, trace.RSPersisted, "apiserver-0", n, rs),
		ev(t0+4, loadgen.ClientRSAcked, loadgen.Actor, n, rs),
		ev(t0+3.4, trace.RSObserved, "controller-manager-1", n, rs), // via apiserver-1: 0.2 ms
		ev(t0+5, trace.PodCreateSent, "controller-manager-1", p, pod),
		ev(t0+7, trace.PodCached, "apiserver-0", p, pod),
		ev(t0+7.1, trace.PodCached, "apiserver-1", p, pod),
		ev(t0+7.5, trace.PodPersisted, "apiserver-1", p, pod),
		ev(t0+7.3, trace.PodObservedSched, "scheduler-0", p, pod), // via apiserver-0: 0.3 ms
		ev(t0+8, trace.PodScheduled, "scheduler-0", p, pod),
		ev(t0+10, trace.PodBoundCached, "apiserver-0", p, pod),
		ev(t0+10.5, trace.PodBoundCached, "apiserver-1", p, pod),
		ev(t0+11, trace.PodBound, "apiserver-0", p, pod),
		ev(t0+10.7, trace.PodObservedKubelet, kubelet, p, pod), // via apiserver-1: 0.2 ms
		ev(t0+20, trace.PodSandboxReady, kubelet, p, pod),
		ev(t0+30, trace.PodImagePulled, kubelet, p, pod),
		ev(t0+40, trace.PodContainerStarted, kubelet, p, pod),
		ev(t0+50, trace.PodProbeReady, kubelet, p, pod),
		ev(t0+52, trace.PodReadyCached, "apiserver-0", p, pod),
		ev(t0+52.5, trace.PodReadyCached, "apiserver-1", p, pod),
		ev(t0+53, trace.PodStatusPersisted, kubelet, p, pod),
		ev(t0+54, trace.EndpointsUpdated, "controller-manager-1", p, pod),
		ev(t0+52.4, trace.PodReadyObserved, loadgen.Actor, p, pod), // via apiserver-0: 0.4 ms
	}
}

func chainInput(events []trace.Event, pods ...loadgen.PodOwner) Input {
	in := Input{Events: events, Pods: pods, Replicas: 1, LatencyProfile: "zero",
		APIServerOf: map[string]string{
			"controller-manager-1": "apiserver-1", "scheduler-0": "apiserver-0",
			"hollow-nodes": "apiserver-1", "kubelet-node-0": "apiserver-1", loadgen.Actor: "apiserver-0"},
		HollowActors: map[string]bool{"hollow-nodes": true}}
	for _, p := range pods {
		in.Objects = append(in.Objects, p.RSUID)
	}
	return in
}

func stepOf(t *testing.T, r *results.Run, step, name, nodes string) results.Step {
	t.Helper()
	for _, s := range r.Steps {
		if s.Step == step && s.Name == name && s.Nodes == nodes {
			return s
		}
	}
	t.Fatalf("no step %s %q (%s) in %v", step, name, nodes, r.Steps)
	return results.Step{}
}

// Every watcher's receipt is measured from its own apiserver's watch-cache
// stamp, so a watch that overtakes the writer's acknowledgement is no
// negative sample; pods split by node kind, and ⑦ on hollow nodes is
// simulated, with no verdict.
func TestAnalyzeCausalChains(t *testing.T) {
	events := append(chainEvents("rs0", "p0", 1000, "hollow-nodes"), chainEvents("rs1", "p1", 2000, "kubelet-node-0")...)
	in := chainInput(events,
		loadgen.PodOwner{Namespace: "ns", Name: "p0", UID: "p0", RSUID: "rs0"},
		loadgen.PodOwner{Namespace: "ns", Name: "p1", UID: "p1", RSUID: "rs1"})
	r := &results.Run{Valid: true}
	Analyze(in, r)
	if !r.Valid || len(r.Negative) > 0 || len(r.Unavailable) > 0 {
		t.Fatalf("valid=%v invalid=%v negative=%v unavailable=%v", r.Valid, r.Invalid, r.Negative, r.Unavailable)
	}
	for _, c := range []struct {
		step, name, nodes string
		ms                float64
	}{
		{"②", "watch propagation → controller", results.NodesAll, 0.2},
		{"④", "scheduler notices", results.NodesHollow, 0.3},
		{"⑥", "kubelet notices", results.NodesHollow, 0.2},
		{"⑥", "kubelet notices", results.NodesReal, 0.2},
		{"⑧", "client watch sees Ready", results.NodesReal, 0.4},
		{"⑧", "endpoints list the pod", results.NodesReal, 1.5},
		{"⑤", "binding persisted", results.NodesReal, 3},
	} {
		s := stepOf(t, r, c.step, c.name, c.nodes)
		if s.Count == 0 || math.Abs(s.P50-c.ms) > 1e-6 || math.Abs(s.Max-c.ms) > 1e-6 || s.Chain == "" {
			t.Errorf("%s %s (%s): %d samples, p50 %.3f max %.3f ms, chain %q; want every sample %.1f ms and a chain", c.step, c.name, c.nodes, s.Count, s.P50, s.Max, s.Chain, c.ms)
		}
	}
	if s := stepOf(t, r, "⑦-b", "sandbox + CNI + volumes", results.NodesHollow); !s.Simulated || s.Verdict != results.VerdictSimulated {
		t.Errorf("⑦ on hollow nodes: simulated=%v verdict %q, want simulated, no verdict", s.Simulated, s.Verdict)
	}
	if s := stepOf(t, r, "⑦-b", "sandbox + CNI + volumes", results.NodesReal); s.Simulated || s.Verdict == results.VerdictSimulated {
		t.Errorf("⑦ on real nodes: simulated=%v verdict %q", s.Simulated, s.Verdict)
	}
	if len(r.Populations) != 2 || r.Populations[0].Nodes != results.NodesReal || r.Populations[1].Runtime != "simulated (zero)" {
		t.Fatalf("populations %+v", r.Populations)
	}
	// ⑦ is 10.7 → 50 ms of a 52.4 ms end to end.
	if got, want := r.Populations[0].Step7SharePct.P50, (50-10.7)/52.4*100; math.Abs(got-want) > 1e-6 {
		t.Errorf("⑦ share %.3f %%, want %.3f %%", got, want)
	}
}

// A transition whose end was stamped before its start is a bug in the
// chain: the run is invalid and the pod is named.
func TestAnalyzeNegativeSampleInvalidates(t *testing.T) {
	events := chainEvents("rs0", "p0", 1000, "hollow-nodes")
	for i := range events {
		if events[i].Step == trace.PodObservedKubelet {
			events[i].TS = int64(1010.4 * 1e6) // before apiserver-1 had the binding (1010.5)
		}
	}
	r := &results.Run{Valid: true}
	Analyze(chainInput(events, loadgen.PodOwner{Namespace: "ns", Name: "p0", UID: "p0", RSUID: "rs0"}), r)
	if r.Valid || len(r.Negative) != 1 {
		t.Fatalf("valid=%v negative=%+v, want invalid with one negative sample", r.Valid, r.Negative)
	}
	n := r.Negative[0]
	if n.Step != "⑥" || n.Pod != "p0" || n.FromActor != "apiserver-1" || n.ToActor != "hollow-nodes" || math.Abs(n.MS+0.1) > 1e-6 {
		t.Errorf("negative sample %+v, want ⑥ on p0, apiserver-1 → hollow-nodes, -0.1 ms", n)
	}
	if !strings.Contains(strings.Join(r.Invalid, "\n"), "ns/p0") {
		t.Errorf("invalid reasons do not name the pod: %v", r.Invalid)
	}
}

// The ⑧ endpoints row's chain names the object whose write was stamped.
func TestAnalyzeEndpointsChainNamesTheObject(t *testing.T) {
	events, _, err := trace.ReadFile(filepath.Join("testdata", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(ts int64, step, actor string) trace.Event {
		return trace.Event{TS: ts, Step: step, Actor: actor, Kind: "Pod", Namespace: "ns", Name: "rs-0-a", UID: "p0a"}
	}
	events = append(events, pod(1080000000, trace.PodReadyCached, "apiserver-0"), pod(1090000000, trace.EndpointsUpdated, "controller-manager-0"))
	for stamp, want := range map[string]string{"": "Endpoints write", "endpoints": "Endpoints write", "endpointslices": "EndpointSlice write"} {
		r := &results.Run{Schema: results.Schema, ID: "chain", Valid: true}
		Analyze(Input{Events: events, Objects: []types.UID{"rs0", "rs1"}, Replicas: 2, EndpointsStamp: stamp,
			Pods: []loadgen.PodOwner{{Namespace: "ns", Name: "rs-0-a", UID: "p0a", RSUID: "rs0"}}}, r)
		found := false
		for _, s := range r.Steps {
			if s.To == trace.EndpointsUpdated {
				found = true
				if !strings.Contains(s.Chain, want) {
					t.Errorf("stamp %q: chain %q, want it to name the %s", stamp, s.Chain, want)
				}
			}
		}
		if !found {
			t.Errorf("stamp %q: no endpoints.updated row", stamp)
		}
	}
}
