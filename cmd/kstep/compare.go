package main

import (
	"fmt"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/results"
)

// errRegressed makes compare exit 1 without printing usage.
type errRegressed int

func (e errRegressed) Error() string { return fmt.Sprintf("%d step(s) regressed", int(e)) }

func newCompareCmd() *cobra.Command {
	var threshold float64
	cmd := &cobra.Command{
		Use:   "compare BASE NEW",
		Short: "Compare two runs step by step; exit 1 when a step regressed",
		Long: `Compare two runs (run directories or run.json files) step by step. A step
regresses when its p50 or p99 grew by more than --threshold percent and a
Mann–Whitney U test on the raw samples gives p < 0.05.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := results.ReadRun(args[0])
			if err != nil {
				return err
			}
			cur, err := results.ReadRun(args[1])
			if err != nil {
				return err
			}
			ds := results.Compare(base, cur, threshold)
			t := tablewriter.NewWriter(cmd.OutOrStdout())
			t.Header("step", "transition", "p50 base", "p50 new", "Δp50 %", "p99 base", "p99 new", "Δp99 %", "p", "regressed")
			n := 0
			for _, d := range ds {
				mark := ""
				if d.Regressed {
					n++
					mark = "YES: " + d.Reason
				}
				_ = t.Append([]string{d.Step, d.Name, f2(d.BaseP50), f2(d.NewP50), fmt.Sprintf("%+.1f", d.P50Pct),
					f2(d.BaseP99), f2(d.NewP99), fmt.Sprintf("%+.1f", d.P99Pct), fmt.Sprintf("%.3g", d.P), mark})
			}
			if err := t.Render(); err != nil {
				return err
			}
			if n > 0 {
				return errRegressed(n)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "no step regressed beyond", threshold, "%")
			return nil
		},
	}
	cmd.Flags().Float64Var(&threshold, "threshold", 10, "percent a p50 or p99 may grow before it counts")
	return cmd
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
