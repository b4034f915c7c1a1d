package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kstep-dev/kstep/results"
)

func newCompareCmd() *cobra.Command {
	var (
		o           results.CompareOptions
		asJSON      bool
		calibration string
	)
	cmd := &cobra.Command{
		Use:   "compare BASE NEW",
		Short: "Compare two sets of runs step by step; exit 1 when a step regressed",
		Long: `Compare two sets of runs step by step. BASE and NEW are each a set
directory (kstep bench --repeat N: set.json and run-01..), a directory of run
directories, or one run directory or run.json (a set of one).

Each run gives each step one p50 and one p99. A step regresses when, over
those per-run values, a two-sided Mann–Whitney U test (exact for up to 40
runs in all) gives p < --alpha once adjusted for every step's p50 and p99
together, and the Hodges–Lehmann shift (the median of every difference
new − base, in percent of the base median) exceeds --threshold, on p50 or
on p99. The adjustment (the column's p in brackets) is Westfall–Young's
step-down min-P over relabellings of the runs: two sets of one build exit 1
with probability at most --alpha, however many steps they have, and steps
that move together in a run (a slow cluster is slow everywhere) cost less
than independent ones would. The interval beside each shift is the
distribution-free one that inverts the test (about 95 % at the default
alpha). The mirror image is reported as an improvement. Judging between
runs, not between pods, is the point: two runs of one build differ by more
than their pods' samples say.

Beside each side's median, the row's run-to-run coefficient of variation
on each side (CV % base/new: the standard deviation of the runs' values
over their mean), the noise the shift is judged against.

The smallest p that n and m runs allow is 2/C(n+m, n): at --alpha 0.05 that
takes at least 4 runs a side, and 5 give the test some power. Sets that
were not measured alike are refused: a different profile, provider or
topology, different settings in which the cluster is not as kstep up
starts it (run.json's cluster.not_as_up, the report's header), an invalid
or disrupted run, or too few runs. --force compares
them anyway, with warnings (and no verdicts when the runs are too few).
Extra actor flags (the topology's apiserverArgs, schedulerArgs, ...) and
how the actors' processes run (actorProcs, actorCPUs) are how builds are
varied: they are warnings, not refusals. A setting of the topology that
not_as_up also lists is judged once, by the topology's rule.

One difference of provider is compared, the cross view: runs on --provider
external (only what kstep's own watches see) against runs of the same
profile on a provider that runs the cluster with the outside view (the
profile's outsideView: true). Their topologies are not compared, only the
rows both have are judged (①'s client row, the outside rows, end to end),
and every row left out is listed with the reason (a stamp not observable
on the external cluster, ...). A cross view whose other side ran without
the outside view is refused, and so are two sides with no row in common;
--force lifts neither.

--calibration FILE (kstep calibrate of 10 or more runs of one build) says,
on each ok step whose minimum detectable effect at these runs a side
exceeds --threshold, "cannot see less than X % here" instead of a silent
ok.

Exit codes:
  0  no step regressed
  1  a step regressed
  2  not comparable (a refusal, too few runs), unreadable input, or a usage error`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validCompareOptions(o); err != nil {
				return err
			}
			base, err := results.ReadSet(args[0])
			if err != nil {
				return usageError{err}
			}
			cur, err := results.ReadSet(args[1])
			if err != nil {
				return usageError{err}
			}
			return judge(cmd.OutOrStdout(), base, cur, o, calibration, asJSON)
		},
	}
	compareFlags(cmd.Flags(), &o, &calibration)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON instead of the table")
	return cmd
}

// compareFlagNames are the flags compareFlags binds.
var compareFlagNames = []string{"threshold", "alpha", "min-shift-ms", "force", "calibration"}

// compareFlags binds the flags of a comparison's method (compareFlagNames),
// what `kstep compare` and `kstep bench --ab` share.
func compareFlags(f *pflag.FlagSet, o *results.CompareOptions, calibration *string) {
	f.Float64Var(&o.Threshold, "threshold", results.DefaultThreshold, "percent a p50 or p99 may shift before it counts")
	f.Float64Var(&o.MinShiftMS, "min-shift-ms", results.DefaultMinShiftMS, "the smallest shift, in ms, that counts besides --threshold (negative: none)")
	f.Float64Var(&o.Alpha, "alpha", results.DefaultAlpha, "significance level of the two-sided test")
	f.BoolVar(&o.Force, "force", false, "compare sets that would be refused (the refusals become warnings)")
	f.StringVar(calibration, "calibration", "", "a calibration file (kstep calibrate): an ok step that cannot see --threshold says the smallest shift it can")
}

// validCompareOptions is a usage error for options no comparison takes.
func validCompareOptions(o results.CompareOptions) error {
	if o.Threshold < 0 || o.Alpha < 0 || o.Alpha >= 1 {
		return usageError{fmt.Errorf("compare: --threshold must be ≥ 0 and --alpha in (0, 1)")}
	}
	return nil
}

// judge compares base and cur, prints the comparison to w (as JSON with
// asJSON) and returns compare's verdict as its exit: nil (0) when no step
// regressed, jobFailed (1) when one did, usageError (2) when the sets are
// not comparable or the calibration file cannot be read.
func judge(w io.Writer, base, cur *results.Set, o results.CompareOptions, calibration string, asJSON bool) error {
	c := results.CompareSets(base, cur, o)
	if calibration != "" {
		cal, err := results.ReadCalibration(calibration)
		if err != nil {
			return usageError{err}
		}
		c.ApplyCalibration(cal)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c); err != nil {
			return err
		}
	} else if err := printComparison(w, c); err != nil {
		return err
	}
	if len(c.Refused) > 0 {
		return usageError{fmt.Errorf("compare: not comparable: %s", strings.Join(c.Refused, "; "))}
	}
	if r := c.Regressions(); len(r) > 0 {
		var keys []string
		for _, d := range r {
			keys = append(keys, d.Key)
		}
		return jobFailed{fmt.Errorf("compare: %d step(s) regressed: %s", len(r), strings.Join(keys, ", "))}
	}
	return nil
}

// printComparison is the human form of c: the refusals, or a table per
// step, the steps on one side only and the warnings.
func printComparison(w io.Writer, c *results.Comparison) error {
	fmt.Fprintf(w, "base: %d run(s), new: %d run(s); threshold %g %%, alpha %g\n", c.BaseRuns, c.NewRuns, c.Threshold, c.Alpha)
	if len(c.Refused) > 0 {
		fmt.Fprintln(w, "not comparable:")
		for _, r := range c.Refused {
			fmt.Fprintln(w, "  -", r)
		}
		if c.Unforced {
			fmt.Fprintln(w, "(--force cannot compare these: they have nothing alike to compare)")
		} else {
			fmt.Fprintln(w, "(--force compares them anyway)")
		}
		printLeftOut(w, c)
		return nil
	}
	if len(c.Deltas) > 0 {
		t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
		t.Header("step", "transition", "nodes", "runs", "p50 base", "p50 new", "p50 CV % b/n", "Δp50 % [CI]", "p (adj)", "p99 base", "p99 new", "p99 CV % b/n", "Δp99 % [CI]", "p (adj)", "verdict")
		for _, d := range c.Deltas {
			verdict := d.Verdict
			if d.Reason != "" && d.Verdict != results.VerdictInconclusive {
				verdict += ": " + d.Reason
			}
			if d.CannotSee != "" {
				verdict += ": " + d.CannotSee
			}
			if err := t.Append([]string{d.Step, d.Name, d.Nodes, fmt.Sprintf("%d/%d", d.BaseN, d.NewN),
				f2(d.BaseP50), f2(d.NewP50), cvPair(d.BaseP50CVPct, d.BaseN, d.NewP50CVPct, d.NewN), shift(d.P50), pAdj(d.P50),
				f2(d.BaseP99), f2(d.NewP99), cvPair(d.BaseP99CVPct, d.BaseN, d.NewP99CVPct, d.NewN), shift(d.P99), pAdj(d.P99), verdict}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w, c.Family.Method())
	}
	printLeftOut(w, c)
	for _, x := range c.Warnings {
		fmt.Fprintln(w, "warning:", x)
	}
	switch n := len(c.Regressions()); {
	case !c.Concluded:
		fmt.Fprintln(w, "no verdict: too few runs for the test to reach alpha")
	case n > 0:
		fmt.Fprintf(w, "%d step(s) regressed beyond %g %% at p < %g\n", n, c.Threshold, c.Alpha)
	default:
		fmt.Fprintf(w, "no step regressed beyond %g %% at p < %g\n", c.Threshold, c.Alpha)
	}
	return nil
}

// printLeftOut lists the rows measured on one side only, each with why the
// other side has none.
func printLeftOut(w io.Writer, c *results.Comparison) {
	if len(c.LeftOut) == 0 {
		return
	}
	fmt.Fprintln(w, "rows left out (measured on one side only, not compared):")
	for _, l := range c.LeftOut {
		fmt.Fprintf(w, "  - %s %s [%s], only in %s: %s\n", l.Step, l.Name, l.Nodes, l.In, l.Why)
	}
}

// cvPair is a row's run-to-run CV on each side, "base/new".
func cvPair(base float64, baseN int, cur float64, curN int) string {
	return results.FormatCV(base, baseN) + "/" + results.FormatCV(cur, curN)
}

func shift(e results.Effect) string {
	return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", e.ShiftPct, e.CILoPct, e.CIHiPct)
}

// pAdj is a statistic's own p and, in brackets, its family-wise adjusted
// p, which the verdict uses.
func pAdj(e results.Effect) string { return fmt.Sprintf("%.3g (%.3g)", e.P, e.PAdj) }

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
