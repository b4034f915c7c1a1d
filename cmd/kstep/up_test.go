package main

import (
	"strings"
	"testing"
)

// --nodes meant real nodes in kstep up and hollow nodes in bench profiles:
// it is refused, naming both flags that replace it, before anything starts.
func TestUpRefusesNodesFlag(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"up", "--nodes", "2", "--state-dir", t.TempDir()})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--real-nodes 2") || !strings.Contains(err.Error(), "--hollow-nodes 2") {
		t.Fatalf("kstep up --nodes 2: %v, want a refusal naming --real-nodes and --hollow-nodes", err)
	}
}
