package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/results"
)

func newHistoryCmd() *cobra.Command {
	var (
		out   string
		o     results.CompareOptions
		check bool
		last  int
	)
	cmd := &cobra.Command{
		Use:   "history DIR...",
		Short: "Render the trend of every step over sets of runs of successive builds (history.md, history.html)",
		Long: `Render a trend report over sets of runs of successive builds. Each DIR is a
set directory (kstep bench --repeat N), a directory of run directories, or
one run directory or run.json (a set of one). The entries are ordered by
their first run's start, not by the order given.

For every step (by number, name and node kind) the report has the median
over each entry's runs of their p50 and p99, with the range across runs,
each entry's build (its version) and date: a chart per step in
history.html (inline SVG, offline) and a table per step in history.md.
Each entry after the first is compared with the one before as kstep
compare does (--threshold, --alpha): the steps that regressed with their
shift and p, "not comparable: ..." when the sets were not measured alike,
"too few runs" when they cannot reach --alpha. A regression is reported,
not an error: history renders the past.

Change points: each step's p50 and p99 series over the entries is split
where its level lastingly changed (E-divisive with a permutation test per
split at p ≤ 0.01, a fixed seed, segments of at least 3 entries: the same
entries give the same change points). Each is named by the first entry
after it, with its size and the means either side, listed and drawn as a
dashed line in history.html and noted in history.md. --check exits 1 when a
change point that slows a step by more than --threshold (and
--min-shift-ms) starts within the last --last entries: a nightly's
question "did a regression start lately?". A change is seen only once
enough entries after it agree: never fewer than 3, and 4 or more in a short
history (the permutation test of 3 of 12 entries cannot reach 0.01).

Exit codes:
  0  rendered (with --check: no regression started within the last --last entries)
  1  --check: a regression started within the last --last entries
  2  unreadable input or a usage error`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Threshold < 0 || o.Alpha <= 0 || o.Alpha >= 1 || last < 1 {
				return usageError{fmt.Errorf("history: --threshold must be ≥ 0, --alpha in (0, 1) and --last ≥ 1")}
			}
			var sets []*results.Set
			for _, dir := range args {
				s, err := results.ReadSet(dir)
				if err != nil {
					return usageError{err}
				}
				sets = append(sets, s)
			}
			h := results.NewHistory(sets, o)
			if err := results.WriteHistory(out, h); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for i, e := range h.Entries {
				fmt.Fprintf(w, "%d. %s (%s, %d run(s)): %s\n", i+1, e.Version, e.Date(), len(e.Set.Runs), h.Verdict(i))
			}
			for _, c := range h.Changes {
				fmt.Fprintln(w, "change point:", h.Describe(c))
			}
			fmt.Fprintln(w, "history:", filepath.Join(out, results.HistoryMarkdownFile), filepath.Join(out, results.HistoryHTMLFile))
			if !check {
				return nil
			}
			if reg := h.Regressions(last); len(reg) > 0 {
				var l []string
				for _, c := range reg {
					l = append(l, h.Describe(c))
				}
				return jobFailed{fmt.Errorf("history --check: %d regression(s) started within the last %d entries: %s", len(reg), last, strings.Join(l, "; "))}
			}
			fmt.Fprintf(w, "check: no regression started within the last %d entries\n", last)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", filepath.Join("results", "history"), "directory to write history.md and history.html into")
	cmd.Flags().Float64Var(&o.Threshold, "threshold", results.DefaultThreshold, "percent a p50 or p99 may shift before it counts as a regression")
	cmd.Flags().Float64Var(&o.MinShiftMS, "min-shift-ms", results.DefaultMinShiftMS, "the smallest shift, in ms, that counts besides --threshold (negative: none)")
	cmd.Flags().Float64Var(&o.Alpha, "alpha", results.DefaultAlpha, "significance level of the two-sided test")
	cmd.Flags().BoolVar(&check, "check", false, "exit 1 when a change point that slows a step beyond --threshold starts within the last --last entries")
	cmd.Flags().IntVar(&last, "last", 5, "with --check: how many of the newest entries a regression may start in")
	return cmd
}
