package docs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	"github.com/kstep-dev/kstep/internal/tiers"
)

// root is the repository's root, from this package's directory.
const root = "../.."

func parseAll(t *testing.T) map[string]Doc {
	t.Helper()
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]Doc{}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = Parse(f, string(text))
	}
	return docs
}

func blocks(docs map[string]Doc) []Block {
	var out []Block
	for _, d := range docs {
		out = append(out, d.Blocks...)
	}
	slices.SortFunc(out, func(a, b Block) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

func TestParseTagsLinksAnchors(t *testing.T) {
	d := Parse("docs/x.md", strings.Join([]string{
		"# A title: `kstep` (here)",
		"## A title: kstep here",
		"<!-- tier: test, exit 2 -->",
		"```sh",
		"kstep compare   # usage",
		"kstep a \\",
		"  --b c",
		"# [not a link](nowhere.md)",
		"```",
		"See [b](b.md#c) and `[code](no.md)`.",
		"```sh",
		"make nightly",
		"```",
		"<!-- tier: manual (three hosts) -->",
		"```sh",
		"make test",
		"```",
		"<!-- tier: test -->",
		"```text",
		"```",
	}, "\n"))
	if len(d.Blocks) != 3 {
		t.Fatalf("blocks %+v", d.Blocks)
	}
	b := d.Blocks[0]
	if b.Tier != "test" || b.Exit != 2 || b.Line != 4 || !slices.Equal(b.Commands(), []string{"kstep compare", "kstep a --b c"}) {
		t.Errorf("first block %+v, commands %q", b, b.Commands())
	}
	if d.Blocks[1].Tier != "" {
		t.Errorf("an untagged block has tier %q", d.Blocks[1].Tier)
	}
	if m := d.Blocks[2]; m.Tier != Manual || m.Why != "three hosts" {
		t.Errorf("manual block %+v", m)
	}
	if len(d.Links) != 1 || d.Links[0].Target != "b.md#c" || d.Links[0].Line != 10 {
		t.Errorf("links %+v (none inside code)", d.Links)
	}
	if !d.Anchors["a-title-kstep-here"] || !d.Anchors["a-title-kstep-here-1"] {
		t.Errorf("anchors %v", d.Anchors)
	}
	if len(d.TagFault) != 1 || !strings.Contains(d.TagFault[0], ":18:") {
		t.Errorf("tag faults %q: the tag before a text block is one", d.TagFault)
	}
	nightly := Block{Tier: "nightly", Text: "make nightly\n"}
	mixed := Block{Tier: "nightly", Text: "make nightly\nkstep up\n"}
	if !nightly.IsTier() || mixed.IsTier() {
		t.Errorf("IsTier: %v for make nightly, %v beside another command", nightly.IsTier(), mixed.IsTier())
	}
}

func TestResolveLinks(t *testing.T) {
	docs := map[string]Doc{
		"README.md":          Parse("README.md", "# kstep\n## Quick tour\n"),
		"docs/guides/run.md": Parse("docs/guides/run.md", "# Run\n"),
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs", "guides"), 0o755)
	os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "guides", "run.md"), nil, 0o644)
	for target, ok := range map[string]bool{
		"../../README.md#quick-tour": true,
		"#run":                       true,
		"run.md":                     true,
		"../../README.md#nowhere":    false,
		"gone.md":                    false,
		"../../../shared/x.md":       false,
		"https://kubernetes.io/":     false,
		"/docs/guides/run.md":        false,
	} {
		err := Resolve(Link{File: "docs/guides/run.md", Line: 1, Target: target}, dir, docs)
		if (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", target, err, ok)
		}
	}
}

// TestEveryShellBlockHasATier: an example says where it runs.
func TestEveryShellBlockHasATier(t *testing.T) {
	docs := parseAll(t)
	for _, d := range docs {
		for _, f := range d.TagFault {
			t.Error(f)
		}
	}
	for _, b := range blocks(docs) {
		switch {
		case b.Tier == "":
			t.Errorf("%s: a sh block without a tier: put `<!-- tier: T -->` before it, T one of %v or `manual (why)`", b, tiers.Known)
		case b.Tier == Manual:
		case !slices.Contains(tiers.Known, b.Tier):
			t.Errorf("%s: tier %q is none of %s's %v", b, b.Tier, tiers.DocPath, tiers.Known)
		case (b.Tier == tiers.Chaos || b.Tier == tiers.Conformance) && !slices.ContainsFunc(b.Commands(), func(c string) bool { return strings.HasSuffix(c, TierCommand(b.Tier)) }):
			t.Errorf("%s: a %s example must be `%s`, which that tier is (no Go test runs it)", b, b.Tier, TierCommand(b.Tier))
		}
	}
}

// TestLinksStayInTheRepoAndResolve: every link of README.md and docs/
// is relative, stays in the repository and finds its file and heading.
func TestLinksStayInTheRepoAndResolve(t *testing.T) {
	docs := parseAll(t)
	n := 0
	for _, d := range docs {
		for _, l := range d.Links {
			n++
			if err := Resolve(l, root, docs); err != nil {
				t.Error(err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no links found: the parser is broken")
	}
}

// TestDocExamples runs the examples of make test's tier.
func TestDocExamples(t *testing.T) {
	runExamples(t, tiers.Test, time.Minute)
}

// tourDir is where the README's quick tour keeps its clusters and runs.
const tourDir = "/tmp/kstep-tour"

// TestDocExamplesNightly runs the nightly examples: the README's quick
// tour brings clusters up, benches, breaks and compares them, in tourDir,
// which starts and ends empty.
func TestDocExamplesNightly(t *testing.T) {
	testenv.Tier(t)
	clean := func() {
		if err := os.RemoveAll(tourDir); err != nil {
			t.Fatal(err)
		}
	}
	clean()
	t.Cleanup(clean)
	runExamples(t, tiers.Nightly, 30*time.Minute)
}

// runExamples runs each block of tier with sh -e in the repository's
// root, kstep on PATH, and holds it to its exit status.
func runExamples(t *testing.T, tier string, timeout time.Duration) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	path := kstepOnPath(t, abs)
	ran := 0
	for _, b := range blocks(parseAll(t)) {
		if b.Tier != tier || b.IsTier() {
			continue
		}
		ran++
		t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", b.Text)
			cmd.Dir = abs
			cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if code != b.Exit {
				t.Fatalf("%s exited %d, its tag says %d:\n%s\n%s", b, code, b.Exit, b.Text, out)
			}
		})
	}
	if ran == 0 {
		t.Fatalf("no %s examples in README.md or docs/", tier)
	}
}

// kstepOnPath is a directory whose kstep is KSTEP_BIN (make test's
// binary), or one built here.
func kstepOnPath(t *testing.T, repo string) string {
	dir := t.TempDir()
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "kstep-built")
		build := exec.Command("go", "build", "-o", bin, "./cmd/kstep")
		build.Dir = repo
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/kstep: %v\n%s", err, out)
		}
	}
	if err := os.Symlink(bin, filepath.Join(dir, "kstep")); err != nil {
		t.Fatal(err)
	}
	return dir
}
