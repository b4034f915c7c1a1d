package tiers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The tiers. A test the table does not name runs in Test.
const (
	Test    = "test"    // make test: every CI run, ≤ 20 minutes on 2 cores
	Nightly = "nightly" // make nightly
	Chaos   = "chaos"   // make chaos
	// Conformance is make conformance: upstream's [Conformance] specs
	// against the known-failures list (hack/conformance.sh); make nightly
	// runs it too.
	Conformance = "conformance"
)

// Known lists the tiers in the order docs/testing.md presents them.
var Known = []string{Test, Nightly, Chaos, Conformance}

// Module is the module whose root holds docs/testing.md.
const Module = "github.com/kstep-dev/kstep"

// DocPath is the table's file, relative to the module root.
const DocPath = "docs/testing.md"

// Row is one line of the table. Package is a directory relative to the
// module root ("test/e2e"), or empty for a row that names a command rather
// than a Go test (Test then holds the command).
type Row struct {
	Capability string
	Package    string
	Test       string // TestX, or TestX/sub for one subtest
	Tier       string
	Line       int
}

// GoTest reports whether the row names a Go test.
func (r Row) GoTest() bool { return r.Package != "" }

// Table is the parsed tier table.
type Table struct {
	Rows []Row
}

// header is the table's header row, cells lower-cased.
var header = []string{"capability", "package", "test", "tier"}

// Parse reads the first Markdown table whose header is capability |
// package | test | tier. Cells lose their backticks; a package cell of
// "—" or "-" marks a command row. Every row must name a known tier and,
// for a Go test, a name that starts with Test; a Go test named twice is
// an error.
func Parse(r io.Reader) (*Table, error) {
	sc := bufio.NewScanner(r)
	t := &Table{}
	in, seen := false, map[string]int{}
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(s, "|") {
			if in {
				break
			}
			continue
		}
		cells := splitRow(s)
		if !in {
			if equalFold(cells, header) {
				in = true
				if !sc.Scan() { // the |---| line
					break
				}
				line++
			}
			continue
		}
		if len(cells) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d cells, want %d (%s)", DocPath, line, len(cells), len(header), strings.Join(header, " | "))
		}
		row := Row{Capability: cells[0], Package: cells[1], Test: cells[2], Tier: cells[3], Line: line}
		if row.Package == "—" || row.Package == "-" {
			row.Package = ""
		}
		if !known(row.Tier) {
			return nil, fmt.Errorf("%s:%d: tier %q, want one of %s", DocPath, line, row.Tier, strings.Join(Known, ", "))
		}
		if row.GoTest() {
			if !strings.HasPrefix(row.Test, "Test") || strings.ContainsAny(row.Test, " \t") {
				return nil, fmt.Errorf("%s:%d: %q is not a test name (TestX or TestX/sub)", DocPath, line, row.Test)
			}
			key := row.Package + " " + row.Test
			if prev, ok := seen[key]; ok {
				return nil, fmt.Errorf("%s:%d: %s %s is in the table already (line %d)", DocPath, line, row.Package, row.Test, prev)
			}
			seen[key] = line
		}
		t.Rows = append(t.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !in {
		return nil, fmt.Errorf("%s: no table with the header | %s |", DocPath, strings.Join(header, " | "))
	}
	return t, nil
}

// Load parses the table of the module rooted at root.
func Load(root string) (*Table, error) {
	f, err := os.Open(filepath.Join(root, DocPath))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// TierOf is the tier of a running test: pkg is its package directory
// relative to the module root, name its t.Name(). The row of the test
// itself counts, else that of its nearest parent (a row for TestX covers
// TestX/docker unless TestX/docker has its own), else Test.
func (t *Table) TierOf(pkg, name string) string {
	for n := name; ; {
		for _, r := range t.Rows {
			if r.Package == pkg && r.Test == n {
				return r.Tier
			}
		}
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			return Test
		}
		n = n[:i]
	}
}

// Runs reports whether a running test belongs to one of the running
// tiers: its own tier (TierOf) is one, or a row of one of its subtests
// names one (a make test parent of a nightly subtest runs under make
// nightly too, for its subtest's sake). tier is its own.
func (t *Table) Runs(pkg, name string, running []string) (ok bool, tier string) {
	tier = t.TierOf(pkg, name)
	if slices.Contains(running, tier) {
		return true, tier
	}
	for _, r := range t.Rows {
		if r.Package == pkg && strings.HasPrefix(r.Test, name+"/") && slices.Contains(running, r.Tier) {
			return true, tier
		}
	}
	return false, tier
}

// Running is the tiers this process runs: KSTEP_TIER, comma-separated
// (default test). KSTEP_NIGHTLY=1, the older switch, adds nightly.
func Running() []string {
	var out []string
	for _, s := range strings.Split(os.Getenv("KSTEP_TIER"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []string{Test}
	}
	if os.Getenv("KSTEP_NIGHTLY") == "1" {
		out = append(out, Nightly)
	}
	return out
}

// Root walks up from dir to the directory whose go.mod declares Module.
func Root(dir string) (string, error) {
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(string(b)) == Module {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("tiers: no go.mod of " + Module + " above " + dir)
		}
		d = parent
	}
}

func modulePath(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

func splitRow(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "|"), "|")
	cells := strings.Split(s, "|")
	for i, c := range cells {
		cells[i] = strings.Trim(strings.TrimSpace(c), "`")
	}
	return cells
}

func equalFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

func known(tier string) bool {
	for _, k := range Known {
		if tier == k {
			return true
		}
	}
	return false
}
