package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/preflight"
)

// newLoadCmd is the load generator on its own, against any cluster: the
// failure table's client row. Creates are by name and idempotent, so a
// load killed mid-run and run again converges to the same objects.
func newLoadCmd() *cobra.Command {
	var kubeconfig, kubeContext, providerName, profile, jobFile, traceFile, writeLog, resultFile string
	var keep bool
	var cleanTimeout time.Duration
	var flags loadgen.Job
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Run a load job (create ReplicaSets, wait Ready, ...) against a cluster",
		Long: `Run one load job against the cluster of --kubeconfig: the job of a bench
profile (--profile), a loadgen Job file (--job), or the flags below. Objects
are named <namePrefix><i> and created by name: an object that exists with
the job's label counts as created, and an error that is not the apiserver's
answer (a broken connection, a 5xx, a 429) is tried again. A load killed
mid-run and run again therefore converges to the same set of objects.

--provider external --kubeconfig PATH [--context NAME] runs it against a
cluster kstep does not run as "kstep bench --provider external" does: the
kubeconfig reduced to that context, the cluster's /version checked, and the
credentials asked (SelfSubjectAccessReview) whether they may do all the job
does, refused with exit 2 naming what they may not. Everything it creates
carries kstep.dev/run=load-<job name> (one job's objects are one set of
names, so a rerun adopts and removes what a killed run left), the watches
stamp the outside view (client.pod.added, .bound, .running,
client.endpoints.listed in --trace-file), and at the end, also on Ctrl-C,
it deletes what carries the label and waits until it is gone (at most
--clean-timeout). --keep leaves the objects; "kstep clean --kubeconfig PATH
--run load-<job name>" removes them later, and what a killed load left.

Exit status: 0 every object created and every pod Ready, 1 the job failed
(writes failed or pods not Ready in time), 2 bad flags, no cluster or
credentials that may not do what the job does, 3 it could not write its
result files or remove its objects.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			job, err := loadJob(cmd, profile, jobFile, flags)
			if err != nil {
				return usageError{err}
			}
			if err := checkLoadFlags(cmd.Flags(), providerName, kubeconfig, cleanTimeout); err != nil {
				return usageError{err}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			stderr := cmd.ErrOrStderr()
			opts := loadgen.Options{TraceFile: traceFile}
			var ext *externalLoad
			if providerName == provider.External {
				if ext, err = openExternal(ctx, kubeconfig, kubeContext, job, stderr); err != nil {
					return usageError{err}
				}
				opts.Client, opts.Labels, opts.Outside = ext.cs, ext.labels(), true
			} else {
				rc, err := restConfig(cmd.Context(), kubeconfig)
				if err != nil {
					return usageError{err}
				}
				if opts.Client, err = kubernetes.NewForConfig(rc); err != nil {
					return usageError{err}
				}
			}
			fmt.Fprintf(stderr, "kstep load: job %s: %d %s × %d replicas at %.1f/s into %v\n",
				job.Name, job.Count, job.Object.Kind, job.Object.Replicas, job.QPS, job.Namespaces)
			res, runErr := loadgen.Run(ctx, job, opts)
			if ext != nil {
				// Before the result files: a load that cannot write them
				// still removes what it created.
				if err := ext.finish(ctx, keep, cleanTimeout, stderr); err != nil {
					return harnessFailed{err}
				}
			}
			if res != nil {
				if writeLog != "" {
					wl := loadgen.WriteLogOf(res.Writes)
					if err := wl.WriteFile(writeLog); err != nil {
						return harnessFailed{err}
					}
				}
				if resultFile != "" {
					b, _ := json.MarshalIndent(res, "", "  ")
					if err := os.WriteFile(resultFile, append(b, '\n'), 0o644); err != nil {
						return harnessFailed{err}
					}
				}
				fmt.Fprintf(stderr, "kstep load: %d writes acknowledged, %d failed; %d of %d pods Ready\n",
					len(res.Writes), len(res.Errors), res.Ready, res.Expected)
			}
			if runErr != nil {
				return jobFailed{runErr}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (required)")
	f.StringVar(&providerName, "provider", "", `"external": a cluster kstep does not run (preflight, labels, outside view, cleanup at the end); default none: the cluster of --kubeconfig as it is`)
	f.StringVar(&kubeContext, "context", "", "with --provider external: the kubeconfig's context (default: its current context)")
	f.BoolVar(&keep, "keep", false, "with --provider external: leave the load's objects at the end (kstep clean removes them)")
	f.DurationVar(&cleanTimeout, "clean-timeout", 2*time.Minute, "with --provider external: how long to wait at the end for the load's objects to be gone")
	f.StringVar(&profile, "profile", "", "run this bench profile's job (a built-in name or a file)")
	f.StringVar(&jobFile, "job", "", "run this loadgen Job (YAML)")
	f.StringVar(&flags.Name, "name", "load", "job name (the label its objects carry)")
	f.IntVar(&flags.Count, "count", 10, "objects to create")
	f.Float64Var(&flags.QPS, "qps", 5, "creates per second")
	f.Int32Var(&flags.Object.Replicas, "replicas", 1, "replicas of each object")
	f.StringVar(&flags.Object.Kind, "kind", loadgen.KindReplicaSet, "ReplicaSet or Deployment")
	f.StringVar(&flags.Object.NamePrefix, "name-prefix", "", "object i is <prefix><i> (default: <name>-)")
	f.StringSliceVar(&flags.Namespaces, "namespace", []string{"load"}, "namespaces the objects go to, round-robin")
	f.StringVar(&traceFile, "trace-file", "", "append the client's step events (client.rs.sent, client.rs.acked, pod.ready.observed) here")
	f.StringVar(&writeLog, "write-log", "", "write every acknowledged write here as JSON lines")
	f.StringVar(&resultFile, "result-file", "", "write the run's result (errors, pods Ready) here as JSON")
	return cmd
}

// loadJob is the job the flags name: a profile's, a file's, or the flags'.
func loadJob(cmd *cobra.Command, profile, jobFile string, flags loadgen.Job) (*loadgen.Job, error) {
	if profile != "" && jobFile != "" {
		return nil, errors.New("--profile and --job name two jobs: give one")
	}
	var job *loadgen.Job
	switch {
	case profile != "":
		p, err := bench.LoadProfile(profile)
		if err != nil {
			return nil, err
		}
		job = &p.Job
	case jobFile != "":
		j, err := loadgen.Load(jobFile)
		if err != nil {
			return nil, err
		}
		job = j
	default:
		j := flags
		if j.Object.NamePrefix == "" {
			j.Object.NamePrefix = j.Name + "-"
		}
		j.Defaults()
		job = &j
	}
	if job.Object.NamePrefix == "" {
		job.Object.NamePrefix = job.Name + "-"
	}
	return job, job.Validate()
}

// checkLoadFlags refuses the flags that do not go together: --provider
// names external or nothing (kstep load runs no cluster), and --context,
// --keep and --clean-timeout only mean something with it.
func checkLoadFlags(f *pflag.FlagSet, providerName, kubeconfig string, cleanTimeout time.Duration) error {
	if kubeconfig == "" {
		return errors.New("--kubeconfig is required (the cluster to load)")
	}
	switch providerName {
	case "":
		for _, name := range []string{"context", "keep", "clean-timeout"} {
			if f.Changed(name) {
				return fmt.Errorf("--%s goes with --provider external", name)
			}
		}
	case provider.External:
		if cleanTimeout <= 0 {
			return fmt.Errorf("--clean-timeout %s: give a positive duration", cleanTimeout)
		}
	default:
		return fmt.Errorf("--provider %q: kstep load runs no cluster; give --provider external for a cluster kstep does not run, or no --provider", providerName)
	}
	return nil
}

// externalLoad is a load against a cluster kstep does not run, through
// the external provider: its reduced kubeconfig, its client, and the label
// everything the load creates carries.
type externalLoad struct {
	p          provider.Provider
	state      string
	cs         kubernetes.Interface
	kubeconfig string // the user's, for the clean command it prints
	label      string // the value of provider.RunLabel
}

// loadRunID is the run a load's objects belong to: one per job name, as
// the job's objects are one set of names whoever creates them.
func loadRunID(job *loadgen.Job) string { return provider.RunLabelValue("load-" + job.Name) }

func (l *externalLoad) labels() map[string]string {
	return map[string]string{provider.RunLabel: l.label}
}

// openExternal brings the external provider up for the load (the context
// alone, the cluster answering) and asks the apiserver whether the
// credentials may do all the job does (preflight.Check over preflight.Needs:
// a *preflight.PermissionError names what they may not). On an error nothing
// was created, and the reduced kubeconfig is gone.
func openExternal(ctx context.Context, kubeconfig, kubeContext string, job *loadgen.Job, log io.Writer) (*externalLoad, error) {
	state, err := os.MkdirTemp("", "kstep-load-")
	if err != nil {
		return nil, err
	}
	l := &externalLoad{state: state, kubeconfig: kubeconfig, label: loadRunID(job)}
	fail := func(err error) (*externalLoad, error) {
		if l.p != nil {
			_ = l.p.Purge()
		}
		os.RemoveAll(state)
		return nil, err
	}
	l.p, err = provider.New(ctx, provider.External, provider.Spec{StateDir: state, Kubeconfig: kubeconfig, Context: kubeContext, RunID: l.label, Log: log})
	if err != nil {
		return fail(err)
	}
	uctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = l.p.Up(uctx)
	cancel()
	if err != nil {
		return fail(err)
	}
	rc, err := restConfig(ctx, l.p.Kubeconfig())
	if err != nil {
		return fail(err)
	}
	if l.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return fail(err)
	}
	who := kubeconfig
	if raw, err := clientcmd.LoadFromFile(l.p.Kubeconfig()); err == nil {
		who += " (context " + raw.CurrentContext + ")"
	}
	needs := preflight.Needs(job)
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = preflight.Check(pctx, l.cs, who, needs)
	cancel()
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(log, "kstep load: cluster %s (external provider: kstep starts nothing); the credentials may do all the job needs (%d SelfSubjectAccessReviews); its objects carry %s=%s\n",
		rc.Host, len(needs), provider.RunLabel, l.label)
	return l, nil
}

// finish ends an external load. Unless keep, it deletes what carries the
// load's label and waits until it is gone, at most timeout (the provider's
// Down: external.Clean over the label), on a context of its own, so a
// load ended by Ctrl-C still cleans up. With keep it leaves the objects and
// says how to remove them. Either way the reduced kubeconfig goes.
func (l *externalLoad) finish(ctx context.Context, keep bool, timeout time.Duration, log io.Writer) error {
	defer os.RemoveAll(l.state)
	clean := fmt.Sprintf("kstep clean --kubeconfig %s --run %s", l.kubeconfig, l.label)
	if keep {
		fmt.Fprintf(log, "kstep load: --keep: the load's objects stay (%s=%s); %s removes them\n", provider.RunLabel, l.label, clean)
		return l.p.Purge()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := l.p.Down(cctx); err != nil {
		return fmt.Errorf("remove the load's objects (%s=%s): %w; %s removes what is left", provider.RunLabel, l.label, err, clean)
	}
	return nil
}
