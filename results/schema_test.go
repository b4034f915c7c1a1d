package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run.json of the previous schema (v1, written by `kstep bench --profile
// quick` before the cluster became a Topology) still reads, renders and
// compares: its cluster's node count is split into real and hollow nodes
// by its node kind, its etcd timing kept.
func TestReadRunV1(t *testing.T) {
	old, err := ReadRun(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	top := old.Cluster.Topology
	if top.EtcdMembers != 3 || top.APIServers != 2 || top.RealNodes != 2 || top.HollowNodes != 50 ||
		top.Etcd.HeartbeatInterval.Duration != 50*time.Millisecond || top.Etcd.ElectionTimeout.Duration != 500*time.Millisecond {
		t.Fatalf("v1 cluster read as %+v", top)
	}
	if old.Cluster.Security == "" || len(old.Steps) == 0 || old.EndToEnd.Count == 0 || !old.Valid {
		t.Fatalf("v1 run lost fields: security %q, %d steps, e2e n=%d", old.Cluster.Security, len(old.Steps), old.EndToEnd.Count)
	}
	if md := Markdown(old); !strings.Contains(md, "52 2 real (containerd) + 50 hollow (zero) nodes") {
		t.Errorf("report.md of a v1 run:\n%s", md)
	}
	var table bytes.Buffer
	if err := Table(&table, old); err != nil || !strings.Contains(table.String(), "e2e") {
		t.Fatalf("table of a v1 run: %v\n%s", err, table.String())
	}
	if html := HTML(old); !strings.Contains(html, "kstep run oldrun") {
		t.Errorf("report.html of a v1 run lacks its title")
	}

	// Written again, it is a v2 run; compared with its v1 self, nothing
	// moved.
	old.Schema = Schema
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cur, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Cluster.Topology.String() != top.String() {
		t.Errorf("v2 round trip: %s, want %s", cur.Cluster.Topology, top)
	}
	again, _ := ReadRun(filepath.Join("testdata", "run-v1.json"))
	// One run a side cannot conclude: forced, the steps still line up.
	c := CompareSets(&Set{Runs: []*Run{again}}, &Set{Runs: []*Run{cur}}, CompareOptions{Force: true})
	if len(c.Deltas) == 0 || len(c.OnlyBase)+len(c.OnlyNew) != 0 {
		t.Fatalf("compare of a v1 and a v3 run: %d common steps, only base %v, only new %v", len(c.Deltas), c.OnlyBase, c.OnlyNew)
	}
	for _, d := range c.Deltas {
		if d.Regressed || d.P50.ShiftPct != 0 || d.P99.ShiftPct != 0 {
			t.Errorf("a run compared with itself moved: %+v", d)
		}
	}
}

// A schema this kstep does not know is refused by name.
func TestReadRunUnknownSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(path, []byte(`{"schema":"kstep.dev/run/v9"}`), 0o644)
	if _, err := ReadRun(path); err == nil || !strings.Contains(err.Error(), "kstep.dev/run/v9") {
		t.Fatalf("ReadRun: %v", err)
	}
}

// endpoints_stamp is optional: a run without it (older) stamped the
// Endpoints write, reads, renders as before and compares with runs that
// record "endpoints"; one that records endpointslices says so.
func TestRunEndpointsStamp(t *testing.T) {
	old, err := ReadRun(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if old.EndpointsStamp != "" || old.EndpointsObject() != "Endpoints" || strings.Contains(Markdown(old), "endpoints.updated: the") {
		t.Fatalf("an old run: stamp %q object %s", old.EndpointsStamp, old.EndpointsObject())
	}
	cur := *old
	cur.Schema, cur.EndpointsStamp = Schema, "endpointslices"
	b, err := json.Marshal(&cur)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"endpoints_stamp":"endpointslices"`) {
		t.Fatalf("run.json lacks endpoints_stamp: %.300s", b)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRun(path)
	if err != nil || back.EndpointsObject() != "EndpointSlice" {
		t.Fatalf("read back: %v, %+v", err, back)
	}
	if md := Markdown(back); !strings.Contains(md, "step ⑧ endpoints.updated: the EndpointSlice write listing the pod") {
		t.Errorf("report.md:\n%s", md)
	}
	if html := HTML(back); !strings.Contains(html, "the EndpointSlice write listing the pod") {
		t.Errorf("report.html lacks the stamp")
	}
	base, next := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	for _, r := range next.Runs {
		r.EndpointsStamp = "endpoints"
	}
	if c := CompareSets(base, next, CompareOptions{}); len(c.Refused) != 0 {
		t.Errorf("old runs against runs recording endpoints: refused %q", c.Refused)
	}
}
