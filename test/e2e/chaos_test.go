package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/chaos"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// runChaos runs `kstep chaos` like a user and returns its exit code, its
// output and the report it wrote (nil if none).
func runChaos(t *testing.T, timeout time.Duration, args ...string) (int, string, *chaos.Report) {
	t.Helper()
	return runChaosIn(t, t.TempDir(), timeout, args...)
}

// runChaosIn is runChaos writing its run directory to out.
func runChaosIn(t *testing.T, out string, timeout time.Duration, args ...string) (int, string, *chaos.Report) {
	t.Helper()
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"chaos", "--out", out}, args...)...)
	b, err := cmd.CombinedOutput()
	code := exitCode(t, "chaos", err, b)
	rep, rerr := chaos.ReadReport(filepath.Join(out, "chaos.json"))
	if rerr != nil {
		t.Logf("no report: %v\n%s", rerr, logs(filepath.Join(out, "cluster")))
	}
	return code, string(b), rep
}

// TestChaosSmoke is the CI chaos gate, on every provider (docker where a
// daemon answers, as on CI): the etcd leader, an apiserver, the
// controller-manager leader and the kubelets are SIGKILLed one after
// another under a small load, and the ci gate (generous times, every
// invariant at 0) passes. The times are logged, never asserted.
func TestChaosSmoke(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, true))
			if prov == "docker" {
				needDocker(t)
			}
			code, out, rep := runChaos(t, 10*time.Minute, "--scenario", "smoke", "--gate", "ci", "--provider", prov)
			if rep == nil {
				t.Fatalf("exit %d, no report:\n%s", code, out)
			}
			if rep.Provider != prov || rep.Security == "" || strings.HasPrefix(rep.Security, "none") {
				t.Errorf("report: provider %q, security %q; want %s with TLS and RBAC", rep.Provider, rep.Security, prov)
			}
			for _, f := range rep.Faults {
				det, rec := "—", "—"
				if f.Detection.MS != nil {
					det = time.Duration(*f.Detection.MS * 1e6).Round(time.Millisecond).String()
				}
				if f.Recovery.MS != nil {
					rec = time.Duration(*f.Recovery.MS * 1e6).Round(time.Millisecond).String()
				}
				t.Logf("%s (%s): detection %s, recovery %s, longest write gap %.0f ms, failed writes %d",
					f.Name, strings.Join(f.Actors, ","), det, rec, f.WriteGapMS, f.FailedWrites)
			}
			if code != 0 || !rep.Passed {
				t.Fatalf("exit %d, passed %v; failed lines: %v\n%s", code, rep.Passed, chaos.Failed(rep.Verdicts), out)
			}
			want := map[chaos.Target]bool{chaos.TargetEtcdLeader: true, chaos.TargetAPIServer: true, chaos.TargetControllerManager: true, chaos.TargetKubelet: true}
			for _, f := range rep.Faults {
				if f.Error != "" || len(f.Actors) == 0 {
					t.Errorf("%s: actors %v, error %q", f.Name, f.Actors, f.Error)
				}
				delete(want, f.Target)
			}
			if len(want) > 0 {
				t.Errorf("faults not run: %v", want)
			}
			running := false
			for _, inv := range rep.Invariants {
				if !inv.OK() {
					t.Errorf("invariant %s: %s %v", inv.Name, inv.Summary, inv.Detail)
				}
				if inv.Name == chaos.InvRunningPods {
					running = true
					t.Logf("%s: %s", inv.Name, inv.Summary)
				}
			}
			checkCorrectnessFigures(t, rep)
			if real := rep.Cluster.RealNodes > 0; real != running {
				t.Errorf("real nodes %d, running-pods-unaffected checked %v: it runs exactly where there are real nodes", rep.Cluster.RealNodes, running)
			}
		})
	}
}

// TestAPIServerDeadCostsNoNode is #17's promise, on every provider: the
// apiserver every client prefers is SIGKILLed and left dead for 60 s, much
// longer than the 8 s node grace period, under load. Every kubelet, hollow
// node, controller-manager and scheduler fails over to the other apiserver:
// no node goes NotReady, no pod is evicted, no write is lost.
func TestAPIServerDeadCostsNoNode(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, true))
			if prov == "docker" {
				needDocker(t)
			}
			out := t.TempDir()
			code, stdout, rep := runChaosIn(t, out, 10*time.Minute, "--scenario", "apiserver-dead", "--gate", "ci", "--provider", prov)
			if rep == nil {
				t.Fatalf("exit %d, no report:\n%s", code, stdout)
			}
			if len(rep.Faults) != 1 || rep.Faults[0].Error != "" || rep.Faults[0].InjectedAt.IsZero() {
				t.Fatalf("faults %+v", rep.Faults)
			}
			f := rep.Faults[0]
			dead := f.UndoneAt.Sub(f.InjectedAt)
			t.Logf("%s dead for %v: nodes NotReady %v, pods evicted %v, failed writes %d, longest write gap %.0f ms, longest wait %.0f ms",
				strings.Join(f.Actors, ","), dead.Round(time.Millisecond), f.OtherNodesNotReady, f.OtherPodsEvicted, f.FailedWrites, f.WriteGapMS, f.LongestWaitMS)
			if dead < 60*time.Second {
				t.Errorf("the apiserver was dead for %v, want 60 s", dead)
			}
			if len(f.OtherNodesNotReady) != 0 || len(f.OtherPodsEvicted) != 0 {
				t.Errorf("nodes NotReady %v, pods evicted %v; want none", f.OtherNodesNotReady, f.OtherPodsEvicted)
			}
			if code != 0 || !rep.Passed {
				t.Fatalf("exit %d, passed %v; failed lines: %v\n%s", code, rep.Passed, chaos.Failed(rep.Verdicts), stdout)
			}
			// Not vacuous: the nodes that preferred the dead apiserver
			// did fail over (their client logs each switch).
			b, err := os.ReadFile(filepath.Join(out, "cluster", "logs", "hollow-nodes.log"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "failing over") {
				t.Errorf("the hollow nodes' log shows no failover:\n%s", tail(string(b), 40))
			}
		})
	}
}

// TestNoSpaceEvictsNothing is #17's NOSPACE scenario, on every provider:
// etcd's space quota is filled under load until writes are refused, left
// full for 20 s (every node misses its renewals, longer than the 8 s grace
// period), then recovered as an operator would. Every refused probe write
// is a 507 carrying etcd's message, no pod is evicted, nothing
// acknowledged is lost, the members' hashes agree, writes come back.
func TestNoSpaceEvictsNothing(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, true))
			if prov == "docker" {
				needDocker(t)
			}
			out := t.TempDir()
			code, stdout, rep := runChaosIn(t, out, 10*time.Minute, "--scenario", "etcd-nospace", "--gate", "ci", "--provider", prov)
			if rep == nil {
				t.Fatalf("exit %d, no report:\n%s", code, stdout)
			}
			if len(rep.Faults) != 1 || rep.Faults[0].Error != "" || rep.Faults[0].Fill == nil {
				t.Fatalf("faults %+v", rep.Faults)
			}
			f := rep.Faults[0]
			fi := f.Fill
			back := "not observed"
			if fi.RecoveredMS != nil {
				back = (time.Duration(*fi.RecoveredMS) * time.Millisecond).String()
			}
			t.Logf("filled %d objects (%d MiB) in %v; full for %v; refused writes %v; unclear %d; evicted %v; recovered (delete %d, compact to %d, defragment, disarm %d) with writes back %s after it began",
				fi.Objects, fi.Bytes>>20, f.InjectedAt.Sub(fi.StartedAt).Round(time.Millisecond), f.UndoneAt.Sub(f.InjectedAt).Round(time.Millisecond),
				f.WriteErrors, f.UnclearErrors, f.OtherPodsEvicted, fi.Deleted, fi.Recovery.CompactedTo, fi.Recovery.Disarmed, back)
			if code != 0 || !rep.Passed {
				t.Fatalf("exit %d, passed %v; failed lines: %v\n%s", code, rep.Passed, chaos.Failed(rep.Verdicts), stdout)
			}
			if len(f.OtherPodsEvicted) != 0 || f.UnclearErrors != 0 || fi.RecoveredMS == nil {
				t.Errorf("evicted %v, unclear errors %d, recovered %v", f.OtherPodsEvicted, f.UnclearErrors, fi.RecoveredMS)
			}
			for _, m := range fi.Recovery.After {
				if m.NoSpace || m.DBSize >= rep.Cluster.Etcd.QuotaBackendBytes/2 {
					t.Errorf("after the recovery %s: %d bytes, NOSPACE %v", m.Endpoint, m.DBSize, m.NoSpace)
				}
			}
			// Not vacuous: the node lifecycle controller saw every node
			// stale at once and held back (its leader keeps its Lease
			// through the outage in this scenario).
			var cm strings.Builder
			for _, n := range []string{"controller-manager-0", "controller-manager-1"} {
				b, _ := os.ReadFile(filepath.Join(out, "cluster", "logs", n+".log"))
				cm.Write(b)
			}
			if !strings.Contains(cm.String(), "full disruption: every node is unhealthy") {
				t.Errorf("the controller-managers' logs show no full disruption")
			}
		})
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkCorrectnessFigures: the linearizability check and the watch
// guarantees ran and have figures: every invariant family present,
// operations of every kind, events, bookmarks and resumptions.
func checkCorrectnessFigures(t *testing.T, rep *chaos.Report) {
	t.Helper()
	names := map[string]bool{}
	for _, inv := range rep.Invariants {
		names[inv.Name] = true
	}
	for _, n := range []string{chaos.InvLinearizable, chaos.InvWatchOrdered, chaos.InvWatchUnique, chaos.InvWatchReliable, chaos.InvWatchBookmarkable, chaos.InvWatchResumable} {
		if !names[n] {
			t.Errorf("invariant %s missing from the report", n)
		}
	}
	l, w := rep.Linearizability, rep.Watch
	if l == nil || w == nil {
		t.Fatalf("figures missing: linearizability %v, watch %v", l, w)
	}
	t.Logf("linearizability: %d operations (%d gets, %d list reads, CAS %d ok / %d conflict / %d unknown), %s in %.0f ms wall, %.0f ms CPU",
		l.Operations, l.Gets, l.ListReads, l.CASOK, l.CASConflict, l.CASUnknown, l.Result, l.CheckWallMS, l.CheckCPUMS)
	t.Logf("watch: %d watchers, %d events, %d bookmarks, %d restarts; %d resumptions (%d 410, %d interrupted, %d skipped)",
		w.Watchers, w.Events, w.Bookmarks, w.Restarts, w.Resumes, w.Gone, w.Interrupted, w.Skipped)
	if l.Gets == 0 || l.ListReads == 0 || l.CASOK == 0 || l.APIServers < 2 && rep.Provider != "external" {
		t.Errorf("the linearizability workload did not do every kind of operation over every apiserver: %+v", l)
	}
	if w.Events == 0 || w.Bookmarks == 0 || w.Resumes == 0 {
		t.Errorf("the watch guarantees were not exercised: %+v", w)
	}
}

// TestChaosNegativeControls proves the correctness checkers fail: one
// apiserver's watch cache frozen while it serves consistent LISTs (stale
// reads) must break linearizable, one event dropped from one watcher's
// stream must break watch-reliable, and kstep chaos exits 1 naming both,
// on every provider.
func TestChaosNegativeControls(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			if prov == "docker" {
				needDocker(t)
			}
			negativeControls(t, prov)
		})
	}
}

func negativeControls(t *testing.T, prov string) {
	out := t.TempDir()
	code, log, rep := runChaosIn(t, out, 6*time.Minute, "--scenario", filepath.Join("testdata", "chaos-negative-controls.yaml"),
		"--gate", filepath.Join("testdata", "chaos-correctness-gate.yaml"), "--provider", prov)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (gate failed)\n%s", code, log)
	}
	for _, n := range []string{chaos.InvLinearizable, chaos.InvWatchReliable} {
		if !strings.Contains(log, "invariant "+n+" = ") {
			t.Errorf("the output does not name %s:\n%s", n, tail(log, 30))
		}
	}
	if rep == nil || rep.Passed {
		t.Fatalf("report: %+v", rep)
	}
	for _, f := range rep.Faults {
		if f.Error != "" {
			t.Errorf("%s: %s", f.Name, f.Error)
		}
	}
	for _, inv := range rep.Invariants {
		switch inv.Name {
		case chaos.InvLinearizable:
			t.Logf("%s: %s %v", inv.Name, inv.Summary, inv.Detail)
			if !inv.Checked || inv.Count == 0 || !strings.Contains(strings.Join(inv.Detail, "\n"), "list") {
				t.Errorf("%s: checked %v, %d violations; a frozen cache served stale lists", inv.Name, inv.Checked, inv.Count)
			}
			if rep.Linearizability == nil || rep.Linearizability.Visualization == "" {
				t.Errorf("no visualization: %+v", rep.Linearizability)
			} else if _, err := os.Stat(filepath.Join(out, rep.Linearizability.Visualization)); err != nil {
				t.Errorf("visualization: %v", err)
			}
		case chaos.InvWatchReliable:
			t.Logf("%s: %s %v", inv.Name, inv.Summary, inv.Detail)
			if !inv.Checked || inv.Count != 1 {
				t.Errorf("%s: checked %v, %d missing; one event was dropped", inv.Name, inv.Checked, inv.Count)
			}
		case chaos.InvLostWrites, chaos.InvWatchOrdered, chaos.InvWatchUnique:
			if !inv.OK() {
				t.Errorf("%s broken too: %s %v (the failpoints break only what they aim at)", inv.Name, inv.Summary, inv.Detail)
			}
		}
	}
}

// TestChaosGateFails proves the gate can fail: with the ReplicaSet
// controller's expectations switched off by a failpoint, it creates more
// pods than replicas, and kstep chaos exits 1 naming that invariant.
func TestChaosGateFails(t *testing.T) {
	inLane(t, hollowProcs)
	code, out, rep := runChaos(t, 6*time.Minute, "--scenario", filepath.Join("testdata", "chaos-broken-rs.yaml"),
		"--gate", filepath.Join("testdata", "chaos-invariants-gate.yaml"), "--provider", "process")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (gate failed)\n%s", code, out)
	}
	if !strings.Contains(out, "gate invariants-only FAILED") || !strings.Contains(out, "invariant rs-over-replicas = ") {
		t.Errorf("the output does not name the broken invariant:\n%s", out)
	}
	if rep == nil || rep.Passed {
		t.Fatalf("report: %+v", rep)
	}
	for _, inv := range rep.Invariants {
		if inv.Name == chaos.InvRSOver {
			t.Logf("%s: %s %v", inv.Name, inv.Summary, inv.Detail)
			if inv.Count == 0 {
				t.Error("rs-over-replicas saw no excess")
			}
		}
	}
}

// TestChaosRunningPodsFails proves running-pods-unaffected can fail: a
// kubelet failpoint stops every running container once (the kubelet
// restarts them), and kstep chaos exits 1 naming that invariant.
func TestChaosRunningPodsFails(t *testing.T) {
	inLane(t, realNodes)
	needRealNodes(t, "process")
	code, out, rep := runChaos(t, 8*time.Minute, "--scenario", filepath.Join("testdata", "chaos-restarted-containers.yaml"),
		"--gate", filepath.Join("testdata", "chaos-invariants-gate.yaml"), "--provider", "process")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (gate failed)\n%s", code, out)
	}
	if !strings.Contains(out, "invariant "+chaos.InvRunningPods+" = ") {
		t.Errorf("the output does not name %s:\n%s", chaos.InvRunningPods, out)
	}
	found := false
	for _, inv := range rep.Invariants {
		if inv.Name == chaos.InvRunningPods {
			found = true
			t.Logf("%s: %s %v", inv.Name, inv.Summary, inv.Detail)
			if !inv.Checked || inv.Count == 0 {
				t.Errorf("%s: checked %v, %d violations; the failpoint restarted every container", inv.Name, inv.Checked, inv.Count)
			}
		}
	}
	if !found {
		t.Error("no running-pods-unaffected in the report of a scenario with a real node")
	}
}

// needRealNodes skips unless provider prov can run real nodes here.
func needRealNodes(t *testing.T, prov string) {
	t.Helper()
	bin := binary(t)
	spec := provider.Spec{Topology: provider.DefaultTopology(), Binary: bin}
	spec.RealNodes = 1
	if err := provider.CanRunRealNodes(prov, spec); err != nil {
		t.Skipf("real nodes on %s: %v", prov, err)
	}
}
