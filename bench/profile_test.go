package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every profile shipped in bench/profiles loads and validates, and the
// built-ins validate.
func TestShippedProfilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("profiles", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no profiles: %v", err)
	}
	for _, f := range files {
		if _, err := LoadProfile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for name := range Builtin {
		p := Builtin[name]
		if err := p.Validate(); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
}

// A misspelt key is an error, not a silently different run.
func TestProfileRejectsUnknownKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	doc := "apiVersion: kstep.dev/v1alpha1\nkind: BenchProfile\nname: x\ncluster:\n  nodes: 1\n  insecur: true\njob:\n  count: 1\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(path); err == nil || !strings.Contains(err.Error(), "insecur") {
		t.Fatalf("unknown key: %v", err)
	}
}
