package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

// abBench is `kstep bench --ab OLD NEW`: n runs a side in bench.ABOrder,
// into opts.OutDir/A and /B, each side's set table, then the two sets
// read back and judged as `kstep compare A B` judges them (judge: its
// output and its exit). A run that produced nothing exits 3 (benchFailed).
func abBench(ctx context.Context, w io.Writer, prof *bench.Profile, opts bench.Options, binaries []string, n int, o results.CompareOptions, calibration string) error {
	var sides [2]bench.ABSide
	for i, b := range binaries {
		s, err := abSide(ctx, bench.ABDirs[i], b)
		if err != nil {
			return usageError{err}
		}
		sides[i] = s
	}
	// Both sides on one provider: auto decides once.
	name, err := provider.Resolve(ctx, opts.Provider, opts.Log)
	if err != nil {
		return usageError{err}
	}
	opts.Provider = name
	runs, err := bench.RunAB(ctx, prof, opts, sides, n)
	for i, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %s (%s), %d run(s)\n", sides[i].Name, sides[i].Binary, sides[i].Version, len(rs))
		if terr := setTable(w, rs); terr != nil && err == nil {
			err = terr
		}
		for j, r := range rs {
			if r.Disrupted {
				fmt.Fprintf(opts.Log, "kstep bench: %s run %d is disrupted (%d disruptions): compare refuses it unless --force\n", sides[i].Name, j+1, len(r.Disruptions))
			}
		}
	}
	if err != nil {
		return benchFailed(err)
	}
	var sets [2]*results.Set
	for i, s := range sides {
		dir := filepath.Join(opts.OutDir, s.Name)
		if sets[i], err = results.ReadSet(dir); err != nil {
			return harnessFailed{err}
		}
	}
	fmt.Fprintf(w, "kstep compare %s %s:\n", filepath.Join(opts.OutDir, sides[0].Name), filepath.Join(opts.OutDir, sides[1].Name))
	return judge(w, sets[0], sets[1], o, calibration, false)
}

// abSide checks that binary is a kstep binary that answers `version`, and
// returns it as side name with its absolute path and the build it reports.
func abSide(ctx context.Context, name, binary string) (bench.ABSide, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return bench.ABSide{}, fmt.Errorf("--ab %s binary %s: %w", name, binary, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return bench.ABSide{}, fmt.Errorf("--ab %s binary: %w", name, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return bench.ABSide{}, fmt.Errorf("--ab %s binary %s is not an executable file", name, abs)
	}
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(vctx, abs, "version").Output()
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "kstep ")
	if err != nil || !ok || v == "" || strings.ContainsAny(v, "\n") {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return bench.ABSide{}, fmt.Errorf("--ab %s binary %s does not answer `version` as kstep does (%q, %v)", name, abs, out, err)
	}
	return bench.ABSide{Name: name, Binary: abs, Version: v}, nil
}
