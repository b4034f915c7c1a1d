package bench

import (
	"context"
	"fmt"
	"path/filepath"

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
			fmt.Fprintf(opts.Log, "bench: A/B run %d of %d: %s (%s), its run %d of %d\n", k+1, 2*n, sides[i].Name, sides[i].Binary, len(w.set.Runs)+1, n)
		}
		if err := w.next(ctx); err != nil {
			return [2][]*results.Run{sets[0].set.Runs, sets[1].set.Runs}, fmt.Errorf("A/B run %d of %d (%s): %w", k+1, 2*n, sides[i].Name, err)
		}
	}
	return [2][]*results.Run{sets[0].set.Runs, sets[1].set.Runs}, nil
}
