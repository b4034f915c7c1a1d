package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Re-render a run's step table, report.md and report.html from its run.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, err := results.ReadRun(args[0])
			if err != nil {
				return err
			}
			if err := results.WriteRun(args[0], run); err != nil {
				return err
			}
			if err := results.Table(cmd.OutOrStdout(), run); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "report:", filepath.Join(args[0], "report.md"))
			return nil
		},
	}
}
