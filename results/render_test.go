package results

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/provider"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

// goldenRun is a small run that exercises every section of the reports:
// an invalid reason, documented and undocumented steps, a waterfall, API
// latency, actor usage, drops and a pod missing a step.
func goldenRun() *Run {
	doc := func(lo, hi float64) *[2]float64 { return &[2]float64{lo, hi} }
	return &Run{
		Schema: Schema, ID: "20261129-golden", Provider: "process", Runtime: "hollow", Profile: "quick",
		Valid: false, Invalid: []string{"1 of 3 pods miss a step this run's actors stamp"},
		StartedAt: "2026-11-29T21:00:00Z", DurationS: 73.4,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 2, HollowNodes: 50,
			Etcd: provider.EtcdTuning{HeartbeatInterval: metav1.Duration{Duration: 50 * time.Millisecond}, ElectionTimeout: metav1.Duration{Duration: 500 * time.Millisecond}}},
			NodeKind: "hollow (realistic)", Objects: 2, Replicas: 2, QPS: 20, Security: "TLS; x509 + token authn; RBAC + Node authz"},
		Steps: []Step{
			{Step: "①", Name: "inside: admission + etcd write", From: "rs.received", To: "rs.persisted", Summary: Summary{Count: 2, P50: 4.2, P90: 6.1, P99: 6.3, Max: 6.3}, DocumentedMS: doc(5, 30), Verdict: "faster"},
			{Step: "⑤", Name: "binding persisted", From: "pod.scheduled", To: "pod.bound", Summary: Summary{Count: 3, P50: 12.5, P90: 20, P99: 21, Max: 21}, Verdict: NA},
			{Step: "⑦-b", Name: "sandbox + CNI + volumes", From: "pod.observed.kubelet", To: "pod.sandbox.ready", Summary: Summary{Count: 3, P50: 640, P90: 900, P99: 12500, Max: 12500}, DocumentedMS: doc(500, 5000), Verdict: "within"},
		},
		EndToEnd:    Step{Step: "e2e", Name: "client sent → pod Ready observed", Summary: Summary{Count: 2, P50: 700, P90: 13000, P99: 13000, Max: 13000}, Verdict: NA, SamplesMS: []float64{700, 13000}},
		Throughput:  Throughput{PodsPerS: 0.15, PerSecond: []int{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		Unavailable: []string{"endpoints.updated"},
		Incomplete:  []MissingSteps{{Namespace: "kstep-load-0", Name: "rs-1-x", UID: "u3", Missing: []string{"pod.ready.observed"}}},
		Drops:       map[string]uint64{"scheduler-0": 0, "loadgen": 0},
		Pods:        3, Events: 40,
		Waterfalls: []Waterfall{
			{Label: "p50 pod", Namespace: "kstep-load-0", Name: "rs-0-a", EndToEnd: 700, Marks: []Mark{{"client.rs.sent", 0}, {"pod.bound", 40}, {"pod.ready.observed", 700}}},
			{Label: "p99 pod", Namespace: "kstep-load-0", Name: "rs-1-a", EndToEnd: 13000, Marks: []Mark{{"client.rs.sent", 0}, {"pod.bound", 55}, {"pod.ready.observed", 13000}}},
		},
		API: []APILatency{
			{Verb: "create", Resource: "pods", Count: 3, MeanMS: 3.1, P50MS: 2.5, P99MS: 7.9},
			{Verb: "update", Resource: "pods/status", Count: 6, Errors: 1, MeanMS: 1.5, P50MS: 1.2, P99MS: 3.9},
		},
		Actors:      []ActorUsage{{Actor: "apiserver-0", CPUSeconds: 12.34, PeakRSSMB: 210.5}, {Actor: "etcd-0", CPUSeconds: 8.5, PeakRSSMB: 80}},
		Disruptions: []Disruption{{AtS: 36.2, Kind: "leader", Detail: "kube-system/kstep-scheduler: scheduler-0 → scheduler-1"}, {AtS: 41.9, Kind: "node", Detail: "hollow-338 left Ready (Ready=Unknown NodeStatusUnknown)"}},
		Etcd: []EtcdMember{
			{Name: "etcd-0", Leader: true, ProposalsCommitted: 3712, Fsyncs: 3650, FsyncP50MS: 0.61, FsyncP99MS: 4.2, BackendCommitP99MS: 9.8},
			{Name: "etcd-1", LeaderChanges: 1, ProposalsCommitted: 3712, HeartbeatFailures: 2, SlowApplies: 1, Fsyncs: 3702, FsyncP50MS: 0.7, FsyncP99MS: 5.1, BackendCommitP99MS: 11},
		},
	}
}

// Every renderer against its golden file (go test ./results -rewrite
// accepts a deliberate change; review the diff).
func TestRenderGolden(t *testing.T) {
	r := goldenRun()
	var table bytes.Buffer
	if err := Table(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, got string }{
		{"table.golden.txt", table.String()},
		{"report.golden.md", Markdown(r)},
		{"report.golden.html", HTML(r)},
	} {
		path := filepath.Join("testdata", c.file)
		if *rewrite {
			if err := os.WriteFile(path, []byte(c.got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != c.got {
			t.Errorf("%s differs (go test ./results -rewrite to accept):\n%s", path, c.got)
		}
	}
}

// The report is self-contained: no script, no stylesheet or image fetched.
func TestHTMLIsSelfContained(t *testing.T) {
	h := HTML(goldenRun())
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(h, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	for _, want := range []string{"Waterfall", "Throughput over time", "End to end CDF", "API latency", "Actors", "rs-1-x"} {
		if !strings.Contains(h, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
