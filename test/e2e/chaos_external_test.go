package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/chaos"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// TestChaosExternal runs the built-in API-level scenario through
// --provider external against a cluster `kstep up -d` brought up, as
// against a cluster of the user's own: a node with pods is drained under
// load and uncordoned, another's Node object deleted; the ci gate passes
// with a detection and a recovery for both, every node is schedulable and
// nothing the run created is left. A provider-only fault (an etcd member's
// SIGKILL) and disruption without --allow-disruption are refused with exit
// 2 and the reason, before anything starts. Then the workload scenario
// (the load's pods deleted at a rate, its ReplicaSets scaled and back)
// runs without --allow-disruption — it touches only what kstep created —
// and passes the ci gate with both measured and no ReplicaSet over its
// replicas.
func TestChaosExternal(t *testing.T) {
	inLane(t, hollowProcs)
	// kstep's lease timing, the chaos engine's: a deleted Node is
	// registered again at its kubelet's next status write, every 10 s
	// rather than upstream's 5 min.
	kc, _ := upCLI(t, "--etcd-members", "1", "--hollow-nodes", "3", "--lease-timing", "kstep")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	code, output, _ := runChaos(t, time.Minute, "--provider", "external", "--kubeconfig", kc, "--scenario", "etcd-leader-kill", "--allow-disruption")
	if code != 2 || !strings.Contains(output, chaos.ErrNeedsProvider.Error()) || !strings.Contains(output, "kill etcd-leader") {
		t.Errorf("etcd-leader-kill through external: exit %d, want 2 saying it needs a provider:\n%s", code, output)
	}
	code, output, _ = runChaos(t, time.Minute, "--provider", "external", "--kubeconfig", kc, "--scenario", "api-drain-delete-node")
	if code != 2 || !strings.Contains(output, "--allow-disruption") {
		t.Errorf("api-drain-delete-node through external without --allow-disruption: exit %d, want 2 naming the flag:\n%s", code, output)
	}
	if nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil || len(nodes.Items) != 3 {
		t.Fatalf("after the refusals: %v nodes (%v), want 3 untouched", nodes, err)
	}

	start := time.Now()
	code, output, rep := runChaos(t, 12*time.Minute, "--provider", "external", "--kubeconfig", kc, "--scenario", "api-drain-delete-node",
		"--gate", "ci", "--allow-disruption")
	t.Logf("api-drain-delete-node through external in %s:\n%s", time.Since(start).Round(time.Second), output)
	if code != 0 || rep == nil {
		t.Fatalf("exit %d, want 0 (the ci gate passed)", code)
	}
	if rep.Provider != provider.External || !rep.Passed || len(rep.Faults) != 2 {
		t.Fatalf("provider %s passed %v with %d faults, want external, passed, 2", rep.Provider, rep.Passed, len(rep.Faults))
	}
	for _, f := range rep.Faults {
		if f.Error != "" || len(f.Nodes) != 1 || !f.Detection.Observed() || !f.Recovery.Observed() {
			t.Errorf("fault %s: error %q nodes %v detection %+v recovery %+v, want a node, both measured", f.Name, f.Error, f.Nodes, f.Detection, f.Recovery)
			continue
		}
		t.Logf("%s (%s of %s): detection %s %.0f ms (%s), recovery %s %.0f ms (%s); %s", f.Name, f.Action, f.Nodes[0],
			f.Detection.Kind, *f.Detection.MS, f.Detection.Note, f.Recovery.Kind, *f.Recovery.MS, f.Recovery.Note, f.Detail)
	}
	checked := map[string]bool{}
	for _, inv := range rep.Invariants {
		checked[inv.Name] = inv.Checked && inv.Count == 0
	}
	for _, name := range []string{chaos.InvLostWrites, chaos.InvRSOver, chaos.InvWatchReliable, chaos.InvConvergence,
		chaos.InvLinearizable, chaos.InvWatchOrdered, chaos.InvWatchUnique, chaos.InvWatchResumable} {
		if !checked[name] {
			t.Errorf("invariant %s not checked and clean: %+v", name, rep.Invariants)
		}
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			t.Errorf("node %s left cordoned", n.Name)
		}
	}
	if len(nodes.Items) != 3 {
		t.Errorf("%d nodes at the end, want 3 (the deleted one registered again)", len(nodes.Items))
	}
	ns, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: provider.RunLabel})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		if n.DeletionTimestamp == nil {
			t.Errorf("namespace %s of the run left", n.Name)
		}
	}

	// The workload faults on the same cluster: a subtest of its own, so
	// that docs/testing.md can give it a tier of its own.
	t.Run("api-workload", func(t *testing.T) {
		start := time.Now()
		code, output, rep := runChaos(t, 8*time.Minute, "--provider", "external", "--kubeconfig", kc, "--scenario", "api-workload", "--gate", "ci")
		t.Logf("api-workload through external, without --allow-disruption, in %s:\n%s", time.Since(start).Round(time.Second), output)
		if code != 0 || rep == nil {
			t.Fatalf("api-workload: exit %d, want 0 (the ci gate passed)", code)
		}
		if !rep.Passed || len(rep.Faults) != 2 {
			t.Fatalf("api-workload: passed %v with %d faults, want passed, 2", rep.Passed, len(rep.Faults))
		}
		for _, f := range rep.Faults {
			if f.Error != "" || len(f.ReplicaSets) == 0 || !f.Detection.Observed() || !f.Recovery.Observed() {
				t.Errorf("fault %s: error %q ReplicaSets %v detection %+v recovery %+v, want ReplicaSets acted on, both measured",
					f.Name, f.Error, f.ReplicaSets, f.Detection, f.Recovery)
				continue
			}
			t.Logf("%s (%s of %d ReplicaSets): detection %s %.0f ms (%s), recovery %s %.0f ms (%s); %s", f.Name, f.Action, len(f.ReplicaSets),
				f.Detection.Kind, *f.Detection.MS, f.Detection.Note, f.Recovery.Kind, *f.Recovery.MS, f.Recovery.Note, f.Detail)
		}
		for _, inv := range rep.Invariants {
			if inv.Name == chaos.InvRSOver && (!inv.Checked || inv.Count != 0) {
				t.Errorf("api-workload: %s %+v, want checked and clean under the scaling", inv.Name, inv)
			}
		}
	})
}
