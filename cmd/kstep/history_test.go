package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
