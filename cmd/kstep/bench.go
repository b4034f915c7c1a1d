package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/preflight"
	"github.com/kstep-dev/kstep/results"
)

func newBenchCmd() *cobra.Command {
	var profile, providerName, out, binary, kubeconfig, kubeContext string
	var noProgress bool
	var repeat int
	var pushgateway string
	var extra provider.Topology // only its *Args fields: appended to the profile's
	var hollowEvents, outsideView bool
	var actorProcs int
	var actorCPUs string
	var findMax bool
	var warmUpObjects int
	var warmUpDuration time.Duration
	fm := bench.DefaultFindMax()
	var ab bool
	var co results.CompareOptions
	var calibration string
	cmd := &cobra.Command{
		Use:   "bench [--ab OLD_BINARY NEW_BINARY]",
		Short: "Bring a cluster up, run a load profile, and report per-step latency",
		Long: `Bring a cluster up (--provider auto: in Docker containers when a Docker
daemon answers, else as processes), run a load profile (built in: quick,
nightly, scale, light, saturation; or a BenchProfile YAML file), tear the
cluster down, and
report every step's latency beside the documented time scales. The run
directory gets run.json, events.jsonl.gz, steps.csv, report.md and
report.html.

--provider external --kubeconfig PATH [--context NAME] runs the profile's
load against a cluster kstep does not run (kind, staging, a cloud cluster,
a kstep cluster brought up elsewhere): kstep starts nothing and ignores the
profile's cluster block; it checks that the cluster answers, records its
version and nodes, asks the apiserver (SelfSubjectAccessReview) whether the
credentials may do all the run does and refuses with exit 2 naming what
they may not, labels everything it creates kstep.dev/run=<run> and deletes
it at the end (also on Ctrl-C; "kstep clean" after a run that was killed).
The steps are then the ones kstep's own watches see, on its clock; the
others are reported not observable on this cluster. --outside-view (the
profile's outsideView: true) adds those rows to a run on process or docker,
beside the actors' own: what "kstep compare" sets beside an external run.

--find-max makes the run a capacity search on its one cluster: the
profile's object offered at a rising rate (from --find-max-start pods/s,
×--find-max-factor after each step that holds the SLO; each step
--find-max-step-duration or --find-max-step-pods pods, whichever comes
first, its pods deleted before the next), then bisection to
--find-max-precision, until the SLO (--slo-p99 of --slo-latency, from the
load generator's own watch; no disruption unless --slo-allow-disruption)
breaks. It prints the curve (offered, achieved, p99 per step) and the
answer: the pods/s achieved at the highest rate that held. With --repeat 2
the set table says how far apart the two answers are.

--repeat N (or the profile's repeat:) runs the load N times, each on a fresh
cluster, into <out>/run-01 ... run-NN with <out>/set.json: a set, what
"kstep compare" judges.

Exit status: 0 every run valid; 2 a run is invalid (a pod missed a step, a
trace lost events, a sample ended before it began) or a usage error; 3 the
harness failed (a cluster did not come up, nothing was measured; or a
--pushgateway push failed: the runs are written).

--ab OLD_BINARY NEW_BINARY --repeat N is the A/B a pull request wants:
N runs a side, each a full run of the profile on a fresh cluster whose
actors run that side's binary (the load generator and the analysis are
this kstep's), taken in the order A B B A A B ... so that a machine
whose speed drifts loads both sides alike. The runs go to <out>/A and
<out>/B (each a set), then the two sets are compared exactly as "kstep
compare <out>/A <out>/B" does, with its flags (--threshold, --alpha,
--min-shift-ms, --force, --calibration) and its exit codes: 0 no step
regressed, 1 a step regressed, 2 not comparable (too few runs, an
invalid or disrupted run) or a usage error; 3 as below, the harness
failed. Each binary's directory must hold what make build puts beside
it where the run needs it (kstep-pause and kstep-app for docker's
images, containerd and its tools for real nodes).

Every run also writes metrics.prom, its figures in the Prometheus text
format; --pushgateway pushes them after each run (job "kstep", grouped by
profile and provider).`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if ab {
				if len(args) != 2 {
					return fmt.Errorf("--ab takes two binaries, OLD and NEW: got %d argument(s)", len(args))
				}
				return nil
			}
			return cobra.NoArgs(cmd, args)
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			prof, err := bench.LoadProfile(profile)
			if err != nil {
				return usageError{err}
			}
			c := &prof.Cluster
			c.AppendArgs(extra)
			if cmd.Flags().Changed("hollow-events") {
				c.HollowEvents = &hollowEvents
			}
			if cmd.Flags().Changed("actor-procs") {
				c.ActorProcs = actorProcs
			}
			if cmd.Flags().Changed("actor-cpus") {
				c.ActorCPUs = actorCPUs
			}
			if cmd.Flags().Changed("outside-view") {
				prof.OutsideView = outsideView
			}
			if cmd.Flags().Changed("warm-up-objects") || cmd.Flags().Changed("warm-up-duration") {
				if findMax {
					return usageError{fmt.Errorf("--warm-up-objects and --warm-up-duration do not go with --find-max: a capacity search judges each step whole")}
				}
				w := prof.WarmUpOf()
				if cmd.Flags().Changed("warm-up-objects") {
					w.Objects = warmUpObjects
				}
				if cmd.Flags().Changed("warm-up-duration") {
					w.Duration.Duration = warmUpDuration
				}
				prof.WarmUp = &w
			}
			// The profile as the flags made it: a bad value is a usage
			// error before any cluster starts.
			if err := prof.Validate(); err != nil {
				return usageError{err}
			}
			n := max(prof.Repeat, 1)
			if cmd.Flags().Changed("repeat") {
				n = repeat
			}
			if n < 1 || n > bench.MaxRepeat {
				return usageError{fmt.Errorf("--repeat %d is out of range: 1 to %d runs", n, bench.MaxRepeat)}
			}
			if out == "" {
				name := strings.TrimSuffix(filepath.Base(prof.Name), filepath.Ext(prof.Name))
				if ab {
					name += "-ab"
				}
				out = filepath.Join("results", "runs", time.Now().Format("20060102-150405")+"-"+name)
			}
			for _, name := range compareFlagNames {
				if cmd.Flags().Changed(name) && !ab {
					return usageError{fmt.Errorf("--%s goes with --ab (kstep compare takes it for sets already run)", name)}
				}
			}
			if ab {
				switch {
				case findMax:
					return usageError{fmt.Errorf("--ab compares sets of the profile's runs; --find-max is a search of its own")}
				case providerName == provider.External:
					return usageError{fmt.Errorf("--ab runs each side's binary as the cluster's actors; --provider external runs no actor")}
				case binary != "":
					return usageError{fmt.Errorf("--ab names the binaries the actors run; --kstep-binary is for one")}
				}
				if err := validCompareOptions(co); err != nil {
					return err
				}
			}
			if (providerName == provider.External) != (kubeconfig != "") {
				return usageError{fmt.Errorf("--kubeconfig goes with --provider external, and --provider external needs it")}
			}
			if kubeContext != "" && kubeconfig == "" {
				return usageError{fmt.Errorf("--context needs --kubeconfig and --provider external")}
			}
			opts := bench.Options{Binary: binary, OutDir: out, Provider: providerName, Kubeconfig: kubeconfig, Context: kubeContext,
				Log: cmd.ErrOrStderr(), Version: version}
			for _, name := range []string{"find-max-start", "find-max-factor", "find-max-step-duration", "find-max-step-pods", "find-max-precision",
				"find-max-steps", "find-max-step-timeout", "slo-p99", "slo-latency", "slo-allow-disruption"} {
				if cmd.Flags().Changed(name) && !findMax {
					return usageError{fmt.Errorf("--%s goes with --find-max", name)}
				}
			}
			if findMax {
				if err := fm.Validate(); err != nil {
					return usageError{err}
				}
				opts.FindMax = &fm
			}
			if !noProgress && term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			w := cmd.OutOrStdout()
			// A push that fails costs the push, not the run: it is
			// reported and the command exits 3 after every run.
			var pushErr error
			push := func(_ string, r *results.Run) {
				if pushgateway == "" {
					return
				}
				if err := results.Push(ctx, pushgateway, r); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "kstep bench:", err)
					pushErr = err
					return
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "kstep bench: pushed run %s to %s\n", r.ID, pushgateway)
			}
			opts.OnRun = push
			if ab {
				if err := abBench(ctx, w, prof, opts, args, n, co, calibration); err != nil {
					return err
				}
				if pushErr != nil {
					return harnessFailed{fmt.Errorf("push: %w", pushErr)}
				}
				return nil
			}
			var runs []*results.Run
			if n == 1 {
				run, err := bench.Run(ctx, prof, opts)
				if err != nil {
					return benchFailed(err)
				}
				runs = []*results.Run{run}
				push(out, run)
				if err := results.Table(w, run); err != nil {
					return harnessFailed{err}
				}
				fmt.Fprintln(w, "report:", filepath.Join(out, "report.md"))
			} else {
				runs, err = bench.RunSet(ctx, prof, opts, n)
				if len(runs) > 0 {
					if terr := setTable(w, runs); terr != nil && err == nil {
						err = terr
					}
					fmt.Fprintln(w, "set:", out)
				}
				if err != nil {
					return benchFailed(err)
				}
			}
			var bad []string
			for i, r := range runs {
				if r.Disrupted {
					fmt.Fprintf(cmd.ErrOrStderr(), "kstep bench: run %d is disrupted (%d disruptions): compare refuses it unless --force\n", i+1, len(r.Disruptions))
				}
				if !r.Valid {
					bad = append(bad, fmt.Sprintf("run %d: %s", i+1, strings.Join(r.Invalid, "; ")))
				}
			}
			if len(bad) > 0 {
				return invalidRun{errors.New("invalid: " + strings.Join(bad, " | "))}
			}
			if pushErr != nil {
				return harnessFailed{fmt.Errorf("push: %w", pushErr)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&profile, "profile", "quick", "built-in profile (quick, nightly, scale, light, saturation) or a BenchProfile YAML file")
	f.StringVar(&providerName, "provider", provider.Auto, providerFlagUsage+`, or "external" (a cluster kstep does not run, with --kubeconfig: kstep starts nothing)`)
	f.StringVar(&out, "out", "", "run directory, or set directory with --repeat (default results/runs/<timestamp>-<profile>)")
	f.StringVar(&binary, "kstep-binary", "", "kstep binary the actors run (default: this one)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "with --provider external: the kubeconfig of the cluster to run against")
	f.StringVar(&kubeContext, "context", "", "with --provider external: the kubeconfig's context (default: its current context)")
	f.BoolVar(&noProgress, "no-progress", false, "no progress bars (they are off anyway when stderr is not a terminal)")
	f.StringVar(&pushgateway, "pushgateway", "", "push each run's metrics (metrics.prom) to the Prometheus Pushgateway at this URL, e.g. http://127.0.0.1:9091")
	f.IntVar(&repeat, "repeat", 1, "run the load this many times, each on a fresh cluster (default: the profile's repeat, else 1)")
	f.StringArrayVar(&extra.APIServerArgs, "apiserver-arg", nil, "extra flag for every apiserver, after the profile's (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringArrayVar(&extra.ControllerManagerArgs, "controller-manager-arg", nil, "extra flag for every controller-manager (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringArrayVar(&extra.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.BoolVar(&hollowEvents, "hollow-events", true, "the hollow kubelets write Events as real kubelets do; false measures the control plane without them (overrides the profile's cluster.hollowEvents; run.json records it)")
	f.StringVar(&actorCPUs, "actor-cpus", "", "pin every actor to these CPUs, a list like 1 or 2-3 (process: the actors' CPU affinity; docker: --cpuset-cpus; the load generator is not pinned) (overrides the profile's cluster.actorCPUs; run.json records it)")
	f.IntVar(&actorProcs, "actor-procs", 0, "every actor's GOMAXPROCS (overrides the profile's cluster.actorProcs; default: the host's CPUs shared among the busy actors, at least 1; run.json records it)")
	f.BoolVar(&outsideView, "outside-view", false, "the load generator's watches also stamp what is seen from outside the cluster, and the report gets the outside rows (overrides the profile's outsideView; always on with --provider external; run.json records it)")
	f.IntVar(&warmUpObjects, "warm-up-objects", 0, "leave the first N objects the load sends out of the rows (their pods still count for validity, throughput and costs; overrides the profile's warmUp.objects; default: the profile's, else none; run.json records it, and compare refuses sets that differ in it)")
	f.DurationVar(&warmUpDuration, "warm-up-duration", 0, "also leave out the objects sent within this of the load's first send (overrides the profile's warmUp.duration; 0: none)")
	f.BoolVar(&findMax, "find-max", false, "a capacity search instead of the profile's job: on one cluster, the profile's object offered at a rising rate (×--find-max-factor a step, each step --find-max-step-duration or --find-max-step-pods pods, its pods deleted before the next), then bisection, until the SLO breaks; reports the highest sustained pods/s and the curve")
	f.Float64Var(&fm.StartPodsPerS, "find-max-start", fm.StartPodsPerS, "with --find-max: the first step's offered pods/s")
	f.Float64Var(&fm.Factor, "find-max-factor", fm.Factor, "with --find-max: the rate's factor from a step that held the SLO to the next")
	f.DurationVar(&fm.StepDuration, "find-max-step-duration", fm.StepDuration, "with --find-max: a step offers rate × this many pods (at most --find-max-step-pods)")
	f.IntVar(&fm.StepPods, "find-max-step-pods", fm.StepPods, "with --find-max: the most pods a step offers")
	f.Float64Var(&fm.Precision, "find-max-precision", fm.Precision, "with --find-max: bisection ends when the breaking rate is within this fraction above the holding one")
	f.IntVar(&fm.MaxSteps, "find-max-steps", fm.MaxSteps, "with --find-max: the most steps the search runs")
	f.DurationVar(&fm.StepTimeout, "find-max-step-timeout", fm.StepTimeout, "with --find-max: how long a step waits for its pods to be Ready (one that does not make it breaks the SLO)")
	f.DurationVar(&fm.SLO.P99, "slo-p99", fm.SLO.P99, "with --find-max: the SLO's bound on the p99 of --slo-latency")
	f.StringVar(&fm.SLO.Of, "slo-latency", fm.SLO.Of, "with --find-max: the latency the SLO bounds, from the load generator's own watch: control-plane (client sent → pod seen bound) or e2e (client sent → pod seen Ready)")
	f.BoolVar(&fm.SLO.AllowDisruption, "slo-allow-disruption", false, "with --find-max: a step with a disruption (a leader Lease changing hands, a node leaving Ready) may still hold the SLO")
	f.BoolVar(&ab, "ab", false, "an interleaved A/B: the two arguments are the OLD and NEW kstep binaries, --repeat runs each in the order A B B A ..., into <out>/A and <out>/B, then compared as kstep compare does (its exit codes)")
	compareFlags(f, &co, &calibration)
	for _, name := range compareFlagNames {
		fl := f.Lookup(name)
		fl.Usage = "with --ab: " + fl.Usage + " (as kstep compare's)"
	}
	f.StringArrayVar(&extra.NodeArgs, "node-arg", nil, "extra flag for every real node (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringArrayVar(&extra.HollowArgs, "hollow-arg", nil, "extra flag for the hollow-nodes actor (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	return cmd
}

// benchFailed is a run that produced nothing: credentials that may not do
// what the run needs exit 2 (a usage error: other credentials fix it),
// anything else 3.
func benchFailed(err error) error {
	var perm *preflight.PermissionError
	if errors.As(err, &perm) {
		return usageError{err}
	}
	return harnessFailed{err}
}

// setTable prints one line per run and, per step, the median of the runs'
// p50 and p99 with their range and run-to-run CV: the spread between runs
// that compare judges.
func setTable(w io.Writer, runs []*results.Run) error {
	t := tablewriter.NewWriter(w)
	if runs[0].FindMax != nil {
		t.Header("run", "valid", "find-max pods/s", "offered pods/s", "bracketed", "steps")
	} else {
		t.Header("run", "valid", "disrupted", "pods", "pods/s", "e2e p50 ms", "e2e p99 ms")
	}
	for i, r := range runs {
		if fm := r.FindMax; fm != nil {
			_ = t.Append([]string{results.RunDirName(i + 1), fmt.Sprint(r.Valid), fmt.Sprintf("%.1f", fm.PodsPerS), fmt.Sprintf("%.1f", fm.OfferedPodsPerS),
				fmt.Sprint(fm.Bracketed), fmt.Sprint(len(fm.Steps))})
			continue
		}
		_ = t.Append([]string{results.RunDirName(i + 1), fmt.Sprint(r.Valid), fmt.Sprint(r.Disrupted), fmt.Sprint(r.Pods),
			fmt.Sprintf("%.1f", r.Throughput.PodsPerS), f2(r.EndToEnd.P50), f2(r.EndToEnd.P99)})
	}
	if spread := results.FindMaxSpread(runs); spread != "" {
		if err := t.Render(); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, spread)
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	return setStepTable(w, results.SetRows(&results.Set{Runs: runs}))
}

// setStepTable prints a set's steps across its runs: per step the median,
// range and run-to-run CV of the runs' p50 and p99.
func setStepTable(w io.Writer, rows []results.SetRow) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header(results.SetRowHeader()...)
	for _, r := range rows {
		_ = t.Append(results.SetRowCells(r))
	}
	return t.Render()
}
