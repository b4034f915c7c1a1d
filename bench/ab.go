package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kstep-dev/kstep/results"
)

// ABSide is one side of an interleaved A/B (RunAB): the kstep binary its
// clusters' actors run and the build it reports (recorded as each run's
// version).
type ABSide struct {
	// Name is the side's directory below the A/B's: "A" or "B".
	Name    string
	Binary  string
	Version string
}

// ABDirs are the directories of an A/B's two sets below its own: the old
// build's, then the new one's.
var ABDirs = [2]string{"A", "B"}

// ABOrder is the order in which RunAB runs n runs a side: pairs A B, B A,
// A B, ... (A B B A A B B A ...), so that a drift of the machine's speed
// over the runs, linear or nearly, loads both sides alike instead of
// favouring the side that ran first. Each element is a side's index (0 A,
// 1 B).
func ABOrder(n int) []int {
	out := make([]int, 0, 2*n)
	for i := range n {
		first := i % 2
		out = append(out, first, 1-first)
	}
	return out
}

// RunAB runs the profile n times with each side's binary, alternating in
// ABOrder, each run on a fresh cluster, into opts.OutDir/A/run-01.. and
// opts.OutDir/B/run-01.. (each a set: set.json written after each of its
// runs, so an A/B cut short reads as the runs it has). opts.Binary and
// opts.Version are each side's. The error is for a run that produced
// nothing to report; the runs before it are returned with it.
func RunAB(ctx context.Context, prof *Profile, opts Options, sides [2]ABSide, n int) ([2][]*results.Run, error) {
	var runs [2][]*results.Run
	if n < 1 || n > MaxRepeat {
		return runs, fmt.Errorf("repeat %d is out of range: 1 to %d runs a side", n, MaxRepeat)
	}
	var sets [2]*setWriter
	for i, s := range sides {
		o := opts
		o.OutDir, o.Binary, o.Version = filepath.Join(opts.OutDir, s.Name), s.Binary, s.Version
		sets[i] = newSetWriter(prof, o, n)
	}
	for k, i := range ABOrder(n) {
		w := sets[i]
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "bench: A/B run %d of %d: %s (%s), its run %d of %d\n", k+1, 2*n, sides[i].Name, sides[i].Binary, len(w.runs)+1, n)
		}
		if err := w.next(ctx, prof); err != nil {
			return [2][]*results.Run{sets[0].runs, sets[1].runs}, fmt.Errorf("A/B run %d of %d (%s): %w", k+1, 2*n, sides[i].Name, err)
		}
	}
	return [2][]*results.Run{sets[0].runs, sets[1].runs}, nil
}

// setWriter runs a set's runs one at a time into opts.OutDir/run-NN,
// rewriting the set's report (set.json, set.md, set.html) after each.
type setWriter struct {
	opts Options
	m    *results.SetManifest
	set  *results.Set
	runs []*results.Run
}

func newSetWriter(prof *Profile, opts Options, n int) *setWriter {
	return &setWriter{opts: opts, set: &results.Set{Dir: opts.OutDir}, m: &results.SetManifest{Profile: prof.Name, Provider: opts.Provider, Version: opts.Version,
		Binary: opts.Binary, StartedAt: time.Now().UTC().Format(time.RFC3339), Repeat: n}}
}

// next runs the set's next run. An error is for a run that produced
// nothing, a set.json that cannot be written, or ctx ending after a run.
func (w *setWriter) next(ctx context.Context, prof *Profile) error {
	i := len(w.runs) + 1
	o := w.opts
	o.OutDir = filepath.Join(w.opts.OutDir, results.RunDirName(i))
	if o.Log != nil {
		fmt.Fprintf(o.Log, "bench: run %d of %d → %s\n", i, w.m.Repeat, o.OutDir)
	}
	r, err := Run(ctx, prof, o)
	if err != nil {
		return fmt.Errorf("run %d of %d: %w", i, w.m.Repeat, err)
	}
	w.runs = append(w.runs, r)
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
