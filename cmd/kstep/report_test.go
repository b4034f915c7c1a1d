package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/results"
)

// kstep report SET_DIR re-renders the set's report from its runs: the
// table with each row's CV, set.md, set.html and set.json's rows. A
// directory without set.json is still read as a run (and refused as one).
func TestReportSet(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, true, 10, 12, 14)
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"report", dir})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// 10, 12, 14: standard deviation 2 over a mean of 12.
	if !strings.Contains(out.String(), "p50 CV %") || !strings.Contains(out.String(), "16.7") {
		t.Errorf("the set table lacks the CV:\n%s", out.String())
	}
	m, err := results.ReadSetManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 2 || m.Rows[0].P50CVPct < 16.6 || m.Rows[0].P50CVPct > 16.7 {
		t.Errorf("set.json rows %+v", m.Rows)
	}
	for _, f := range []string{results.SetMarkdownFile, results.SetHTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	root = newRootCmd()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"report", t.TempDir()})
	if err := root.Execute(); exitCode(err) != 2 {
		t.Errorf("an empty directory: exit %d (%v)", exitCode(err), err)
	}
}
