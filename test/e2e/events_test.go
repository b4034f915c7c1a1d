package e2e

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// TestHollowStartedEvents runs the quick profile on the process provider
// with the hollow nodes' Events on (the default) and off.
//
// On, every pod on a hollow node has the kubelet's Started event named as
// client-go's recorder names it, <pod>.<hex UnixNano>, whose time falls
// between the pod's binding and its readiness probe's pass (event times
// themselves are whole seconds: the name keeps the nanoseconds). The
// earliest binding stamp is taken, the apiservers' watch caches'
// (pod.bound.cached) or the binding's acknowledgement (pod.bound): a
// kubelet's watch may see the binding before its writer is answered.
//
// Off, no kubelet Event exists and run.json says so; the report's writes
// per pod show the difference.
func TestHollowStartedEvents(t *testing.T) {
	inLane(t, realNodes)
	var perPod [2]string
	for i, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "off"}[on]
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			start := time.Now()
			code, output := runBench(t, 10*time.Minute, "--profile", "quick", "--provider", "process", "--out", out,
				"--hollow-events="+strconv.FormatBool(on))
			t.Logf("quick run, hollow-node Events %s, in %s", name, time.Since(start).Round(time.Second))
			if code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, output)
			}
			run, err := results.ReadRun(out)
			if err != nil {
				t.Fatal(err)
			}
			if e := run.Cluster.Topology.HollowEvents; e == nil || *e != on {
				t.Fatalf("run.json's cluster.topology.hollowEvents %v, want %v", e, on)
			}
			report, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(report), "## Writes per pod") {
				t.Errorf("report.md has no writes per pod")
			}
			_, total, events := run.Writes()
			perPod[i] = fmt.Sprintf("%.2f (Events %.2f); control plane e2e p50 %.0f ms, p99 %.0f ms",
				float64(total)/float64(run.Pods), float64(events)/float64(run.Pods), run.EndToEnd.P50, run.EndToEnd.P99)
			t.Logf("Events %s: %d writes over %d pods (%.2f per pod), Events %d (%.2f per pod); e2e p50 %.0f ms p99 %.0f ms",
				name, total, run.Pods, float64(total)/float64(run.Pods), events, float64(events)/float64(run.Pods), run.EndToEnd.P50, run.EndToEnd.P99)

			kube, err := bench.ReadKubeEvents(filepath.Join(out, bench.KubeEventsFile))
			if err != nil {
				t.Fatal(err)
			}
			pods := readPods(t, filepath.Join(out, "pods.jsonl"))
			if !on {
				// Real nodes' kubelets write theirs whatever hollow nodes do.
				real := 0
				for _, e := range kube {
					if e.Source.Component != "kubelet" {
						continue
					}
					if strings.HasPrefix(e.Source.Host, "hollow-") {
						t.Fatalf("hollow-node Events off, yet the kubelet wrote %s %s on %s", e.Reason, e.Name, e.Source.Host)
					}
					real++
				}
				t.Logf("hollow-node Events off: none from hollow nodes, %d from real nodes' kubelets", real)
				return
			}
			checkHollowStartedEvents(t, out, kube, pods)
		})
	}
	t.Logf("writes per pod, hollow-node Events on: %s", perPod[0])
	t.Logf("writes per pod, hollow-node Events off: %s", perPod[1])
}

// checkStarted says what is wrong with a pod's Started event, or "".
func checkStarted(p loadgen.PodOwner, e corev1.Event, bound, ready int64) string {
	if e.Name == "" {
		return "no Started event from the kubelet"
	}
	hex, ok := strings.CutPrefix(e.Name, p.Name+".")
	if !ok {
		return "Started event named " + e.Name + ", not <pod>.<hex>"
	}
	ns, err := strconv.ParseInt(hex, 16, 64)
	if err != nil {
		return "Started event " + e.Name + ": " + err.Error()
	}
	if bound == 0 || ready == 0 {
		return "no binding or readiness stamp in events.jsonl.gz"
	}
	if ns < bound || ns > ready {
		return "Started event " + e.Name + " at " + time.Unix(0, ns).Format(time.RFC3339Nano) + ", outside binding " +
			time.Unix(0, bound).Format(time.RFC3339Nano) + " … ready " + time.Unix(0, ready).Format(time.RFC3339Nano)
	}
	if e.InvolvedObject.FieldPath == "" || e.Count < 1 || e.Source.Host != p.Node {
		return "Started event " + e.Name + ": fieldPath " + e.InvolvedObject.FieldPath + ", host " + e.Source.Host
	}
	return ""
}

// stamps reads a run's events.jsonl.gz: each pod's earliest binding stamp
// and its first readiness-probe pass, by UID, in Unix ns.
func stamps(t *testing.T, path string) (bound, ready map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := trace.Read(zr)
	if err != nil {
		t.Fatal(err)
	}
	bound, ready = map[string]int64{}, map[string]int64{}
	first := func(m map[string]int64, uid string, ts int64) {
		if cur, ok := m[uid]; !ok || ts < cur {
			m[uid] = ts
		}
	}
	for _, e := range evs {
		switch e.Step {
		case trace.PodBound, trace.PodBoundCached:
			first(bound, string(e.UID), e.TS)
		case trace.PodProbeReady:
			first(ready, string(e.UID), e.TS)
		}
	}
	return bound, ready
}

func readPods(t *testing.T, path string) []loadgen.PodOwner {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []loadgen.PodOwner
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p loadgen.PodOwner
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkHollowStartedEvents holds a run with hollow-node Events on (the
// default) to them: every pod on a hollow node has the kubelet's Started
// event named as client-go's recorder names it, <pod>.<hex UnixNano>,
// whose time falls between the pod's binding and its readiness probe's
// pass. TestBenchQuickCausal checks its process run with it, so that make
// test has it without a run of its own.
func checkHollowStartedEvents(t *testing.T, out string, kube []corev1.Event, pods []loadgen.PodOwner) {
	t.Helper()
	bound, ready := stamps(t, filepath.Join(out, "events.jsonl.gz"))
	started := map[string]corev1.Event{} // by pod UID
	for _, e := range kube {
		if e.Reason == "Started" && e.Source.Component == "kubelet" {
			started[string(e.InvolvedObject.UID)] = e
		}
	}
	hollow, bad := 0, 0
	for _, p := range pods {
		if !strings.HasPrefix(p.Node, "hollow-") {
			continue
		}
		hollow++
		why := checkStarted(p, started[string(p.UID)], bound[string(p.UID)], ready[string(p.UID)])
		if why != "" {
			if bad++; bad <= 10 {
				t.Errorf("pod %s/%s on %s: %s", p.Namespace, p.Name, p.Node, why)
			}
		}
	}
	if hollow < 100 {
		t.Fatalf("%d pods on hollow nodes, want the quick profile's (200 less what real nodes took)", hollow)
	}
	if bad > 0 {
		t.Fatalf("%d of %d hollow pods lack a Started event inside their binding and Ready stamps", bad, hollow)
	}
	t.Logf("%d hollow pods, each with its Started event <pod>.<hex UnixNano> between binding and Ready", hollow)
}
