package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// newSuperviseCmd is the supervisor a detached, supervised cluster leaves
// behind (kstep up -d on the process provider starts it; kstep down stops
// it first). It is also usable by hand on any recorded cluster.
func newSuperviseCmd() *cobra.Command {
	cfg := provider.Spec{StopGrace: 10 * time.Second}
	policy := provider.DefaultRestart
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Keep a recorded cluster's actors running (Restart=always with backoff)",
		Long: `Start every actor of the cluster recorded in the state directory that is not
running, after a backoff that doubles with every restart that does not
last (systemd's Restart=always). It runs until SIGTERM or until the
cluster is gone. "kstep up -d" on the process provider leaves one behind
and "kstep down" stops it first; on docker the containers' restart policy
does the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.StateDir == "" {
				return errors.New("no --state-dir given and no home directory to default to")
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			p, err := provider.Open(cfg)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "kstep: supervising the %s cluster in %s (backoff %v doubling to %v)\n", p.Name(), p.StateDir(), policy.Initial, policy.Max)
			err = provider.Supervise(ctx, p, policy, stderr)
			if errors.Is(err, provider.ErrNoCluster) {
				fmt.Fprintln(stderr, "kstep: the cluster is gone; the supervisor ends")
				return nil
			}
			return err
		},
	}
	stateDirFlag(cmd, &cfg.StateDir)
	f := cmd.Flags()
	f.DurationVar(&policy.Initial, "backoff-initial", policy.Initial, "wait before the first restart of an actor that died")
	f.DurationVar(&policy.Max, "backoff-max", policy.Max, "longest wait between restarts")
	f.DurationVar(&policy.Stable, "backoff-reset", policy.Stable, "an actor running this long has its backoff reset")
	f.DurationVar(&cfg.ReadyTimeout, "ready-timeout", time.Minute, "how long a restarted actor may take to be ready")
	return cmd
}
