package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

func newBenchCmd() *cobra.Command {
	var profile, providerName, out, binary string
	var noProgress bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Bring a cluster up, run a load profile, and report per-step latency",
		Long: `Bring a cluster up (--provider auto: in Docker containers when a Docker
daemon answers, else as processes) with hollow nodes, run a load
profile (built in: quick, nightly, scale; or a BenchProfile YAML file), tear
the cluster down, and report every step's latency beside its documented
time scale. The run directory gets run.json, events.jsonl.gz,
steps.csv, report.md and report.html. Exits 1 when the run is invalid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			prof, err := bench.LoadProfile(profile)
			if err != nil {
				return err
			}
			if out == "" {
				name := strings.TrimSuffix(filepath.Base(prof.Name), filepath.Ext(prof.Name))
				out = filepath.Join("results", "runs", time.Now().Format("20060102-150405")+"-"+name)
			}
			opts := bench.Options{Binary: binary, OutDir: out, Provider: providerName, Log: cmd.ErrOrStderr()}
			if !noProgress && term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			run, err := bench.Run(ctx, prof, opts)
			if err != nil {
				return err
			}
			if err := results.Table(cmd.OutOrStdout(), run); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "report:", filepath.Join(out, "report.md"))
			if !run.Valid {
				return errors.New("the run is invalid: " + strings.Join(run.Invalid, "; "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&profile, "profile", "quick", "built-in profile (quick, nightly, scale) or a BenchProfile YAML file")
	f.StringVar(&providerName, "provider", provider.Auto, providerFlagUsage)
	f.StringVar(&out, "out", "", "run directory (default results/runs/<timestamp>-<profile>)")
	f.StringVar(&binary, "kstep-binary", "", "kstep binary the actors run (default: this one)")
	f.BoolVar(&noProgress, "no-progress", false, "no progress bars (they are off anyway when stderr is not a terminal)")
	return cmd
}
