package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/hack/clidocs"
)

var updateReference = flag.Bool("update-reference", false, "rewrite docs/reference/kstep*.md from the commands' help")

// regenerateReference is the command that rewrites docs/reference.
const regenerateReference = "go test ./cmd/kstep -run TestCLIReferenceMatchesHelp -update-reference"

// referenceDefault makes a flag's default the same on every machine: the
// home directory, this binary's directory, the host name and the process
// id are the machine's, not the command's.
func referenceDefault() func(string) string {
	home, _ := os.UserHomeDir()
	exe, _ := os.Executable()
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	return func(v string) string {
		if exe != "" {
			v = strings.ReplaceAll(v, filepath.Dir(exe), "<kstep's directory>")
		}
		if home != "" {
			v = strings.ReplaceAll(v, home, "$HOME")
		}
		if host != "" && strings.Contains(v, host) {
			v = strings.ReplaceAll(strings.ReplaceAll(v, host, "<hostname>"), pid, "<pid>")
		}
		return v
	}
}

// TestCLIReferenceMatchesHelp renders every command's help into a
// temporary directory and holds docs/reference to it, so the reference
// says what the binary says.
func TestCLIReferenceMatchesHelp(t *testing.T) {
	pages := clidocs.Render(newRootCmd(), clidocs.Options{Default: referenceDefault(), Regenerate: regenerateReference})
	dir := filepath.Join("..", "..", "docs", "reference")
	if *updateReference {
		if err := clidocs.Write(dir, pages); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	if err := clidocs.Write(tmp, pages); err != nil {
		t.Fatal(err)
	}
	stale, err := clidocs.Diff(tmp, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("docs/reference is not what the commands' --help says: %s\nrun: %s", strings.Join(stale, ", "), regenerateReference)
	}
}
