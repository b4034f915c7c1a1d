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
	w := newSetWriter(prof, opts, n)
	for range n {
		if err := w.next(ctx); err != nil {
			return w.set.Runs, err
		}
	}
	return w.set.Runs, nil
}

// setWriter runs a set's runs one at a time into opts.OutDir/run-NN,
// rewriting the set's report (set.json, set.md, set.html) after each.
type setWriter struct {
	prof *Profile
	opts Options
	m    *results.SetManifest
	set  *results.Set // the runs so far, each with its directory
}

func newSetWriter(prof *Profile, opts Options, n int) *setWriter {
	return &setWriter{prof: prof, opts: opts, set: &results.Set{Dir: opts.OutDir}, m: &results.SetManifest{Profile: prof.Name, Provider: opts.Provider, Version: opts.Version,
		Binary: opts.Binary, StartedAt: time.Now().UTC().Format(time.RFC3339), Repeat: n}}
}

// next runs the set's next run. An error is for a run that produced
// nothing, a set.json that cannot be written, or ctx ending after a run.
func (w *setWriter) next(ctx context.Context) error {
	i := len(w.set.Runs) + 1
	o := w.opts
	o.OutDir = filepath.Join(w.opts.OutDir, results.RunDirName(i))
	if o.Log != nil {
		fmt.Fprintf(o.Log, "bench: run %d of %d → %s\n", i, w.m.Repeat, o.OutDir)
	}
	r, err := Run(ctx, w.prof, o)
	if err != nil {
		return fmt.Errorf("run %d of %d: %w", i, w.m.Repeat, err)
	}
	if o.OnRun != nil {
		o.OnRun(o.OutDir, r)
	}
	w.m.Provider = r.Provider
	w.m.Runs = append(w.m.Runs, results.RunDirName(i))
	w.set.Runs, w.set.Dirs = append(w.set.Runs, r), append(w.set.Dirs, o.OutDir)
	if err := results.WriteSetReport(w.opts.OutDir, w.m, w.set); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("set cut short after %d of %d runs: %w", i, w.m.Repeat, ctx.Err())
	}
	return nil
}
