package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/provider"
)

func newDownCmd() *cobra.Command {
	cfg := provider.Spec{StopGrace: 10 * time.Second}
	var purge bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster recorded in a state directory",
		Long: `Stop the cluster that "kstep up" recorded in the state directory, with
whichever provider started it: the apiservers' clients, then apiservers,
then etcd members, each with SIGTERM and SIGKILL after a grace period. A
docker cluster's containers, network and volumes are removed. Logs stay
unless --purge is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.StateDir == "" {
				return errors.New("no --state-dir given and no home directory to default to")
			}
			p, err := provider.Open(cfg)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			running := 0
			for _, a := range p.Actors() {
				if a.Running() {
					running++
				}
			}
			if running == 0 {
				fmt.Fprintf(stderr, "kstep: no running cluster recorded in %s\n", p.StateDir())
			}
			// Down also forgets a recorded cluster whose actors are all gone.
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*(2*cfg.StopGrace+15*time.Second))
			defer cancel()
			if err := p.Down(ctx); err != nil {
				return err
			}
			if running > 0 {
				fmt.Fprintf(stderr, "kstep: stopped %d actor(s) of the cluster in %s\n", running, p.StateDir())
			}
			if purge {
				if err := p.Purge(); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "kstep: purged %s\n", p.StateDir())
			}
			return nil
		},
	}
	stateDirFlag(cmd, &cfg.StateDir)
	cmd.Flags().BoolVar(&purge, "purge", false, "also delete the state directory's data, logs and kubeconfig")
	cmd.Flags().DurationVar(&cfg.StopGrace, "stop-grace", cfg.StopGrace, "how long to wait after SIGTERM before SIGKILL")
	return cmd
}
