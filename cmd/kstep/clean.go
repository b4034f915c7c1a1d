package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/external"
)

func newCleanCmd() *cobra.Command {
	var kubeconfig, kubeContext, run string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Delete what kstep runs left in a cluster (everything labelled " + provider.RunLabel + ")",
		Long: `Delete from the cluster of --kubeconfig (its --context, default the current
one) every Deployment, ReplicaSet, Service, pod and namespace that carries
the label ` + provider.RunLabel + ` (with --run, only that run's: run.json's
cluster.external.label, or its value; load-<job name> for a kstep load),
and nothing else: what a "kstep bench", "kstep chaos" or "kstep load"
--provider external that was killed (or a load run with --keep) left
behind. It waits until they are gone, or --timeout.

Exit status: 0 nothing labelled is left; 2 a usage error; 3 it could not
finish (the error says what is left).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return usageError{fmt.Errorf("--kubeconfig is required")}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			rc, err := external.RESTConfig(kubeconfig, kubeContext)
			if err != nil {
				return usageError{err}
			}
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return usageError{err}
			}
			sel := provider.RunLabel
			if run = strings.TrimPrefix(run, provider.RunLabel+"="); run != "" {
				sel += "=" + run
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			removed, err := external.Clean(ctx, cs, sel)
			w := cmd.OutOrStdout()
			if len(removed) > 0 {
				fmt.Fprintf(w, "kstep clean: deleted %s (label %s) from %s\n", removed, sel, rc.Host)
			}
			if err != nil {
				return harnessFailed{err}
			}
			if len(removed) == 0 {
				fmt.Fprintf(w, "kstep clean: nothing carries %s on %s\n", sel, rc.Host)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig of the cluster to clean")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig's context (default: its current context)")
	f.StringVar(&run, "run", "", "only this run's objects (the label's value); default every run's")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for what was deleted to be gone")
	return cmd
}
