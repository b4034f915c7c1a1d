package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/results"
)

// kstep history without a DIR, with one it cannot read, or with a bad flag
// is a usage error: exit 2, and nothing written.
func TestHistoryUsageExits2(t *testing.T) {
	out := filepath.Join(t.TempDir(), "history")
	for _, args := range [][]string{
		{"history"},
		{"history", "--out", out},
		{"history", "--out", out, filepath.Join(t.TempDir(), "no-such-set")},
		{"history", "--out", out, "--alpha", "2", t.TempDir()},
		{"history", "--out", out, "--no-such-flag", t.TempDir()},
	} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		if err := root.Execute(); exitCode(err) != 2 {
			t.Errorf("kstep %s: %v (exit %d), want exit 2", strings.Join(args, " "), err, exitCode(err))
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused history wrote %s: %v", out, err)
	}
}

// Two runs render: exit 0, history.md and history.html in --out, the
// entries printed with their verdicts.
func TestHistoryRenders(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for i, v := range []string{"v0.1-1-gabc", "v0.1-2-gdef"} {
		d := filepath.Join(dir, v)
		r := &results.Run{Schema: results.Schema, ID: v, Profile: "small", Provider: "process", Version: v, Valid: true,
			StartedAt: []string{"2026-12-01T09:00:00Z", "2026-12-02T09:00:00Z"}[i],
			Steps: []results.Step{{Step: "⑤", Name: "binding persisted", Nodes: results.NodesHollow,
				Summary: results.Summary{Count: 10, P50: 10, P90: 20, P99: 30, Max: 31}}},
			EndToEnd: results.Step{Step: "e2e", Name: "client sent → pod Ready observed", Nodes: results.NodesAll,
				Summary: results.Summary{Count: 10, P50: 40, P90: 80, P99: 90, Max: 91}}}
		if err := results.WriteRun(d, r); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	out := filepath.Join(t.TempDir(), "history")
	root := newRootCmd()
	var stdout bytes.Buffer
	root.SetOut(&stdout)
	root.SetArgs(append([]string{"history", "--out", out, "--threshold", "5"}, dirs[1], dirs[0]))
	if err := root.Execute(); err != nil {
		t.Fatalf("kstep history: %v", err)
	}
	for _, f := range []string{results.HistoryMarkdownFile, results.HistoryHTMLFile} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || !strings.Contains(string(b), "v0.1-2-gdef") || !strings.Contains(string(b), "shift exceeds 5 %") {
			t.Errorf("%s (want both entries and --threshold 5): %v", f, err)
		}
	}
	s := stdout.String()
	if !strings.Contains(s, "1. v0.1-1-gabc") || !strings.Contains(s, "2. v0.1-2-gdef") || !strings.Contains(s, "too few runs") {
		t.Errorf("kstep history printed:\n%s", s)
	}
}

// history --check: a +30 % step in the last 4 of 12 entries exits 1 with
// --last 4, and 0 with --last 3 (it started before those).
func TestHistoryCheck(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for i := range 12 {
		v := fmt.Sprintf("v0.%02d", i+1)
		p50 := 10 * (1 + 0.02*float64(i%3-1))
		if i >= 8 {
			p50 *= 1.3
		}
		s := results.Summary{Count: 10, P50: p50, P90: 2 * p50, P99: 3 * p50, Max: 4 * p50}
		r := &results.Run{Schema: results.Schema, ID: v, Profile: "small", Provider: "process", Version: v, Valid: true,
			StartedAt: time.Date(2026, 11, 1+i, 3, 0, 0, 0, time.UTC).Format(time.RFC3339),
			Steps:     []results.Step{{Step: "⑤", Name: "binding persisted", Nodes: results.NodesHollow, Summary: s}},
			EndToEnd:  results.Step{Step: "e2e", Name: "end to end", Nodes: results.NodesAll, Summary: s}}
		d := filepath.Join(dir, v)
		if err := results.WriteRun(d, r); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	out := filepath.Join(t.TempDir(), "history")
	run := func(last string) (string, error) {
		root := newRootCmd()
		var stdout bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stdout)
		root.SetArgs(append([]string{"history", "--out", out, "--check", "--last", last}, dirs...))
		err := root.Execute()
		return stdout.String(), err
	}
	s, err := run("4")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "from entry 9, v0.09") || !strings.Contains(s, "change point: ⑤ binding persisted [hollow] p50 +") {
		t.Errorf("--last 4: %v (exit %d)\n%s", err, exitCode(err), s)
	}
	t.Logf("--last 4: %v", err)
	if s, err := run("3"); err != nil || !strings.Contains(s, "check: no regression started within the last 3 entries") {
		t.Errorf("--last 3: %v\n%s", err, s)
	}
	if _, err := run("0"); exitCode(err) != 2 {
		t.Errorf("--last 0: %v", err)
	}
}
