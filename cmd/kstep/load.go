package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/loadgen"
)

// newLoadCmd is the load generator on its own, against any cluster: the
// failure table's client row. Creates are by name and idempotent, so a
// load killed mid-run and run again converges to the same objects.
func newLoadCmd() *cobra.Command {
	var kubeconfig, profile, jobFile, traceFile, writeLog, resultFile string
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

Exit status: 0 every object created and every pod Ready, 1 the job failed
(writes failed or pods not Ready in time), 2 bad flags or no cluster, 3 it
could not write its result files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			job, err := loadJob(cmd, profile, jobFile, flags)
			if err != nil {
				return usageError{err}
			}
			rc, err := restConfig(cmd.Context(), kubeconfig)
			if err != nil {
				return usageError{err}
			}
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return usageError{err}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "kstep load: job %s: %d %s × %d replicas at %.1f/s into %v\n",
				job.Name, job.Count, job.Object.Kind, job.Object.Replicas, job.QPS, job.Namespaces)
			res, runErr := loadgen.Run(ctx, job, loadgen.Options{Client: cs, TraceFile: traceFile})
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
