package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kstep-dev/kstep/internal/tiers"
)

var tierTable = sync.OnceValues(func() (*tiers.Table, string) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err.Error()
	}
	root, err := tiers.Root(wd)
	if err != nil {
		return nil, err.Error()
	}
	t, err := tiers.Load(root)
	if err != nil {
		return nil, err.Error()
	}
	pkg, err := filepath.Rel(root, wd)
	if err != nil {
		return nil, err.Error()
	}
	return t, filepath.ToSlash(pkg)
})

// Tier skips t unless the tier docs/testing.md gives it (or its nearest
// parent test; a test it does not name is in make test's) is one this run
// is for, or one of its subtests' is: KSTEP_TIER, comma-separated, make test's by default, nightly
// under make nightly. Every test that starts a cluster calls it before
// anything else (hack/tiers -check holds them to it), so that moving a test
// between tiers is a change of the table, never of the test.
func Tier(t testing.TB) {
	t.Helper()
	table, pkg := tierTable()
	if table == nil {
		t.Fatalf("the tier table: %s", pkg)
	}
	running := tiers.Running()
	if ok, tier := table.Runs(pkg, t.Name(), running); !ok {
		t.Skipf("%s runs in the %s tier (%s), this run is for %s: KSTEP_TIER=%s runs it",
			t.Name(), tier, tiers.DocPath, strings.Join(running, ","), tier)
	}
}
