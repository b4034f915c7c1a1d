package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/chaos"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// The exit codes of kstep chaos.
const (
	chaosPassed    = 0
	chaosGateFail  = 1
	chaosCouldNot  = exitHarness
	chaosUsage     = exitInvalid
	scenarioSuite  = "all"
	chaosRunPrefix = "chaos-"
)

func newChaosCmd() *cobra.Command {
	var scenario, gate, providerName, out, binary string
	var kubeconfig, kubeContext string
	var list, allowDisruption bool
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Break a cluster under load, time its recovery, check that nothing is lost",
		Long: `Bring a cluster up (--provider auto: in Docker containers when a Docker
daemon answers, else as processes; every fault works on both), run a
scenario's background load, inject its faults (kill, stop, pause, restart,
partition, isolate) at the etcd leader, an
apiserver, the controller-manager or scheduler leader, a kubelet, a node's
containerd or a whole node — resolved when the fault fires — and measure
each fault's detection and recovery. Then check the invariants (no
acknowledged write lost, no ReplicaSet over its replicas, no pod bound
twice, equal etcd hashes, convergence; linearizability of consistent GETs,
LISTs and compare-and-set updates by porcupine; the watch guarantees:
ordered, unique, reliable against etcd's history, bookmarkable,
resumable) and evaluate the gate.

--provider external --kubeconfig PATH [--context NAME] runs against a
cluster kstep does not run, through its API only: the API-level faults
(drain: cordon and evict a node's pods through policy/v1 Eviction,
honouring PodDisruptionBudgets, uncordoned afterwards; delete-node;
delete-pod of a controller-manager or scheduler Lease holder that runs as
a pod) need --allow-disruption there; kill-pods (the load's pods deleted
at a rate) and scale (the load's ReplicaSets or Deployments scaled and
back) touch only what kstep created and need no flag. Faults that need the
cluster's processes or network (kill, stop, pause, restart, partition,
isolate, link, fill, failpoint) are refused with exit 2 before anything
starts, and so is a run whose credentials may not do what the scenario
needs (each missing permission named). The API-level faults run on every
provider.

--scenario is a built-in scenario, a Scenario YAML file, or "all" (every
built-in one; those needing real nodes are skipped where real nodes cannot
run). --gate is "default" (strict), "ci" (generous times, same invariants)
or a Gate YAML file. The run directory gets chaos.json, chaos.md and
chaos.html, the actors' traces and logs.

Exit status: 0 the gate passed, 1 it failed, 2 a usage error (a bad flag,
scenario or gate file, a scenario --provider external refuses, or
credentials that may not do what it needs), 3 the run could not complete (before this release
that was 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				for _, n := range chaos.Builtin() {
					fmt.Fprintln(cmd.OutOrStdout(), n)
				}
				return nil
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			code := func() int {
				g, err := chaos.LoadGate(gate)
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos:", err)
					return chaosUsage
				}
				pname, err := provider.Resolve(ctx, providerName, cmd.ErrOrStderr())
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos:", err)
					return chaosCouldNot
				}
				if (pname == provider.External) != (kubeconfig != "") {
					fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos: --kubeconfig goes with --provider external, and --provider external needs it")
					return chaosUsage
				}
				if kubeContext != "" && kubeconfig == "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos: --context needs --kubeconfig and --provider external")
					return chaosUsage
				}
				names := []string{scenario}
				if scenario == scenarioSuite {
					names = chaos.Builtin()
				}
				if out == "" {
					out = filepath.Join("results", "runs", time.Now().Format("20060102-150405")+"-"+chaosRunPrefix+runName(scenario))
				}
				worst := chaosPassed
				var summary []string
				for _, name := range names {
					sc, err := chaos.Load(name)
					if err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos:", err)
						return chaosUsage
					}
					if pname == provider.External {
						// Refused before anything starts: faults that need
						// the cluster's processes or network, and
						// disruption not allowed.
						if err := chaos.CheckExternal(sc, allowDisruption); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "kstep chaos: scenario %s cannot run on --provider external:\n%v\n", sc.Name, err)
							return chaosUsage
						}
					}
					dir := out
					if len(names) > 1 {
						dir = filepath.Join(out, sc.Name)
					}
					if sc.Cluster.RealNodes > 0 && len(names) > 1 {
						if err := provider.CanRunRealNodes(pname, provider.Spec{Topology: sc.Cluster, Binary: binary}); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "kstep chaos: skipping %s: %v\n", sc.Name, err)
							summary = append(summary, fmt.Sprintf("| %s | skipped: %s |", sc.Name, err))
							continue
						}
					}
					c, line := runScenario(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), sc, g, chaos.Options{
						OutDir: dir, Binary: binary, Provider: pname, Log: cmd.ErrOrStderr(),
						Kubeconfig: kubeconfig, Context: kubeContext, AllowDisruption: allowDisruption})
					summary = append(summary, fmt.Sprintf("| %s | %s |", sc.Name, line))
					worst = max(worst, c)
					if ctx.Err() != nil {
						break
					}
				}
				if len(names) > 1 {
					md := "| scenario | verdict |\n|---|---|\n" + strings.Join(summary, "\n") + "\n"
					if err := os.WriteFile(filepath.Join(out, "suite.md"), []byte(md), 0o644); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "kstep chaos:", err)
					}
					fmt.Fprint(cmd.OutOrStdout(), "\n"+md)
				}
				return worst
			}()
			if code != chaosPassed {
				os.Exit(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenario, "scenario", "smoke", `built-in scenario, Scenario YAML file, or "all"`)
	f.StringVar(&gate, "gate", "default", `gate: "default", "ci", or a Gate YAML file`)
	f.StringVar(&providerName, "provider", provider.Auto, providerFlagUsage+`, or "external" (a cluster kstep does not run, with --kubeconfig: API-level faults only)`)
	f.StringVar(&kubeconfig, "kubeconfig", "", "with --provider external: the kubeconfig of the cluster to run against")
	f.StringVar(&kubeContext, "context", "", "with --provider external: the kubeconfig's context (default: its current context)")
	f.BoolVar(&allowDisruption, "allow-disruption", false, "with --provider external: let API-level faults (drain, delete-node, delete-pod) disrupt what kstep did not create")
	f.StringVar(&out, "out", "", "run directory (default results/runs/<timestamp>-chaos-<scenario>)")
	f.StringVar(&binary, "kstep-binary", "", "kstep binary the actors run (default: this one)")
	f.BoolVar(&list, "list", false, "list the built-in scenarios and exit")
	return cmd
}

// runScenario runs one scenario and prints its section; it returns the
// exit code and a one-line verdict.
func runScenario(ctx context.Context, stdout, stderr io.Writer, sc *chaos.Scenario, g *chaos.Gate, opts chaos.Options) (int, string) {
	opts.Scenario, opts.Gate = sc, g
	rep, err := chaos.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "kstep chaos:", err)
		if errors.Is(err, chaos.ErrNeedsPermission) {
			return chaosUsage, err.Error()
		}
		if errors.Is(err, chaos.ErrCouldNotRun) {
			return chaosCouldNot, "could not run: " + err.Error()
		}
		return chaosCouldNot, err.Error()
	}
	fmt.Fprint(stdout, chaos.Markdown(rep))
	fmt.Fprintln(stdout, "report:", filepath.Join(opts.OutDir, "chaos.md"))
	if rep.Passed {
		return chaosPassed, "gate " + g.Name + " passed"
	}
	failed := chaos.Failed(rep.Verdicts)
	fmt.Fprintln(stderr, "kstep chaos: gate "+g.Name+" FAILED: "+strings.Join(failed, "; "))
	return chaosGateFail, "gate " + g.Name + " FAILED: " + strings.Join(failed, "; ")
}

// runName is a directory-safe name for a scenario argument.
func runName(s string) string {
	return strings.TrimSuffix(filepath.Base(s), filepath.Ext(s))
}
