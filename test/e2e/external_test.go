package e2e

import (
	"context"
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
// against a cluster `kstep up -d` brought up without trace files, as a
// user with a cluster of their own would: the run is valid, its steps are
// the ones kstep's own watches see (every pod of the load), the steps only
// a component sees are marked not observable, the cluster is recorded,
// and nothing the run created is left. Then kstep clean removes a
// labelled leftover and nothing else, and credentials that may not create
// a namespace are refused with exit 2, naming the permission.
func TestBenchExternal(t *testing.T) {
	bin := binary(t)
	kc, _ := upCLI(t, "--etcd-members", "1", "--hollow-nodes", "10")
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
