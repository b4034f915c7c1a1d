package clidocs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "kstep", Short: "the root", Long: "The root,\nat length."}
	root.PersistentFlags().Int("gomaxprocs", 0, "procs")
	up := &cobra.Command{Use: "up", Short: "Start a cluster", Run: func(*cobra.Command, []string) {}}
	up.Flags().String("state-dir", "/home/me/.kstep/default", "where")
	up.Flags().Bool("nodes", false, "old")
	_ = up.Flags().MarkHidden("nodes")
	secret := &cobra.Command{Use: "signal", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(up, secret)
	return root
}

func TestRenderOnePagePerAvailableCommand(t *testing.T) {
	pages := Render(tree(), Options{
		Default:    func(s string) string { return strings.ReplaceAll(s, "/home/me", "$HOME") },
		Regenerate: "make docs",
	})
	var names []string
	for n := range pages {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"kstep.md", "kstep_up.md"}; !slices.Equal(names, want) {
		t.Fatalf("pages %v, want %v (hidden commands left out)", names, want)
	}
	root, up := string(pages["kstep.md"]), string(pages["kstep_up.md"])
	for _, want := range []string{"# kstep\n", "The root,\nat length.", "| [kstep up](kstep_up.md) | Start a cluster |", "make docs"} {
		if !strings.Contains(root, want) {
			t.Errorf("kstep.md lacks %q:\n%s", want, root)
		}
	}
	for _, want := range []string{"kstep up [flags]", `--state-dir string   where (default "$HOME/.kstep/default")`, "## Global flags", "--gomaxprocs int", "[kstep](kstep.md)"} {
		if !strings.Contains(up, want) {
			t.Errorf("kstep_up.md lacks %q:\n%s", want, up)
		}
	}
	if strings.Contains(up, "--nodes") || strings.Contains(root, "signal") {
		t.Errorf("a hidden flag or command is on a page:\n%s\n%s", root, up)
	}
}

func TestDiffNamesEveryStalePage(t *testing.T) {
	want, got := t.TempDir(), t.TempDir()
	pages := Render(tree(), Options{})
	if err := Write(want, pages); err != nil {
		t.Fatal(err)
	}
	if err := Write(got, pages); err != nil {
		t.Fatal(err)
	}
	// A hand-written page beside the generated ones is not theirs.
	if err := os.WriteFile(filepath.Join(got, "exit-codes.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := Diff(want, got); err != nil || len(d) != 0 {
		t.Fatalf("Diff of the same rendering: %v, %v", d, err)
	}
	os.Remove(filepath.Join(got, "kstep.md"))
	os.WriteFile(filepath.Join(got, "kstep_up.md"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(got, "kstep_gone.md"), []byte("old"), 0o644)
	d, err := Diff(want, got)
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"kstep.md (missing)", "kstep_gone.md (no such command)", "kstep_up.md (differs)"}; !slices.Equal(d, w) {
		t.Fatalf("Diff = %v, want %v", d, w)
	}
	// Write puts it right: the stale page removed, the others rewritten.
	if err := Write(got, pages); err != nil {
		t.Fatal(err)
	}
	if d, err := Diff(want, got); err != nil || len(d) != 0 {
		t.Fatalf("Diff after Write: %v, %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(got, "exit-codes.md")); err != nil {
		t.Fatalf("Write removed a page it does not own: %v", err)
	}
}
