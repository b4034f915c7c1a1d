package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// exportRun is a run with every figure metrics.prom carries: steps of all
// pods and of each node kind (⑥ twice with the same number and name, once
// per kind), a step without a sample, a simulated step, both populations,
// API rows, actors, etcd members, drops and a disruption.
func exportRun() *Run {
	step := func(num, name, nodes string, doc *[2]float64, samples ...float64) Step {
		s := Step{Step: num, Name: name, Nodes: nodes, Summary: Summarize(samples), SamplesMS: samples, DocumentedMS: doc}
		s.Verdict = Verdict(s.P50, s.Count, doc)
		return s
	}
	doc := func(lo, hi float64) *[2]float64 { return &[2]float64{lo, hi} }
	sim := step("⑦-c", "container start + readiness", NodesHollow, doc(100, 2000), 12, 14.5, 13, 15, 12.2, 16)
	sim.Simulated, sim.Verdict = true, "simulated"
	e2eReal := step("e2e", "client sent → pod Ready observed", NodesReal, nil, 1450, 1720)
	e2eHollow := step("e2e", "client sent → pod Ready observed", NodesHollow, nil, 310, 295.5, 402, 350, 333, 381)
	return &Run{
		Schema: Schema, ID: "20261203-101500-quick", Provider: "process", Runtime: "hollow", Profile: "quick",
		Version: "v0.4.0-17-g1a2b3c4", Valid: true, Disrupted: true,
		StartedAt: "2026-12-03T10:15:00Z", DurationS: 48.25,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 2, RealNodes: 2, HollowNodes: 50},
			NodeKind: "2 real (containerd) + 50 hollow (realistic)", Objects: 8, Replicas: 1, QPS: 20},
		Steps: []Step{
			step("①", "client → apiserver: sent → 201", NodesAll, doc(10, 50), 8.1, 9.4, 12.25, 30.5, 7.75, 11, 10.5, 9.9),
			step("④", "scheduler notices", NodesAll, doc(1, 20), 2.5, 3.1, 2.9, 4.4, 3.3, 2.75, 3, 5.1),
			step("⑥", "kubelet notices", NodesReal, doc(1, 100), 4.2, 6.6),
			step("⑥", "kubelet notices", NodesHollow, doc(1, 100), 2.1, 2.4, 31.2, 2.2, 2.8, 3.9),
			step("⑦-c", "container start + readiness", NodesReal, doc(100, 2000), 1210, 1502.5),
			sim,
			step("⑧", "endpoints list the pod", NodesAll, nil),
		},
		EndToEnd: step("e2e", "client sent → pod Ready observed", NodesAll, nil, 1450, 1720, 310, 295.5, 402, 350, 333, 381),
		Populations: []Population{
			{Nodes: NodesReal, Runtime: "containerd", Pods: 2, EndToEnd: e2eReal, Step7SharePct: Summary{Count: 2, P50: 83.5, P90: 87.3, P99: 87.3, Max: 87.3}},
			{Nodes: NodesHollow, Runtime: "simulated (realistic)", Pods: 6, EndToEnd: e2eHollow, Step7SharePct: Summary{Count: 6, P50: 4.1, P90: 5.2, P99: 5.5, Max: 5.5}},
		},
		Throughput:   Throughput{PodsPerS: 6.75, PerSecond: []int{0, 3, 5}},
		Drops:        map[string]uint64{"loadgen": 0, "scheduler-0": 3, "hollow-nodes": 0},
		DropsUnknown: []string{"etcd-0"},
		Pods:         8, Events: 212,
		API: []APILatency{
			{Verb: "create", Resource: "pods", Count: 8, MeanMS: 6.25, P50MS: 5.5, P99MS: 19.8},
			{Verb: "patch", Resource: "pods/status", Count: 16, Errors: 2, MeanMS: 3.5, P50MS: 2.75, P99MS: 11.2},
			{Verb: "create", Resource: "apps/replicasets", Count: 8, MeanMS: 7.125, P50MS: 6.2, P99MS: 25.1},
		},
		Actors: []ActorUsage{
			{Actor: "apiserver-0", CPUSeconds: 4.75, LoadCPUSeconds: 2.5, PeakRSSMB: 142.5},
			{Actor: "etcd-0", CPUSeconds: 1.5, LoadCPUSeconds: 1.5, PeakRSSMB: 61.25},
		},
		LoadS: 10,
		FindMax: &FindMax{SLO: "control-plane p99 ≤ 1s and no disruption", Factor: 1.5, StepDurationS: 30, StepPods: 500, Precision: 0.1,
			PodsPerS: 14.5, OfferedPodsPerS: 15, Step: 2, Bracketed: true, Reason: "bisected",
			Steps: []FindMaxStep{
				{Step: 1, Phase: "raise", OfferedPodsPerS: 10, AchievedPodsPerS: 9.8, ControlPlaneP99MS: 40, P99MS: 40, Pods: 300, Ready: 300, Held: true},
				{Step: 2, Phase: "raise", OfferedPodsPerS: 15, AchievedPodsPerS: 14.5, ControlPlaneP99MS: 90, P99MS: 90, Pods: 450, Ready: 450, Held: true},
				{Step: 3, Phase: "raise", OfferedPodsPerS: 22.5, AchievedPodsPerS: 16, ControlPlaneP99MS: 1500, P99MS: 1500, Pods: 500, Ready: 500, Why: "control-plane p99 1500.0 ms > 1000 ms"},
			}},
		Etcd: []EtcdMember{
			{Name: "etcd-0", Leader: true, ProposalsCommitted: 412, Fsyncs: 398, FsyncP50MS: 0.75, FsyncP99MS: 6.5, BackendCommitP99MS: 12.5},
			{Name: "etcd-1", LeaderChanges: 1, ProposalsCommitted: 412, HeartbeatFailures: 2, Fsyncs: 401, FsyncP50MS: 0.8, FsyncP99MS: 7.25, BackendCommitP99MS: 14},
			{Name: "etcd-2", ProposalsCommitted: 412, ProposalsFailed: 1, SlowApplies: 3, Fsyncs: 405, FsyncP50MS: 0.7, FsyncP99MS: 5.5, BackendCommitP99MS: 11.75},
		},
		Disruptions: []Disruption{{AtS: 12.5, Kind: "leader", Detail: "kube-system/kstep-scheduler: scheduler-0 → scheduler-1"}},
	}
}

// tool finds a program the test drives for real. Without it the test skips
// and says what to install, unless KSTEP_REQUIRE_TOOLS=1 (CI): then it
// fails, so a machine without the tool cannot pass silently.
func tool(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not on PATH: apt-get install -y %s", names[0], pkg)
	if os.Getenv("KSTEP_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg + " (KSTEP_REQUIRE_TOOLS=1)")
	}
	t.Skip(msg)
	return ""
}

// promtool runs `promtool check metrics` on an exposition: its parser and
// its lint (names, units, suffixes, HELP).
func promtool(t *testing.T, bin string, exposition []byte) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// metrics.prom of a run, of the golden run and of a v1 run.json passes
// promtool with no lint problem at all.
func TestMetricsPassPromtool(t *testing.T) {
	bin := tool(t, "prometheus", "promtool")

	// promtool does lint (it is not a parser that accepts anything): a
	// counter without _total and a family without HELP are problems.
	bad := "# TYPE kstep_bad counter\nkstep_bad 1\n"
	if out, err := promtool(t, bin, []byte(bad)); err == nil || !strings.Contains(out, "_total") {
		t.Fatalf("promtool accepted a lint problem (err %v):\n%s", err, out)
	}

	v1, err := ReadRun(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Run{"export": exportRun(), "golden": goldenRun(), "v1": v1} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteRun(dir, r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "metrics.prom"))
			if err != nil {
				t.Fatal(err)
			}
			if out, err := promtool(t, bin, b); err != nil || out != "" {
				t.Fatalf("promtool check metrics: %v\n%s\nmetrics.prom:\n%s", err, out, b)
			}
		})
	}
}

// parse reads an exposition in the text format.
func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// one is the one series of family name whose labels include want.
func one(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
	var found []*dto.Metric
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if have[k] != v {
				match = false
			}
		}
		if match {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, want, len(found))
	}
	return found[0]
}

func quantile(t *testing.T, m *dto.Metric, q float64) float64 {
	t.Helper()
	for _, v := range m.GetSummary().GetQuantile() {
		if v.GetQuantile() == q {
			return v.GetValue()
		}
	}
	t.Fatalf("no quantile %v in %v", q, m)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func sumOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// metrics.prom read back holds the run's figures in base units, by step,
// transition and node kind, and every series names the run's profile and
// provider.
func TestMetricsValues(t *testing.T) {
	r := exportRun()
	dir := t.TempDir()
	if err := WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "metrics.prom"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mfs := parse(t, f)

	for name, mf := range mfs {
		if mf.GetHelp() == "" {
			t.Errorf("%s has no HELP", name)
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["profile"] != "quick" || got["provider"] != "process" {
				t.Errorf("%s%v lacks the run's profile and provider", name, got)
			}
		}
	}

	// The load's CPU by actor, and the cluster's per pod: 4 s over 8 pods.
	if got := one(t, mfs, "kstep_actor_load_cpu_seconds", map[string]string{"actor": "apiserver-0"}).GetGauge().GetValue(); got != 2.5 {
		t.Errorf("apiserver-0's load CPU %v s, want 2.5", got)
	}
	if got := one(t, mfs, "kstep_cluster_cpu_per_pod_seconds", nil).GetGauge().GetValue(); got != 0.5 {
		t.Errorf("CPU per pod %v core-s, want 0.5", got)
	}

	// The capacity search: its answer and its curve, a series per step.
	if got := one(t, mfs, "kstep_findmax_pods_per_second", nil).GetGauge().GetValue(); got != 14.5 {
		t.Errorf("find-max answer %v pods/s, want 14.5", got)
	}
	if got := one(t, mfs, "kstep_findmax_step_p99_seconds", map[string]string{"step": "3"}).GetGauge().GetValue(); got != 1.5 {
		t.Errorf("step 3's p99 %v s, want 1.5", got)
	}
	if got := one(t, mfs, "kstep_findmax_step_held", map[string]string{"step": "3"}).GetGauge().GetValue(); got != 0 {
		t.Errorf("step 3 held %v, want 0", got)
	}

	// ⑥ twice, one series per node kind.
	lat := "kstep_step_latency_seconds"
	if mfs[lat].GetType() != dto.MetricType_SUMMARY {
		t.Fatalf("%s is a %v", lat, mfs[lat].GetType())
	}
	if n := len(mfs[lat].GetMetric()); n != len(r.Steps) {
		t.Errorf("%s: %d series, want one per step (%d)", lat, n, len(r.Steps))
	}
	for _, s := range r.Steps[2:4] {
		m := one(t, mfs, lat, map[string]string{"step": "⑥", "transition": "kubelet notices", "nodes": s.Nodes})
		for q, want := range map[float64]float64{0.5: s.P50, 0.9: s.P90, 0.99: s.P99, 1: s.Max} {
			if got := quantile(t, m, q); got != want/1000 {
				t.Errorf("⑥ %s quantile %v = %v s, want %v", s.Nodes, q, got, want/1000)
			}
		}
		if got := m.GetSummary().GetSampleCount(); got != uint64(len(s.SamplesMS)) {
			t.Errorf("⑥ %s count %d, want %d", s.Nodes, got, len(s.SamplesMS))
		}
		if got, want := m.GetSummary().GetSampleSum(), sumOf(s.SamplesMS)/1000; !near(got, want) {
			t.Errorf("⑥ %s sum %v, want %v", s.Nodes, got, want)
		}
	}
	// The hollow nodes' slow outlier is theirs alone.
	hollow := quantile(t, one(t, mfs, lat, map[string]string{"step": "⑥", "nodes": NodesHollow}), 0.99)
	real := quantile(t, one(t, mfs, lat, map[string]string{"step": "⑥", "nodes": NodesReal}), 0.99)
	if hollow < 0.029 || real > 0.0067 {
		t.Errorf("⑥ p99: hollow %v s, real %v s", hollow, real)
	}
	// No sample, no quantile.
	empty := one(t, mfs, lat, map[string]string{"step": "⑧"})
	if empty.GetSummary().GetSampleCount() != 0 || !math.IsNaN(quantile(t, empty, 0.5)) {
		t.Errorf("⑧ without samples: %v", empty)
	}

	doc := one(t, mfs, "kstep_step_documented_latency_seconds", map[string]string{"step": "①", "bound": "upper"})
	if doc.GetGauge().GetValue() != 0.05 {
		t.Errorf("① documented upper bound %v s, want 0.05", doc.GetGauge().GetValue())
	}
	verdict := func(step, nodes, v string) float64 {
		return one(t, mfs, "kstep_step_verdict", map[string]string{"step": step, "nodes": nodes, "verdict": v}).GetGauge().GetValue()
	}
	if verdict("①", NodesAll, Within) != 1 || verdict("①", NodesAll, Slower) != 0 || verdict("⑦-c", NodesHollow, "simulated") != 1 || verdict("⑦-c", NodesReal, Within) != 1 {
		t.Error("step verdicts are not the run's")
	}
	if one(t, mfs, "kstep_step_simulated", map[string]string{"step": "⑦-c", "nodes": NodesHollow}).GetGauge().GetValue() != 1 ||
		one(t, mfs, "kstep_step_simulated", map[string]string{"step": "⑦-c", "nodes": NodesReal}).GetGauge().GetValue() != 0 {
		t.Error("kstep_step_simulated is not the steps' Simulated")
	}

	// End to end: all pods and each population.
	for _, e := range []Step{r.EndToEnd, r.Populations[0].EndToEnd, r.Populations[1].EndToEnd} {
		m := one(t, mfs, "kstep_end_to_end_latency_seconds", map[string]string{"nodes": e.Nodes})
		if got := quantile(t, m, 0.99); got != e.P99/1000 || m.GetSummary().GetSampleCount() != uint64(e.Count) {
			t.Errorf("e2e %s: p99 %v s, count %d; want %v s, %d", e.Nodes, got, m.GetSummary().GetSampleCount(), e.P99/1000, e.Count)
		}
	}
	share := one(t, mfs, "kstep_population_step7_share_ratio", map[string]string{"nodes": NodesReal})
	if got := quantile(t, share, 0.5); got != 0.835 || !math.IsNaN(share.GetSummary().GetSampleSum()) {
		t.Errorf("real step ⑦ share: p50 %v, sum %v; want 0.835, NaN", got, share.GetSummary().GetSampleSum())
	}
	if got := one(t, mfs, "kstep_population_pods", map[string]string{"nodes": NodesHollow}).GetGauge().GetValue(); got != 6 {
		t.Errorf("hollow pods %v, want 6", got)
	}

	gauge := func(name string, labels map[string]string) float64 {
		t.Helper()
		m := one(t, mfs, name, labels)
		if m.GetGauge() == nil {
			t.Fatalf("%s is not a gauge", name)
		}
		return m.GetGauge().GetValue()
	}
	start, _ := time.Parse(time.RFC3339, r.StartedAt)
	for name, want := range map[string]float64{
		"kstep_throughput_pods_per_second": 6.75,
		"kstep_pods":                       8,
		"kstep_run_valid":                  1,
		"kstep_run_disrupted":              1,
		"kstep_run_start_time_seconds":     float64(start.Unix()),
		"kstep_run_duration_seconds":       48.25,
	} {
		if got := gauge(name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := gauge("kstep_run_info", map[string]string{"id": r.ID, "version": r.Version, "runtime": "hollow"}); got != 1 {
		t.Errorf("kstep_run_info = %v", got)
	}
	if got := gauge("kstep_trace_dropped_events", map[string]string{"actor": "scheduler-0"}); got != 3 {
		t.Errorf("scheduler-0 drops %v, want 3", got)
	}
	if n := len(mfs["kstep_trace_dropped_events"].GetMetric()); n != len(r.Drops) {
		t.Errorf("%d actors' drops, want %d (an actor that reports none has no series)", n, len(r.Drops))
	}

	api := one(t, mfs, "kstep_api_request_duration_seconds", map[string]string{"verb": "patch", "resource": "pods/status"})
	if got := quantile(t, api, 0.99); got != 0.0112 || api.GetSummary().GetSampleCount() != 16 || !near(api.GetSummary().GetSampleSum(), 0.056) {
		t.Errorf("patch pods/status: p99 %v s, count %d, sum %v", got, api.GetSummary().GetSampleCount(), api.GetSummary().GetSampleSum())
	}
	if got := gauge("kstep_api_request_errors", map[string]string{"verb": "patch", "resource": "pods/status"}); got != 2 {
		t.Errorf("patch pods/status errors %v, want 2", got)
	}
	if got := gauge("kstep_actor_cpu_seconds", map[string]string{"actor": "apiserver-0"}); got != 4.75 {
		t.Errorf("apiserver-0 cpu %v s", got)
	}
	if got := gauge("kstep_actor_peak_resident_memory_bytes", map[string]string{"actor": "etcd-0"}); got != 61.25*1024*1024 {
		t.Errorf("etcd-0 peak rss %v bytes, want %v", got, 61.25*1024*1024)
	}
	if gauge("kstep_etcd_leader", map[string]string{"member": "etcd-0"}) != 1 || gauge("kstep_etcd_leader", map[string]string{"member": "etcd-1"}) != 0 ||
		gauge("kstep_etcd_leader_changes", map[string]string{"member": "etcd-1"}) != 1 || gauge("kstep_etcd_slow_applies", map[string]string{"member": "etcd-2"}) != 3 ||
		gauge("kstep_etcd_backend_commit_duration_p99_seconds", map[string]string{"member": "etcd-1"}) != 0.014 {
		t.Error("etcd member figures are not the run's")
	}
	fsync := one(t, mfs, "kstep_etcd_wal_fsync_duration_seconds", map[string]string{"member": "etcd-1"})
	if quantile(t, fsync, 0.99) != 0.00725 || fsync.GetSummary().GetSampleCount() != 401 {
		t.Errorf("etcd-1 fsync: %v", fsync)
	}
}

// Two steps with the same number, name and node kind would be two series
// of the same name and labels: WriteRun refuses the run rather than write
// an exposition Prometheus rejects.
func TestMetricsRefuseDuplicateSeries(t *testing.T) {
	r := exportRun()
	r.Steps = append(r.Steps, r.Steps[2])
	err := WriteRun(t.TempDir(), r)
	if err == nil || !strings.Contains(err.Error(), "kstep_step_latency_seconds") {
		t.Fatalf("WriteRun of a run with a step twice: %v", err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// pushgateway starts a Pushgateway (no persistence) on a free port and
// returns its URL once it is ready; it is killed when the test ends.
func pushgateway(t *testing.T) string {
	t.Helper()
	bin := tool(t, "prometheus-pushgateway", "prometheus-pushgateway", "pushgateway")
	logPath := filepath.Join(t.TempDir(), "pushgateway.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// The port is free when picked; another process may take it before
	// the gateway binds, so a gateway that exits at once gets another.
	for range 3 {
		if url, ok := startPushgateway(t, bin, freePort(t), logf); ok {
			return url
		}
	}
	logs, _ := os.ReadFile(logPath)
	t.Fatalf("pushgateway exited three times:\n%s", logs)
	return ""
}

// startPushgateway starts one on addr; false when it exits before it is
// ready.
func startPushgateway(t *testing.T, bin, addr string, log *os.File) (string, bool) {
	t.Helper()
	cmd := exec.Command(bin, "--web.listen-address="+addr, "--persistence.file=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	url := "http://" + addr
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			return "", false
		default:
		}
		if resp, err := http.Get(url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, true
			}
		}
	}
	logs, _ := os.ReadFile(log.Name())
	t.Fatalf("pushgateway at %s not ready in 15s:\n%s", url, logs)
	return "", false
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s", url, resp.Status)
	}
	return parse(t, resp.Body)
}

// A run pushed to a real Pushgateway is scraped back from it with the
// run's values under job="kstep" and its profile and provider; runs of two
// profiles stay apart, and a second push of a profile replaces its first.
func TestPushToPushgateway(t *testing.T) {
	url := pushgateway(t)
	ctx := context.Background()

	quick := exportRun()
	small := exportRun()
	small.Profile, small.ID = "small", "20261203-111500-small"
	small.Steps[3] = Step{Step: "⑥", Name: "kubelet notices", Nodes: NodesHollow, Summary: Summarize([]float64{5, 6, 7}), SamplesMS: []float64{5, 6, 7}, Verdict: Within}
	for _, r := range []*Run{quick, small} {
		if err := Push(ctx, url, r); err != nil {
			t.Fatal(err)
		}
	}

	mfs := scrape(t, url)
	for _, r := range []*Run{quick, small} {
		group := map[string]string{"job": Job, "profile": r.Profile, "provider": r.Provider}
		with := func(labels map[string]string) map[string]string {
			for k, v := range group {
				labels[k] = v
			}
			return labels
		}
		m := one(t, mfs, "kstep_step_latency_seconds", with(map[string]string{"step": "⑥", "transition": "kubelet notices", "nodes": NodesHollow}))
		if got, want := quantile(t, m, 0.99), r.Steps[3].P99/1000; got != want {
			t.Errorf("%s: ⑥ hollow p99 on the gateway %v s, want %v", r.Profile, got, want)
		}
		if got := m.GetSummary().GetSampleCount(); got != uint64(r.Steps[3].Count) {
			t.Errorf("%s: ⑥ hollow count on the gateway %d, want %d", r.Profile, got, r.Steps[3].Count)
		}
		if got := one(t, mfs, "kstep_run_info", with(map[string]string{"id": r.ID, "version": r.Version})).GetGauge().GetValue(); got != 1 {
			t.Errorf("%s: kstep_run_info %v", r.Profile, got)
		}
		if got := one(t, mfs, "kstep_throughput_pods_per_second", with(map[string]string{})).GetGauge().GetValue(); got != r.Throughput.PodsPerS {
			t.Errorf("%s: throughput on the gateway %v", r.Profile, got)
		}
		// The gateway stamps each group's last successful push.
		if one(t, mfs, "push_time_seconds", with(map[string]string{})).GetGauge().GetValue() <= 0 {
			t.Errorf("%s: no push time", r.Profile)
		}
	}

	// The next quick run lacks step ④: it leaves the gateway with it.
	quick.Steps = append(quick.Steps[:1:1], quick.Steps[2:]...)
	quick.Throughput.PodsPerS = 7.5
	if err := Push(ctx, url, quick); err != nil {
		t.Fatal(err)
	}
	mfs = scrape(t, url)
	for _, m := range mfs["kstep_step_latency_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["step"] == "④" && labels["profile"] == "quick" {
			t.Errorf("step ④ of the replaced quick run is still on the gateway: %v", labels)
		}
	}
	one(t, mfs, "kstep_step_latency_seconds", map[string]string{"step": "④", "profile": "small"})
	if got := one(t, mfs, "kstep_throughput_pods_per_second", map[string]string{"profile": "quick"}).GetGauge().GetValue(); got != 7.5 {
		t.Errorf("quick throughput after the second push %v, want 7.5", got)
	}
}

// A push that fails names the gateway's URL, and its status when the
// gateway answered.
func TestPushErrors(t *testing.T) {
	ctx := context.Background()
	// Nothing listens on a port just released.
	dead := "http://" + freePort(t)
	if err := Push(ctx, dead, exportRun()); err == nil || !strings.Contains(err.Error(), dead) {
		t.Errorf("push to %s with nothing listening: %v", dead, err)
	}

	// A server that takes the connection and never answers: the push
	// ends with the caller's deadline.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	silent := "http://" + l.Addr().String()
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = Push(tctx, silent, exportRun())
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), silent) {
		t.Errorf("push to a server that never answers: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("push to a server that never answers took %s", d)
	}

	// A real gateway, under a path that is not its API.
	url := pushgateway(t) + "/not-the-gateway"
	err = Push(ctx, url, exportRun())
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "status code 404") || strings.HasSuffix(err.Error(), "\n") {
		t.Errorf("push to %s: %v", url, err)
	}
}
