package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/results"
)

func newCalibrateCmd() *cobra.Command {
	var (
		o      results.CalibrateOptions
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "calibrate SET",
		Short: "Measure each step's run-to-run noise and the smallest shift compare can see, from 10 or more runs of one build",
		Long: `Measure, from SET (at least 10 runs of one build: kstep bench --repeat 10 or
more), each step's run-to-run noise and its minimum detectable effect, and
write them to a calibration file that kstep compare --calibration reads.

Noise: the coefficient of variation across runs of each run's p50 and p99
(standard deviation over mean) and its robust form (1.4826 · MAD over the
median). Minimum detectable effect: the smallest slowdown, in percent,
that kstep compare with --runs-per-side runs a side flags in 80 % of
trials, found by resampling these runs (each trial splits the step's runs
at random into two groups, slows the second by the shift and judges it as
compare does: the family's critical p, measured on these runs over every
step's p50 and p99, and --threshold and --min-shift-ms). The same runs and
--seed give the same file. "none" means no shift up to +1000 % is flagged:
at that many runs a side the family of tests leaves the step nothing it
could flag.

Exit codes:
  0  written
  2  fewer than 10 runs, runs not measured alike or not healthy, unreadable
     input or a usage error
  3  could not write the file`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Threshold < 0 || o.Alpha <= 0 || o.Alpha >= 1 {
				return usageError{fmt.Errorf("calibrate: --threshold must be ≥ 0 and --alpha in (0, 1)")}
			}
			s, err := results.ReadSet(args[0])
			if err != nil {
				return usageError{err}
			}
			cal, err := results.Calibrate(s, o)
			if err != nil {
				return usageError{err}
			}
			if out == "" {
				out = filepath.Join(args[0], "calibration.json")
			}
			if err := results.WriteCalibration(out, cal); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(cal)
			}
			if err := printCalibration(w, cal); err != nil {
				return err
			}
			fmt.Fprintln(w, "calibration:", out)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.RunsPerSide, "runs-per-side", results.DefaultCalibrationRunsPerSide, "the runs a side of the comparisons the minimum detectable effects are for")
	cmd.Flags().IntVar(&o.Trials, "trials", results.DefaultCalibrationTrials, "resampled trials per shift")
	cmd.Flags().Uint64Var(&o.Seed, "seed", results.DefaultCalibrationSeed, "seed of the resampling")
	cmd.Flags().Float64Var(&o.Threshold, "threshold", results.DefaultThreshold, "compare's --threshold the effects are for")
	cmd.Flags().Float64Var(&o.MinShiftMS, "min-shift-ms", results.DefaultMinShiftMS, "compare's --min-shift-ms the effects are for")
	cmd.Flags().Float64Var(&o.Alpha, "alpha", results.DefaultAlpha, "compare's --alpha the effects are for")
	cmd.Flags().StringVar(&out, "out", "", "the calibration file (default SET/calibration.json)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calibration as JSON instead of the table")
	return cmd
}

// printCalibration is the human form of a calibration: a row per step.
func printCalibration(w io.Writer, c *results.Calibration) error {
	fmt.Fprintf(w, "%s: %d runs of %s (%s, %s); for compare with %d runs a side, threshold %g %%, min shift %g ms, alpha %g\n",
		c.Set, c.Runs, c.Version, c.Profile, c.Provider, c.RunsPerSide, c.Threshold, c.MinShiftMS, c.Alpha)
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("step", "transition", "nodes", "runs", "p50 ms", "p50 CV % (robust)", "p50 MDE %", "p99 ms", "p99 CV % (robust)", "p99 MDE %", "sees the threshold")
	for _, r := range c.Rows {
		sees := "yes"
		if m := r.MDE(); m > c.Threshold {
			sees = "no: cannot see less than " + mdePct(m)
		}
		if err := t.Append([]string{r.Step, r.Name, r.Nodes, fmt.Sprint(r.Runs),
			f2(r.P50.MedianMS), fmt.Sprintf("%.1f (%.1f)", r.P50.CVPct, r.P50.RobustCVPct), mdeOf(r.P50.MDEPct),
			f2(r.P99.MedianMS), fmt.Sprintf("%.1f (%.1f)", r.P99.CVPct, r.P99.RobustCVPct), mdeOf(r.P99.MDEPct), sees}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, c.Method)
	return nil
}

func mdeOf(m *float64) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f", *m)
}

func mdePct(m float64) string {
	if m > 1000 {
		return "any shift up to +1000 %"
	}
	return fmt.Sprintf("%.0f %%", m)
}
