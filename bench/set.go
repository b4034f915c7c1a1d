package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kstep-dev/kstep/results"
)

// RunSet runs the profile n times, each on a fresh cluster, into
// opts.OutDir/run-01, run-02, ... and writes opts.OutDir/set.json (with
// each step's median, range and run-to-run CV), set.md and set.html after
// each run, so a set cut short still reads as the runs it has. The error is
// for a run that produced nothing to report; the runs before it are
// returned with it.
func RunSet(ctx context.Context, prof *Profile, opts Options, n int) ([]*results.Run, error) {
	if n < 1 || n > MaxRepeat {
		return nil, fmt.Errorf("repeat %d is out of range: 1 to %d runs", n, MaxRepeat)
	}
	m := &results.SetManifest{Profile: prof.Name, Provider: opts.Provider, Version: opts.Version,
		StartedAt: time.Now().UTC().Format(time.RFC3339), Repeat: n}
	var runs []*results.Run
	set := &results.Set{Dir: opts.OutDir}
	for i := 1; i <= n; i++ {
		o := opts
		o.OutDir = filepath.Join(opts.OutDir, results.RunDirName(i))
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "bench: run %d of %d → %s\n", i, n, o.OutDir)
		}
		r, err := Run(ctx, prof, o)
		if err != nil {
			return runs, fmt.Errorf("run %d of %d: %w", i, n, err)
		}
		runs = append(runs, r)
		if opts.OnRun != nil {
			opts.OnRun(o.OutDir, r)
		}
		m.Provider = r.Provider
		m.Runs = append(m.Runs, results.RunDirName(i))
		set.Runs, set.Dirs = append(set.Runs, r), append(set.Dirs, o.OutDir)
		if err := results.WriteSetReport(opts.OutDir, m, set); err != nil {
			return runs, err
		}
		if ctx.Err() != nil {
			return runs, fmt.Errorf("set cut short after %d of %d runs: %w", i, n, ctx.Err())
		}
	}
	return runs, nil
}
