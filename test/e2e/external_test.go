package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// TestBenchExternal runs the quick profile with --provider external
// against a cluster `kstep up -d --profile testdata/cross-view.yaml`
// brought up (the cluster a process run of that profile starts, its
// actors' step events in its state directory, which the external run
// does not read), as a user with a cluster of their own would: the run is valid, its steps are
// the ones kstep's own watches see (every pod of the load), the steps only
// a component sees are marked not observable, the cluster is recorded,
// and nothing the run created is left. Then kstep clean removes a
// labelled leftover and nothing else, and credentials that may not create
// a namespace are refused with exit 2, naming the permission. Then kstep
// load runs against the same cluster (externalLoad), and the external run
// is compared with a process run of the same profile with the outside
// view (crossViewCompare).
func TestBenchExternal(t *testing.T) {
	bin := binary(t)
	kc, _ := upCLI(t, "--profile", filepath.Join("testdata", "cross-view.yaml"))
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	if code, out := runBench(t, time.Minute, "--profile", "quick", "--provider", "external"); code != 2 || !strings.Contains(out, "--kubeconfig") {
		t.Errorf("--provider external without --kubeconfig: exit %d, want 2 naming --kubeconfig:\n%s", code, out)
	}

	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, output := runBench(t, 15*time.Minute, "--profile", "quick", "--provider", "external", "--kubeconfig", kc, "--out", out)
	t.Logf("quick through external in %s:\n%s", time.Since(start).Round(time.Second), output)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	prof := bench.Builtin["quick"]
	pods := prof.Job.Count * int(prof.Job.Object.Replicas)
	if !r.Valid || r.Provider != "external" || r.Pods != pods {
		t.Errorf("valid %v (%v) provider %s pods %d, want valid external with %d pods", r.Valid, r.Invalid, r.Provider, r.Pods, pods)
	}
	e := r.Cluster.External
	if e == nil || e.Version == "" || e.Nodes != 10 || e.Kinds[bench.KindHollowKstep] != 10 || !strings.HasPrefix(e.Label, "kstep.dev/run=") {
		t.Errorf("cluster recorded as %+v, want a version and 10 hollow (kstep) nodes", e)
	}
	rows := map[string]results.Step{}
	for _, s := range r.Steps {
		rows[s.Name] = s
	}
	for _, name := range []string{"client → apiserver: sent → 201", "outside: client sent → pod seen created", "outside: pod seen created → seen bound",
		"outside: seen bound → seen Running", "outside: seen Running → seen Ready", "outside: client sent → Endpoints seen listing the pod"} {
		s, ok := rows[name]
		want := pods
		if name == "client → apiserver: sent → 201" {
			want = prof.Job.Count
		}
		if !ok || s.Count != want || s.Nodes != results.NodesHollow && s.Nodes != results.NodesAll {
			t.Errorf("row %q: present %v, %d samples on %q nodes, want %d", name, ok, s.Count, s.Nodes, want)
		}
	}
	if r.EndToEnd.Count != pods {
		t.Errorf("end to end has %d samples, want %d", r.EndToEnd.Count, pods)
	}
	for _, step := range []string{trace.RSReceived, trace.RSObserved, trace.PodScheduled, trace.PodBound, trace.PodObservedKubelet, trace.PodProbeReady, trace.EndpointsUpdated} {
		if !slices.Contains(r.NotObservable, step) {
			t.Errorf("%s is not marked not observable: %v", step, r.NotObservable)
		}
	}
	for _, s := range r.Steps {
		if !strings.HasPrefix(s.From, "client.") {
			t.Errorf("row %q starts from %s, which nobody on this cluster stamps", s.Name, s.From)
		}
	}
	where := map[string]string{}
	for _, s := range r.Sources {
		where[s.Step] = s.Where
	}
	for _, step := range []string{loadgen.ClientRSAcked, loadgen.ClientPodAdded, loadgen.ClientPodBound, loadgen.ClientPodRunning, trace.PodReadyObserved, loadgen.ClientEndpointsListed} {
		if where[step] != results.FromHarness {
			t.Errorf("source of %s: %q, want %s", step, where[step], results.FromHarness)
		}
	}

	// Nothing of the run is left (Down waited for it).
	for what, n := range labelled(t, cs, "kstep.dev/run") {
		t.Errorf("%d %s carry kstep.dev/run after the run", n, what)
	}

	// kstep clean removes what carries the label, and only that.
	for name, labels := range map[string]map[string]string{"leftover": {"kstep.dev/run": "killed"}, "theirs": nil} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	b, err := exec.CommandContext(cctx, bin, "clean", "--kubeconfig", kc).CombinedOutput()
	cancel()
	if err != nil || !strings.Contains(string(b), "1 Namespace") {
		t.Errorf("kstep clean: %v\n%s", err, b)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "leftover", metav1.GetOptions{}); err == nil {
		t.Error("kstep clean left the labelled namespace")
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("kstep clean touched a namespace without its label: %v", err)
	}

	extra := time.Now()
	externalLoad(t, bin, kc, cs)
	// A subtest, so that docs/testing.md can give its two runs a tier of
	// their own.
	t.Run("cross-view", func(t *testing.T) {
		binary(t)
		crossViewCompare(t, bin, kc)
	})
	t.Logf("kstep load --provider external and the cross-view compare in %s", time.Since(extra).Round(time.Second))

	// Credentials that may not create a namespace: the admin's, acting as
	// a user no role names.
	raw, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	raw.AuthInfos[raw.Contexts[raw.CurrentContext].AuthInfo].Impersonate = "kstep-e2e-nobody"
	weak := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, weak); err != nil {
		t.Fatal(err)
	}
	code, output = runBench(t, 3*time.Minute, "--profile", "quick", "--provider", "external", "--kubeconfig", weak, "--out", filepath.Join(t.TempDir(), "weak"))
	if code != 2 || !strings.Contains(output, "create namespaces") {
		t.Errorf("credentials that may not create a namespace: exit %d, want 2 naming create namespaces:\n%s", code, output)
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	b, err = exec.CommandContext(lctx, bin, "load", "--provider", "external", "--kubeconfig", weak, "--count", "1").CombinedOutput()
	cancel()
	if code := exitCode(t, "load", err, b); code != 2 || !strings.Contains(string(b), "create namespaces") {
		t.Errorf("kstep load with credentials that may not create a namespace: exit %d, want 2 naming create namespaces:\n%s", code, b)
	}
	// kstep chaos asks the same before anything starts, its own accesses
	// (the probe's ConfigMaps, the faults' requests) with the load's.
	code, output, _ = runChaos(t, 3*time.Minute, "--provider", "external", "--kubeconfig", weak, "--scenario", "api-workload")
	if code != 2 || !strings.Contains(output, "create namespaces") || !strings.Contains(output, "patch replicasets/scale.apps") {
		t.Errorf("kstep chaos with credentials that may not create a namespace: exit %d, want 2 naming create namespaces and patch replicasets/scale:\n%s", code, output)
	}
}

// externalLoad runs kstep load --provider external against the cluster of
// kc three ways: with --keep (its objects carry kstep.dev/run=load-<job>,
// its trace has the outside stamps, and kstep clean --run removes them),
// to its end (nothing labelled is left), and interrupted by SIGINT while
// it creates (it removes what it created before it exits).
func externalLoad(t *testing.T, bin, kc string, cs kubernetes.Interface) {
	const job, sel = "e2e-load", "kstep.dev/run=load-e2e-load"
	load := func(timeout time.Duration, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		b, err := exec.CommandContext(ctx, bin, append([]string{"load", "--provider", "external", "--kubeconfig", kc,
			"--name", job, "--namespace", "e2e-load", "--qps", "20"}, args...)...).CombinedOutput()
		return exitCode(t, "load", err, b), string(b)
	}
	traceFile := filepath.Join(t.TempDir(), "load.jsonl")
	if code, out := load(2*time.Minute, "--count", "4", "--keep", "--trace-file", traceFile); code != 0 {
		t.Fatalf("kstep load --keep: exit %d\n%s", code, out)
	}
	if got := labelled(t, cs, sel); got["namespaces"] != 1 || got["replicasets"] != 4 || got["pods"] != 4 {
		t.Errorf("after kstep load --keep, %s is on %v; want 1 namespace, 4 replicasets, 4 pods", sel, got)
	}
	tf, err := os.ReadFile(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for dec := json.NewDecoder(bytes.NewReader(tf)); ; {
		var e trace.Event
		if err := dec.Decode(&e); err != nil {
			break
		}
		seen[e.Step]++
	}
	for _, step := range []string{loadgen.ClientRSSent, loadgen.ClientPodAdded, loadgen.ClientPodBound, loadgen.ClientPodRunning, trace.PodReadyObserved} {
		if seen[step] != 4 {
			t.Errorf("the load's trace has %d %s, want 4 (one per object or pod): %v", seen[step], step, seen)
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	b, err := exec.CommandContext(cctx, bin, "clean", "--kubeconfig", kc, "--run", "load-"+job).CombinedOutput()
	cancel()
	if err != nil || !strings.Contains(string(b), "4 ReplicaSet") {
		t.Errorf("kstep clean --run load-%s: %v\n%s", job, err, b)
	}
	for what, n := range labelled(t, cs, sel) {
		t.Errorf("%d %s carry %s after kstep clean", n, what, sel)
	}

	if code, out := load(2*time.Minute, "--count", "4"); code != 0 || !strings.Contains(out, "removed what carries "+sel) {
		t.Errorf("kstep load to its end: exit %d, want 0 saying it removed what carries %s\n%s", code, sel, out)
	}
	for what, n := range labelled(t, cs, sel) {
		t.Errorf("%d %s carry %s after kstep load ended", n, what, sel)
	}

	// Interrupted: 40 objects at 4/s take 10 s; SIGINT once a few exist.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var output strings.Builder
	cmd := exec.CommandContext(ctx, bin, "load", "--provider", "external", "--kubeconfig", kc,
		"--name", job, "--namespace", "e2e-load", "--count", "40", "--qps", "4")
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); labelled(t, cs, sel)["replicasets"] < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("no 3 labelled ReplicaSets within a minute\n%s", output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if code := exitCode(t, "load", err, []byte(output.String())); code != 1 || !strings.Contains(output.String(), "removed what carries "+sel) {
		t.Errorf("kstep load interrupted: exit %d, want 1 (the job did not finish) having removed what carries %s\n%s", code, sel, output.String())
	}
	for what, n := range labelled(t, cs, sel) {
		t.Errorf("%d %s carry %s after kstep load was interrupted", n, what, sel)
	}
}

// crossViewCompare runs a small profile (testdata/cross-view.yaml)
// through --provider external against the cluster of kc (the one `kstep
// up --profile` starts for it) and on the process provider with
// --outside-view, which starts the same cluster, and compares the two
// runs: the rows both have are compared, every row
// only the process run has is left out as not observable on the external
// cluster. One run a side cannot reach a verdict: --force compares them
// without one, and a cross view whose process side lacks the outside view
// is refused even so.
func crossViewCompare(t *testing.T, bin, kc string) {
	prof := filepath.Join("testdata", "cross-view.yaml")
	ext, proc := filepath.Join(t.TempDir(), "external"), filepath.Join(t.TempDir(), "process")
	start := time.Now()
	code, output := runBench(t, 5*time.Minute, "--profile", prof, "--provider", "external", "--kubeconfig", kc, "--out", ext)
	t.Logf("cross-view through external in %s", time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("kstep bench --provider external: exit %d\n%s", code, output)
	}
	start = time.Now()
	code, output = runBench(t, 5*time.Minute, "--profile", prof, "--provider", "process", "--outside-view", "--out", proc)
	t.Logf("cross-view on process with the outside view in %s", time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("kstep bench --provider process --outside-view: exit %d\n%s", code, output)
	}
	pr, err := results.ReadRun(proc)
	if err != nil {
		t.Fatal(err)
	}
	if !pr.OutsideView {
		t.Errorf("run.json of the process run has outside_view false")
	}
	compare := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := exec.CommandContext(ctx, bin, append([]string{"compare"}, args...)...).CombinedOutput()
		return exitCode(t, "compare", err, b), string(b)
	}
	code, text := compare("--force", ext, proc)
	t.Logf("kstep compare --force external process:\n%s", text)
	if code != 0 || !strings.Contains(text, "cross view") || !strings.Contains(text, "rows left out") {
		t.Errorf("compare of the external and the process run: exit %d, want 0 with the cross view and the rows left out", code)
	}
	code, js := compare("--force", "--json", ext, proc)
	var c results.Comparison
	if err := json.Unmarshal([]byte(js), &c); code != 0 || err != nil {
		t.Fatalf("compare --json: exit %d, %v\n%s", code, err, js)
	}
	er, err := results.ReadRun(ext)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{er.EndToEnd.Key(): true}
	for _, s := range er.Steps {
		want[s.Key()] = true
	}
	for _, d := range c.Deltas {
		if !want[d.Key] {
			t.Errorf("compared %s, which the external run does not have", d.Key)
		}
		delete(want, d.Key)
	}
	for k := range want {
		t.Errorf("the external run's row %s is not compared", k)
	}
	if !c.CrossView || len(c.LeftOut) == 0 {
		t.Errorf("cross view %v, %d rows left out; want a cross view leaving out the process run's own rows", c.CrossView, len(c.LeftOut))
	}
	for _, l := range c.LeftOut {
		if l.In != "new" || !strings.Contains(l.Why, "not observable on the base runs' cluster") {
			t.Errorf("left out %s %s [%s] (in %s): %s; want only process rows, not observable on the external cluster", l.Step, l.Name, l.Nodes, l.In, l.Why)
		}
	}

	// The same process run without its outside view: refused, forced or not.
	pr.OutsideView = false
	blind := filepath.Join(t.TempDir(), "blind")
	if err := results.WriteRun(blind, pr); err != nil {
		t.Fatal(err)
	}
	if code, text := compare("--force", ext, blind); code != 2 || !strings.Contains(text, "cross view without the outside view") {
		t.Errorf("compare with a process run without the outside view: exit %d, want 2 refusing it\n%s", code, text)
	}
}

// labelled counts what carries the label selector sel, by kind.
func labelled(t *testing.T, cs kubernetes.Interface, sel string) map[string]int {
	t.Helper()
	ctx := context.Background()
	o := metav1.ListOptions{LabelSelector: sel}
	out := map[string]int{}
	if l, err := cs.CoreV1().Namespaces().List(ctx, o); err != nil {
		t.Fatal(err)
	} else if len(l.Items) > 0 {
		out["namespaces"] = len(l.Items)
	}
	if l, err := cs.CoreV1().Pods("").List(ctx, o); err != nil {
		t.Fatal(err)
	} else if len(l.Items) > 0 {
		out["pods"] = len(l.Items)
	}
	if l, err := cs.AppsV1().ReplicaSets("").List(ctx, o); err != nil {
		t.Fatal(err)
	} else if len(l.Items) > 0 {
		out["replicasets"] = len(l.Items)
	}
	return out
}
