package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

// writesRun is a run of 4 pods whose apiservers answered these requests.
func writesRun() *Run {
	return &Run{Schema: Schema, ID: "w", Pods: 4, API: []APILatency{
		{Verb: "update", Resource: "pods/status", Count: 12},
		{Verb: "create", Resource: EventsResource, Count: 14},
		{Verb: "patch", Resource: EventsResource, Count: 2},
		{Verb: "get", Resource: "pods", Count: 100}, // a read: not a write
		{Verb: "create", Resource: "pods", Count: 4},
		{Verb: "create", Resource: "pods/binding", Count: 4},
		{Verb: "delete", Resource: "pods", Count: 3},
		{Verb: "deletecollection", Resource: "pods", Count: 1},
		{Verb: "list", Resource: EventsResource, Count: 9},
	}}
}

// Writes sums the write verbs by resource, busiest first, and says which
// part is Events; the report shows them per pod with their share.
func TestWritesPerPod(t *testing.T) {
	r := writesRun()
	rows, total, events := r.Writes()
	if total != 40 || events != 16 {
		t.Fatalf("total %d events %d, want 40 and 16: %+v", total, events, rows)
	}
	want := []WriteRow{{Resource: EventsResource, Creates: 14, Patches: 2}, {Resource: "pods/status", Updates: 12},
		{Resource: "pods", Creates: 4, Deletes: 4}, {Resource: "pods/binding", Creates: 4}}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	md := Markdown(r)
	for _, s := range []string{
		"## Writes per pod",
		"| events (Events) | 14 | 0 | 2 | 0 | 16 | 4.00 | 40.0 % |",
		"| pods/status | 0 | 12 | 0 | 0 | 12 | 3.00 | 30.0 % |",
		"| Events, all kinds |  |  |  |  | 16 | 4.00 | 40.0 % |",
		"| all writes |  |  |  |  | 40 | 10.00 | 100.0 % |",
		"| all but Events |  |  |  |  | 24 | 6.00 | 60.0 % |",
		"Writes per pod: 10.00, of which Events 4.00 (40.0 %); 6.00 without Events.",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
	}
	var table bytes.Buffer
	if err := Table(&table, r); err != nil || !strings.Contains(table.String(), "writes per pod: 10.00, of which Events 4.00 (40.0 %)") {
		t.Errorf("table: %v\n%s", err, table.String())
	}
	if h := HTML(r); !strings.Contains(h, "<h2>Writes per pod</h2>") || !strings.Contains(h, "events (Events)") {
		t.Errorf("report.html lacks the writes table")
	}
	// No pods, no per-pod figures.
	r.Pods = 0
	if md := Markdown(r); strings.Contains(md, "Writes per pod") {
		t.Errorf("a run without pods has a writes-per-pod section")
	}
}

// run.json records whether the hollow nodes wrote Events. A run.json from
// before the field (testdata/run-v1.json: 50 hollow nodes, whose actor
// then defaulted to --events=false) reads as off; a recorded choice reads
// back as written; compare refuses to set runs with and without Events
// side by side, as it does any topology difference.
func TestHollowEventsInRunJSON(t *testing.T) {
	old, err := ReadRun(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e := old.Cluster.Topology.HollowEvents; e == nil || *e {
		t.Fatalf("a run from before hollowEvents: %v, want false", e)
	}
	if md := Markdown(old); !strings.Contains(md, "hollow-node Events: off") {
		t.Errorf("report.md of an old run:\n%.600s", md)
	}
	write := func(r *Run) *Run {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "run.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRun(path)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	cur := *old
	cur.Schema = Schema
	cur.Cluster.Topology.HollowEvents = ptr.To(true)
	b, _ := json.Marshal(&cur)
	if !strings.Contains(string(b), `"hollowEvents":true`) {
		t.Fatalf("run.json lacks hollowEvents: %.400s", b)
	}
	on := write(&cur)
	if e := on.Cluster.Topology.HollowEvents; e == nil || !*e || !strings.Contains(Markdown(on), "hollow-node Events: on") {
		t.Fatalf("read back: %v", e)
	}
	// Before the field, --events in the hollow args turned them on.
	flagged := *old
	flagged.Schema = Schema
	flagged.Cluster.Topology.HollowEvents = nil
	flagged.Cluster.Topology.HollowArgs = []string{"--events"}
	if e := write(&flagged).Cluster.Topology.HollowEvents; e == nil || !*e {
		t.Errorf("an old run with --events: %v, want true", e)
	}
	c := CompareSets(&Set{Runs: []*Run{old}}, &Set{Runs: []*Run{on}}, CompareOptions{})
	found := false
	for _, why := range c.Refused {
		found = found || strings.Contains(why, "topology hollowEvents")
	}
	if !found {
		t.Errorf("compare of runs with and without hollow-node Events: refused %v", c.Refused)
	}
}

// WriteTime splits the apiservers' time on writes into etcd's writes and
// the rest: reads on either side are left out, and the report says the
// mean per API write with etcd's share.
func TestWriteTimeSplitsEtcdFromTheAPIServer(t *testing.T) {
	r := &Run{Schema: Schema, ID: "t", Pods: 2,
		API: []APILatency{
			{Verb: "create", Resource: "pods", Count: 2, MeanMS: 5},
			{Verb: "create", Resource: "pods/binding", Count: 2, MeanMS: 4},
			{Verb: "patch", Resource: "pods/status", Count: 2, MeanMS: 6},
			{Verb: "get", Resource: "pods", Count: 50, MeanMS: 100}, // a read
		},
		EtcdRequests: []APILatency{
			{Verb: "create", Resource: "pods", Count: 2, MeanMS: 3},
			{Verb: "update", Resource: "pods", Count: 4, MeanMS: 3.5},
			{Verb: "get", Resource: "pods", Count: 50, MeanMS: 2}, // a read
		},
	}
	apiMS, etcdMS, n, ok := r.WriteTime()
	if !ok || apiMS != 30 || etcdMS != 20 || n != 6 {
		t.Fatalf("WriteTime = %v, %v, %d, %v; want 30, 20, 6, true", apiMS, etcdMS, n, ok)
	}
	want := "an API write took 5.00 ms on average over 6 writes, of which etcd's writes 3.33 ms (67 %)"
	if s := writeTimeSentence(r); !strings.HasPrefix(s, want) {
		t.Errorf("sentence %q, want it to start %q", s, want)
	}
	md := Markdown(r)
	for _, s := range []string{"## etcd requests from the apiservers", "| update | pods | 4 | 3.50 |", "An API write took 5.00 ms"} {
		if !strings.Contains(md, s) {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
	}
	// Without the apiservers' etcd figures there is nothing to split.
	r.EtcdRequests = nil
	if _, _, _, ok := r.WriteTime(); ok || writeTimeSentence(r) != "" || strings.Contains(Markdown(r), "etcd requests from") {
		t.Error("a run without etcd requests still splits its write time")
	}
}
