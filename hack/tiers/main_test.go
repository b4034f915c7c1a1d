package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/internal/tiers"
)

// TestTierTableMatchesTheCode is the check make test runs: the table of
// docs/testing.md against this repository's tests.
func TestTierTableMatchesTheCode(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := tiers.Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	table, err := tiers.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, table)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsEachProblem proves the check can fail: a module of its own
// where a listed test was renamed, a test starts a cluster without a row,
// one without testenv.Tier, one without a lane where the package has
// lanes, and a nightly row's test never asks its tier.
func TestCheckFindsEachProblem(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+tiers.Module+"\n")
	write("e2e/a_test.go", `package e2e

import (
	"os/exec"
	"testing"
)

func binary(t *testing.T) string { testenv.Tier(t); return "kstep" }

func inLane(t *testing.T, l int) {}

func upCLI(t *testing.T) {
	inLane(t, 0)
	args := append([]string{"up", "-d"}, "--x")
	exec.Command(binary(t), args...).Run()
}

func TestListedAndGood(t *testing.T) { upCLI(t) }

func TestUnlisted(t *testing.T) {
	t.Run("x", func(t *testing.T) { inLane(t, 1); exec.Command(binary(t), "bench").Run() })
}

func TestNoLane(t *testing.T) { exec.Command(binary(t), "chaos").Run() }

func TestNoTier(t *testing.T) { exec.Command("kstep", "chaos").Run() }

type prov struct{}

func (prov) Up() {}

func TestProviderUp(t *testing.T) { var p prov; p.Up() }

func TestNightlyWithoutTier(t *testing.T) {}

func TestCobraArgv(t *testing.T) { _ = []string{"up", "--nodes", "2"} }
`)
	write(tiers.DocPath, `| capability | package | test | tier |
|---|---|---|---|
| good | e2e | TestListedAndGood | test |
| renamed | e2e | TestOldName | test |
| no tier call | e2e | TestNoTier | test |
| no lane | e2e | TestNoLane | test |
| provider | e2e | TestProviderUp/sub | test |
| nightly | e2e | TestNightlyWithoutTier | nightly |
| a command | — | make chaos | chaos |
`)
	table, err := tiers.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, table)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		"docs/testing.md:4: e2e has no test TestOldName",
		"TestUnlisted starts a cluster and is in no tier",
		"TestNoTier starts a cluster without calling testenv.Tier first",
		"TestProviderUp starts a cluster without calling testenv.Tier first",
		"TestNightlyWithoutTier is in the nightly tier but never calls testenv.Tier",
		"TestNoLane starts a cluster without taking a lane (inLane)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check does not say %q; it says:\n%s", want, got)
		}
	}
	for _, clean := range []string{"TestListedAndGood", "TestCobraArgv", "TestProviderUp starts a cluster and is in no tier"} {
		if strings.Contains(got, clean) {
			t.Errorf("the check flags %s:\n%s", clean, got)
		}
	}
	if len(problems) != 8 {
		t.Errorf("%d problems, want 8:\n%s", len(problems), got)
	}
}

func TestPatterns(t *testing.T) {
	table, err := tiers.Parse(strings.NewReader(`| capability | package | test | tier |
|---|---|---|---|
| a | test/e2e | TestA | nightly |
| b | test/e2e | TestB/docker | nightly |
| b2 | test/e2e | TestB/more | nightly |
| c | test/e2e | TestC | test |
| d | chaos | TestD | nightly |
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Patterns(table, tiers.Nightly), "\n")
	want := "./chaos ^(TestD)$\n./test/e2e ^(TestA|TestB)$"
	if got != want {
		t.Errorf("patterns:\n%s\nwant:\n%s", got, want)
	}
}
