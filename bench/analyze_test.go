package bench

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
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
