package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/scheduler"
)

func newSchedulerCmd() *cobra.Command { return schedulerCmd(scheduler.Run) }

// schedulerCmd builds the command around run, so tests can see the Options
// the flags produce.
func schedulerCmd(run func(context.Context, scheduler.Options) error) *cobra.Command {
	opts := scheduler.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the scheduler until SIGINT or SIGTERM",
		Long: `Run kstep's scheduler: watch pending pods, choose a node for each (filters,
scores), and bind them through pods/binding. Several may run side by side:
with --leader-elect (the default) only the holder of the Lease
kube-system/kstep-scheduler schedules, and a standby takes over when it stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if err := run(ctx, opts); err != nil {
				return fmt.Errorf("scheduler %s: %w", opts.Identity, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kubeconfig, "kubeconfig", opts.Kubeconfig, "kubeconfig of the apiserver (required)")
	f.StringVar(&opts.Identity, "name", opts.Identity, "identity of this scheduler in the Lease, logs and events")
	f.StringVar(&opts.ConfigFile, "config", opts.ConfigFile, "KubeSchedulerConfiguration YAML: profiles, plugins enabled/disabled, score weights (default: one default-scheduler profile)")
	f.StringVar(&opts.TraceFile, "trace-file", opts.TraceFile, "append step events (pod.observed.scheduler, pod.scheduled) as JSON lines to this file")
	f.IntVar(&opts.Parallelism, "parallelism", opts.Parallelism, "goroutines filtering and scoring nodes (default: the config's, 16)")
	f.BoolVar(&opts.LeaderElect, "leader-elect", opts.LeaderElect, "schedule only while holding the Lease kube-system/"+scheduler.LeaseName)
	f.DurationVar(&opts.LeaseDuration, "leader-elect-lease-duration", opts.LeaseDuration, "how long a lease is valid without renewal")
	f.DurationVar(&opts.RenewDeadline, "leader-elect-renew-deadline", opts.RenewDeadline, "how long the leader retries a renewal before it stops scheduling")
	f.DurationVar(&opts.RetryPeriod, "leader-elect-retry-period", opts.RetryPeriod, "interval between attempts to acquire or renew the lease")
	f.StringVar(&opts.MetricsListen, "metrics-listen", opts.MetricsListen, "host:port serving /metrics (Prometheus), /healthz and /debug/pprof (default: off)")
	opsTLSFlags(f, &opts.MetricsTLS)
	f.Float32Var(&opts.QPS, "kube-api-qps", opts.QPS, "client-side request rate limit to the apiserver")
	f.IntVar(&opts.Burst, "kube-api-burst", opts.Burst, "client-side request burst to the apiserver")
	f.DurationVar(&opts.BindDelay, "failpoint-bind-delay", 0, "testing only: every binding waits this long before its call (step ⑤ grows by it)")
	_ = f.MarkHidden("failpoint-bind-delay")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}
