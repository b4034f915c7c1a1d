package results

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/provider"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

// goldenRun is a small run that exercises every section of the reports:
// invalid reasons and a negative sample, a disruption, documented and
// undocumented steps, steps split by node kind (real and hollow, ReplicaSet
// steps all) with simulated ⑦ rows, populations, chains, a waterfall, API
// latency, writes per pod with Events, actor usage, drops and a pod
// missing a step.
func goldenRun() *Run {
	doc := func(lo, hi float64) *[2]float64 { return &[2]float64{lo, hi} }
	return &Run{
		Schema: Schema, ID: "20261129-golden", Provider: "process", Runtime: "containerd+hollow", Profile: "quick", Version: "v0.1-12-g20970ab",
		Valid: false, Invalid: []string{"1 of 3 pods miss a step this run's actors stamp", "1 negative sample (⑥ kubelet notices)"},
		Disrupted: true,
		Negative: []NegativeSample{{Step: "⑥", Name: "kubelet notices", Namespace: "kstep-load-0", Pod: "rs-0-b", UID: "u2", MS: -0.42,
			FromActor: "scheduler-0", ToActor: "hollow-nodes-0"}},
		StartedAt: "2026-11-29T21:00:00Z", DurationS: 73.4,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 2, RealNodes: 1, HollowNodes: 50, LatencyProfile: "realistic", HollowEvents: ptr.To(true),
			Etcd: provider.EtcdTuning{HeartbeatInterval: metav1.Duration{Duration: 50 * time.Millisecond}, ElectionTimeout: metav1.Duration{Duration: 500 * time.Millisecond}}},
			NodeKind: "1 real (containerd) + 50 hollow (realistic)", Objects: 2, Replicas: 2, QPS: 20, Security: "TLS; x509 + token authn; RBAC + Node authz"},
		Steps: []Step{
			{Step: "①", Name: "inside: admission + etcd write", Nodes: NodesAll, From: "rs.received", To: "rs.persisted",
				Chain:   "the apiserver stamps both in the create's handler: received, then the etcd write it waits for",
				Summary: Summary{Count: 2, P50: 4.2, P90: 6.1, P99: 6.3, Max: 6.3}, DocumentedMS: doc(5, 30), Verdict: "faster"},
			{Step: "⑤", Name: "binding persisted", Nodes: NodesReal, From: "pod.scheduled", To: "pod.bound",
				Chain:   "the scheduler stamps scheduled before it sends the binding; the apiserver stamps bound when etcd has it",
				Summary: Summary{Count: 1, P50: 14, P90: 14, P99: 14, Max: 14}, Verdict: NA},
			{Step: "⑤", Name: "binding persisted", Nodes: NodesHollow, From: "pod.scheduled", To: "pod.bound",
				Chain:   "the scheduler stamps scheduled before it sends the binding; the apiserver stamps bound when etcd has it",
				Summary: Summary{Count: 2, P50: 12.5, P90: 20, P99: 21, Max: 21}, Verdict: NA},
			{Step: "⑦-b", Name: "sandbox + CNI + volumes", Nodes: NodesReal, From: "pod.observed.kubelet", To: "pod.sandbox.ready",
				Chain:   "the kubelet stamps both: the pod's watch event, then its sandbox's start",
				Summary: Summary{Count: 1, P50: 640, P90: 640, P99: 640, Max: 640}, DocumentedMS: doc(500, 5000), Verdict: "within"},
			{Step: "⑦-b", Name: "sandbox + CNI + volumes", Nodes: NodesHollow, From: "pod.observed.kubelet", To: "pod.sandbox.ready", Simulated: true,
				Chain:   "the kubelet stamps both: the pod's watch event, then its sandbox's start",
				Summary: Summary{Count: 2, P50: 610, P90: 900, P99: 12500, Max: 12500}, DocumentedMS: doc(500, 5000), Verdict: "simulated"},
		},
		EndToEnd: Step{Step: "e2e", Name: "client sent → pod Ready observed", Nodes: NodesAll, From: "client.rs.sent", To: "pod.ready.observed",
			Chain:   "the load generator stamps its send, then the watch event that shows the pod Ready",
			Summary: Summary{Count: 2, P50: 700, P90: 13000, P99: 13000, Max: 13000}, Verdict: NA, SamplesMS: []float64{700, 13000}},
		Populations: []Population{
			{Nodes: NodesReal, Runtime: "containerd", Pods: 1,
				EndToEnd:      Step{Step: "e2e", Nodes: NodesReal, Summary: Summary{Count: 1, P50: 13000, P90: 13000, P99: 13000, Max: 13000}, SamplesMS: []float64{13000}},
				Step7SharePct: Summary{Count: 1, P50: 88, P90: 88, P99: 88, Max: 88}},
			{Nodes: NodesHollow, Runtime: "simulated (realistic)", Pods: 2,
				EndToEnd:      Step{Step: "e2e", Nodes: NodesHollow, Summary: Summary{Count: 1, P50: 700, P90: 700, P99: 700, Max: 700}, SamplesMS: []float64{700}},
				Step7SharePct: Summary{Count: 1, P50: 91, P90: 91, P99: 91, Max: 91}},
		},
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
			{Verb: "create", Resource: "events", Count: 12, MeanMS: 2.2, P50MS: 1.9, P99MS: 6.1},
			{Verb: "patch", Resource: "events", Count: 1, MeanMS: 2.4, P50MS: 2.4, P99MS: 2.4},
		},
		EtcdRequests: []APILatency{
			{Verb: "create", Resource: "events", Count: 12, MeanMS: 1.6, P50MS: 1.5, P99MS: 3.9},
			{Verb: "update", Resource: "pods", Count: 6, MeanMS: 1.1, P50MS: 1, P99MS: 3.1},
			{Verb: "create", Resource: "pods", Count: 3, MeanMS: 2.4, P50MS: 2.2, P99MS: 3.8},
			{Verb: "get", Resource: "pods", Count: 1, MeanMS: 0.9, P50MS: 0.9, P99MS: 0.9},
		},
		Actors:      []ActorUsage{{Actor: "apiserver-0", CPUSeconds: 12.34, LoadCPUSeconds: 0.06, PeakRSSMB: 210.5}, {Actor: "etcd-0", CPUSeconds: 8.5, LoadCPUSeconds: 0.03, PeakRSSMB: 80}},
		LoadS:       30,
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
	for _, want := range []string{"Waterfall", "Throughput over time", "End to end CDF", "API latency", "Actors", "rs-1-x",
		"Pods by node kind", "How each step is measured", "rs.received → rs.persisted", "the etcd write it waits for", "The run was disrupted"} {
		if !strings.Contains(h, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// mdRow is the Markdown table row starting with the given cells, or "".
func mdRow(md string, cells ...string) string {
	prefix := "| " + strings.Join(cells, " | ") + " |"
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// A run with real and hollow nodes shows both populations: their pod-level
// steps, their end to end and share of ⑦, in every renderer.
func TestRenderPopulations(t *testing.T) {
	r := goldenRun()
	md := Markdown(r)
	for _, cells := range [][]string{
		{"①", "inside: admission + etcd write", "all"},
		{"⑤", "binding persisted", "real"},
		{"⑤", "binding persisted", "hollow"},
		{"⑦-b", "sandbox + CNI + volumes", "real"},
		{"⑦-b", "sandbox + CNI + volumes", "hollow"},
		{"e2e", "client sent → pod Ready observed", "all"},
		{"real", "containerd", "1", "13.0s", "13.0s", "88 %", "88 %", "80–95 %"},
		{"hollow", "simulated (realistic)", "2", "700", "700", "91 %", "91 %", "80–95 %"},
	} {
		if mdRow(md, cells...) == "" {
			t.Errorf("report.md lacks the row %q:\n%s", cells, md)
		}
	}
	// The ReplicaSet-level group comes first, then each node kind's
	// (run.json has ⑤ real, ⑤ hollow, ⑦-b real, ...).
	if i, j, k := strings.Index(md, "| ① |"), strings.Index(md, "| ⑦-b | sandbox + CNI + volumes | real"), strings.Index(md, "| ⑤ | binding persisted | hollow"); !(i < j && j < k) {
		t.Errorf("step rows not grouped all, real, hollow: %d %d %d", i, j, k)
	}
	if !strings.Contains(md, "within the documented 80–95 %") || !strings.Contains(md, "not comparable with the documented 80–95 %") {
		t.Errorf("report.md lacks the share sentences (real within, hollow not comparable):\n%s", md)
	}
	h := HTML(r)
	for _, want := range []string{"<td>real</td><td>containerd</td><td>1</td>", "<td>hollow</td><td>simulated (realistic)</td><td>2</td>",
		"<td>binding persisted</td><td>real</td>", "<td>binding persisted</td><td>hollow</td>", "not comparable with the documented 80–95 %"} {
		if !strings.Contains(h, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var table bytes.Buffer
	if err := Table(&table, r); err != nil {
		t.Fatal(err)
	}
	var real, hollow bool
	for _, line := range strings.Split(table.String(), "\n") {
		real = real || strings.Contains(line, "binding persisted") && strings.Contains(line, " real ")
		hollow = hollow || strings.Contains(line, "binding persisted") && strings.Contains(line, " hollow ")
	}
	if !real || !hollow {
		t.Errorf("terminal table lacks a population (real %v, hollow %v):\n%s", real, hollow, table.String())
	}
}

// A simulated step is labelled with the latency profile and never gets a
// faster/within/slower verdict, even were the run.json to carry one.
func TestSimulatedRowsHaveNoVerdict(t *testing.T) {
	for _, c := range []struct {
		name, profile, runtime, label string
	}{
		{"topology", "realistic", "simulated (realistic)", "simulated (realistic)"},
		// Without the topology's profile, the population's runtime names it.
		{"population", "", "simulated (flaky)", "simulated (flaky)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := goldenRun()
			r.Cluster.Topology.LatencyProfile = c.profile
			r.Populations[1].Runtime = c.runtime
			for i := range r.Steps {
				if r.Steps[i].Simulated {
					r.Steps[i].Verdict = Within
				}
			}
			row := mdRow(Markdown(r), "⑦-b", "sandbox + CNI + volumes", "hollow")
			if !strings.HasSuffix(row, "| "+c.label+" |") {
				t.Errorf("simulated row in report.md: %q, want it to end in %q", row, c.label)
			}
			if real := mdRow(Markdown(r), "⑦-b", "sandbox + CNI + volumes", "real"); !strings.HasSuffix(real, "| within |") {
				t.Errorf("real row lost its verdict: %q", real)
			}
			h := HTML(r)
			if !strings.Contains(h, "<td>sandbox + CNI + volumes</td><td>hollow</td><td>2</td><td>610</td><td>900</td><td>12.5s</td><td>12.5s</td><td>500–5000</td><td>"+c.label+"</td></tr>") {
				t.Errorf("report.html's simulated row lacks %q in place of its verdict", c.label)
			}
			var table bytes.Buffer
			if err := Table(&table, r); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(table.String(), "\n") {
				if strings.Contains(line, "sandbox") && strings.Contains(line, " hollow ") {
					if !strings.Contains(line, c.label) || strings.Contains(line, Within) {
						t.Errorf("terminal simulated row: %q", line)
					}
				}
			}
		})
	}
}

// svgAfter is the first <svg>…</svg> after heading in page.
func svgAfter(t *testing.T, page, heading string) string {
	t.Helper()
	i := strings.Index(page, heading)
	if i < 0 {
		t.Fatalf("no %q in the page", heading)
	}
	rest := page[i:]
	j, k := strings.Index(rest, "<svg"), strings.Index(rest, "</svg>")
	if j < 0 || k < j {
		t.Fatalf("no svg after %q", heading)
	}
	return rest[j : k+len("</svg>")]
}

// The end-to-end CDF has a log time axis labelled by decades, one curve per
// node kind, and draws samples ≤ 0 at the axis minimum.
func TestCDFLogAxis(t *testing.T) {
	r := goldenRun()
	r.Populations[0].EndToEnd.SamplesMS = []float64{1800, 2500, 13000}
	r.Populations[1].EndToEnd.SamplesMS = []float64{0, 1.5, 30, 45, 700}
	svg := svgAfter(t, HTML(r), "End to end CDF")
	for _, label := range []string{">1 ms<", ">10 ms<", ">100 ms<", ">1 s<", ">10 s<", ">100 s<"} {
		if !strings.Contains(svg, label) {
			t.Errorf("CDF lacks the decade label %s:\n%s", label, svg)
		}
	}
	if strings.Contains(svg, ">0.1 ms<") || strings.Contains(svg, ">1000 s<") {
		t.Errorf("CDF axis wider than its samples' decades:\n%s", svg)
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d curves, want one per population (2)", n)
	}
	if !strings.Contains(svg, "real (containerd), 3 pods") || !strings.Contains(svg, "hollow (simulated (realistic)), 5 pods") {
		t.Errorf("CDF legend lacks a population:\n%s", svg)
	}

	// One population (or none): the whole run's curve.
	r.Populations = r.Populations[:1]
	if n := strings.Count(svgAfter(t, HTML(r), "End to end CDF"), "<polyline"); n != 1 {
		t.Errorf("%d curves for one population, want the run's one", n)
	}

	a := newLogAxis([]float64{0, -3, 1.5, 30, 13000}, 40, 600, 7)
	if a.lo != 0 || a.hi != 5 {
		t.Fatalf("axis 10^%d–10^%d ms, want 10^0–10^5", a.lo, a.hi)
	}
	for _, v := range []float64{0, -3, 0.2, 1} {
		if x := a.x(v); x != 40 {
			t.Errorf("x(%g) = %g, want the axis minimum 40", v, x)
		}
	}
	if x := a.x(100); math.Abs(x-(40+600*2.0/5)) > 1e-9 {
		t.Errorf("x(100 ms) = %g, want two decades of five in", x)
	}
	if x := a.x(1e5); math.Abs(x-640) > 1e-9 {
		t.Errorf("x(100 s) = %g, want the axis maximum 640", x)
	}
	for e, want := range map[int]string{-2: "0.01 ms", 0: "1 ms", 2: "100 ms", 3: "1 s", 4: "10 s"} {
		if got := decadeLabel(e); got != want {
			t.Errorf("decadeLabel(%d) = %q, want %q", e, got, want)
		}
	}
}

// Every rendered output speaks of documented time scales, never of the seed
// they were first written in.
func TestRenderNoSeedWording(t *testing.T) {
	old, err := ReadRun(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Run{"golden": goldenRun(), "v1": old} {
		dir := t.TempDir()
		if err := WriteRun(dir, r); err != nil {
			t.Fatal(err)
		}
		var table bytes.Buffer
		if err := Table(&table, r); err != nil {
			t.Fatal(err)
		}
		outs := map[string]string{"table": table.String()}
		for _, f := range []string{"report.md", "report.html", "steps.csv"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outs[f] = string(b)
		}
		for f, out := range outs {
			if strings.Contains(strings.ToLower(out), "seed") {
				t.Errorf("%s run: %s says \"seed\"", name, f)
			}
		}
		if !strings.Contains(outs["report.md"], "documented time scales") {
			t.Errorf("%s run: report.md does not say what verdicts compare with", name)
		}
	}
}

// steps.csv keeps its columns and adds nodes (after name) and simulated.
func TestStepsCSV(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRun(dir, goldenRun()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "steps.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "step,name,nodes,from,to,count,p50_ms,p90_ms,p99_ms,max_ms,documented_lo_ms,documented_hi_ms,verdict,simulated"
	if got := strings.Join(recs[0], ","); got != want {
		t.Fatalf("steps.csv header %s, want %s", got, want)
	}
	found := map[string]bool{}
	for _, rec := range recs[1:] {
		found[strings.Join([]string{rec[0], rec[2], rec[12], rec[13]}, ",")] = true
	}
	for _, k := range []string{"①,all,faster,false", "⑦-b,real,within,false", "⑦-b,hollow,simulated,true", "e2e,all,n/a,false"} {
		if !found[k] {
			t.Errorf("steps.csv lacks step,nodes,verdict,simulated %s: %v", k, recs)
		}
	}
}

// A disrupted run says so before its steps, listing the disruptions; its
// negative samples are listed, pod, step, ms and actors, with why it is
// invalid. A healthy run says neither.
func TestRenderDisruptedAndNegative(t *testing.T) {
	r := goldenRun()
	md := Markdown(r)
	d, inv, steps := strings.Index(md, "## The run was disrupted"), strings.Index(md, "## Why the run is invalid"), strings.Index(md, "## Steps")
	if d < 0 || inv < 0 || !(inv < d && d < steps) {
		t.Fatalf("report.md: invalid at %d, disrupted at %d, steps at %d", inv, d, steps)
	}
	for _, cells := range [][]string{
		{"+36.2 s", "leader", "kube-system/kstep-scheduler: scheduler-0 → scheduler-1"},
		{"+41.9 s", "node"},
		{"kstep-load-0/rs-0-b", "⑥ kubelet notices", "−0.42", "scheduler-0 → hollow-nodes-0"},
	} {
		if row := mdRow(md[:steps], cells...); row == "" {
			t.Errorf("report.md lacks %q before its steps", cells)
		}
	}
	h := HTML(r)
	if i, j := strings.Index(h, "The run was disrupted"), strings.Index(h, "<h2>Steps</h2>"); i < 0 || i > j {
		t.Errorf("report.html: disrupted at %d, steps at %d", i, j)
	}
	if !strings.Contains(h, "<td>kstep-load-0/rs-0-b</td><td>⑥ kubelet notices</td><td>−0.42</td><td>scheduler-0 → hollow-nodes-0</td>") {
		t.Error("report.html lacks the negative sample")
	}
	var table bytes.Buffer
	if err := Table(&table, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(table.String(), "DISRUPTED: 2 disruption(s)") || !strings.Contains(table.String(), "rs-0-b") {
		t.Errorf("terminal table of a disrupted run with a negative sample:\n%s", table.String())
	}

	r.Disrupted, r.Disruptions, r.Negative, r.Invalid = false, nil, nil, nil
	var healthy bytes.Buffer
	if err := Table(&healthy, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report.md": Markdown(r), "report.html": HTML(r), "table": healthy.String()} {
		for _, bad := range []string{"disrupted", "DISRUPTED", "negative sample"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s of a healthy run says %q", name, bad)
			}
		}
	}
}

// A capacity search's run shows its curve and its answer in every
// renderer, and a set of two says how far apart their answers are.
func TestRenderFindMax(t *testing.T) {
	r := exportRun()
	var term bytes.Buffer
	if err := Table(&term, r); err != nil {
		t.Fatal(err)
	}
	want := "find-max: 14.5 pods/s sustained (the capacity; offered 15.0 pods/s, step 2)"
	for name, out := range map[string]string{"table": term.String(), "md": Markdown(r), "html": HTML(r)} {
		if !strings.Contains(out, want) || !strings.Contains(out, "broke: control-plane p99 1500.0 ms") {
			t.Errorf("%s lacks the answer or the broken step:\n%s", name, out)
		}
	}
	if !strings.Contains(HTML(r), `aria-label="find-max curve"`) {
		t.Error("report.html has no curve")
	}
	other := exportRun()
	fm := *other.FindMax
	fm.PodsPerS = 16
	other.FindMax = &fm
	if got := FindMaxSpread([]*Run{r, other}); !strings.Contains(got, "14.5 to 16.0 pods/s, 10.3 % apart") {
		t.Errorf("spread: %q", got)
	}
	if FindMaxSpread([]*Run{r}) != "" {
		t.Error("one run has no spread")
	}
}
