package tiers

import (
	"strings"
	"testing"
)

const doc = `# x

| tier | command |
|---|---|
| test | make test |

| capability | package | test | tier |
|---|---|---|---|
| a | test/e2e | ` + "`TestA`" + ` | test |
| a docker | test/e2e | TestA/docker | nightly |
| b | test/e2e | TestB | nightly |
| cmd | — | make chaos | chaos |

after
`

func TestParseAndTierOf(t *testing.T) {
	table, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 4 || table.Rows[0].Test != "TestA" || table.Rows[3].GoTest() {
		t.Fatalf("rows %+v", table.Rows)
	}
	for _, c := range []struct{ pkg, name, want string }{
		{"test/e2e", "TestA", Test},
		{"test/e2e", "TestA/process", Test},
		{"test/e2e", "TestA/docker", Nightly},
		{"test/e2e", "TestA/docker/deeper", Nightly},
		{"test/e2e", "TestB", Nightly},
		{"test/e2e", "TestUnlisted", Test},
		{"chaos", "TestB", Test},
	} {
		if got := table.TierOf(c.pkg, c.name); got != c.want {
			t.Errorf("TierOf(%s, %s) = %s, want %s", c.pkg, c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		running []string
		want    bool
	}{
		{"TestA", []string{Test}, true},
		{"TestA", []string{Nightly}, true}, // for TestA/docker's sake
		{"TestA/process", []string{Nightly}, false},
		{"TestA/docker", []string{Test}, false},
		{"TestB", []string{Test}, false},
		{"TestB", []string{Test, Nightly}, true},
	} {
		if got, _ := table.Runs("test/e2e", c.name, c.running); got != c.want {
			t.Errorf("Runs(%s, %v) = %v, want %v", c.name, c.running, got, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	head := "| capability | package | test | tier |\n|---|---|---|---|\n"
	for name, body := range map[string]string{
		"no table":      "# nothing\n",
		"unknown tier":  head + "| a | p | TestA | weekly |\n",
		"not a test":    head + "| a | p | BenchmarkA | test |\n",
		"named twice":   head + "| a | p | TestA | test |\n| b | p | TestA | nightly |\n",
		"missing cells": head + "| a | p | TestA |\n",
	} {
		if _, err := Parse(strings.NewReader(body)); err == nil {
			t.Errorf("%s: parsed, want an error", name)
		}
	}
}

func TestRunning(t *testing.T) {
	t.Setenv("KSTEP_NIGHTLY", "")
	t.Setenv("KSTEP_TIER", "")
	if got := Running(); len(got) != 1 || got[0] != Test {
		t.Errorf("default %v, want [test]", got)
	}
	t.Setenv("KSTEP_TIER", "test, nightly")
	if got := Running(); len(got) != 2 || got[1] != Nightly {
		t.Errorf("KSTEP_TIER=test, nightly: %v", got)
	}
	t.Setenv("KSTEP_TIER", "")
	t.Setenv("KSTEP_NIGHTLY", "1")
	if got := Running(); len(got) != 2 || got[1] != Nightly {
		t.Errorf("KSTEP_NIGHTLY=1: %v", got)
	}
}
