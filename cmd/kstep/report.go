package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/results"
)

func newReportCmd() *cobra.Command {
	var pushgateway string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR | SET_DIR",
		Short: "Re-render a run's step table, report.md, report.html and metrics.prom from its run.json, or a set's report",
		Long: `Re-render a run's step table, report.md, report.html and metrics.prom
(its figures in the Prometheus text format) from its run.json. Given a set
directory (kstep bench --repeat N: set.json), re-render the set's table,
set.md, set.html and set.json's rows from its runs' run.json: per step the
median, range and run-to-run coefficient of variation of the runs' p50 and
p99. With
--pushgateway, push the same metrics to a Prometheus Pushgateway under
job="kstep", grouped by the run's profile and provider: the push replaces
the last run of that profile and provider.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if m, err := results.ReadSetManifest(args[0]); err == nil {
				if pushgateway != "" {
					return usageError{fmt.Errorf("--pushgateway takes a run directory: a set's runs were pushed one by one")}
				}
				return reportSet(cmd, args[0], m)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return usageError{err}
			}
			run, err := results.ReadRun(args[0])
			if err != nil {
				return usageError{err}
			}
			if err := results.WriteRun(args[0], run); err != nil {
				return harnessFailed{err}
			}
			if err := results.Table(cmd.OutOrStdout(), run); err != nil {
				return harnessFailed{err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "report:", filepath.Join(args[0], "report.md"))
			// After rendering: a gateway that is down costs the push, not
			// the report.
			if pushgateway != "" {
				if err := results.Push(cmd.Context(), pushgateway, run); err != nil {
					return harnessFailed{err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pushed: %s (job %s, profile %q, provider %q)\n", pushgateway, results.Job, run.Profile, run.Provider)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&pushgateway, "pushgateway", "", "push the run's metrics to the Prometheus Pushgateway at this URL (e.g. http://127.0.0.1:9091)")
	return cmd
}

// reportSet re-renders a set's report from its runs and prints its table.
func reportSet(cmd *cobra.Command, dir string, m *results.SetManifest) error {
	s, err := results.ReadSet(dir)
	if err != nil {
		return usageError{err}
	}
	if err := results.WriteSetReport(dir, m, s); err != nil {
		return harnessFailed{err}
	}
	if err := setTable(cmd.OutOrStdout(), s.Runs); err != nil {
		return harnessFailed{err}
	}
	fmt.Fprintln(cmd.OutOrStdout(), "report:", filepath.Join(dir, results.SetMarkdownFile))
	return nil
}
