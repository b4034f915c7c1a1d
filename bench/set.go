package bench

import (
	"context"
	"fmt"

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
		if err := w.next(ctx, prof); err != nil {
			return w.runs, err
		}
	}
	return w.runs, nil
}
