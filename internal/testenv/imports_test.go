package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/internal/tiers"
)

// An importRule is what the doc.go of a package under internal/ says about
// the files of kstep that are not tests (tests may import anything).
type importRule struct {
	pkg string // module-relative; its subpackages too
	// importers may import pkg besides pkg itself; anyone: every package may.
	importers []string
	anyone    bool
	leaf      bool // pkg imports no kstep package outside pkg
}

var importRules = []importRule{
	{pkg: "internal/testenv"},
	{pkg: "internal/tiers", importers: []string{"internal/testenv", "hack/tiers"}, leaf: true},
	{pkg: "internal/util", anyone: true, leaf: true},
}

// A kstepImport is one import of a kstep package by a file that is not a
// test; paths are relative to the module's root.
type kstepImport struct {
	pkg, file string
	line      int
	imp       string
}

// under says whether pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// importViolations is every import that breaks one of rules.
func importViolations(rules []importRule, imports []kstepImport) []string {
	var out []string
	for _, i := range imports {
		for _, r := range rules {
			allowed := r.anyone || under(i.pkg, r.pkg) || slices.ContainsFunc(r.importers, func(p string) bool { return under(i.pkg, p) })
			if under(i.imp, r.pkg) && !allowed {
				who := "_test.go files"
				if len(r.importers) > 0 {
					who = strings.Join(r.importers, ", ") + " and _test.go files"
				}
				out = append(out, fmt.Sprintf("%s:%d imports %s, which only %s may import (%s's doc.go)", i.file, i.line, i.imp, who, r.pkg))
			}
			if r.leaf && under(i.pkg, r.pkg) && !under(i.imp, r.pkg) {
				out = append(out, fmt.Sprintf("%s:%d imports %s: %s imports no other kstep package (its doc.go)", i.file, i.line, i.imp, r.pkg))
			}
		}
	}
	return out
}

// nonTestImports lists, through go list, every import of a kstep package
// by a file of the module that is not a test, build constraints or not.
func nonTestImports(t *testing.T, root string) []kstepImport {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	var imports []kstepImport
	fset := token.NewFileSet()
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath, Dir                   string
			GoFiles, CgoFiles, IgnoredGoFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's answer: %v", err)
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, tiers.Module), "/")
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, path)
			for _, spec := range f.Imports {
				imp, _ := strconv.Unquote(spec.Path.Value)
				if under(imp, tiers.Module) {
					imports = append(imports, kstepImport{pkg: pkg, file: filepath.ToSlash(rel), line: fset.Position(spec.Pos()).Line,
						imp: strings.TrimPrefix(strings.TrimPrefix(imp, tiers.Module), "/")})
				}
			}
		}
	}
	return imports
}

// The packages under internal/ are imported as their doc.go files say:
// internal/testenv by tests only, internal/tiers by testenv and hack/tiers,
// internal/util by anyone; internal/util and internal/tiers import no other
// kstep package.
func TestInternalImportRules(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := tiers.Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	imports := nonTestImports(t, root)
	// What the rules are about is there to be seen: the actors' imports
	// of internal/util, hack/tiers' of internal/tiers.
	for _, want := range []kstepImport{{pkg: "cluster/storage", imp: "internal/util/gopool"}, {pkg: "hack/tiers", imp: "internal/tiers"}} {
		if !slices.ContainsFunc(imports, func(i kstepImport) bool { return i.pkg == want.pkg && i.imp == want.imp }) {
			t.Fatalf("go list shows no import of %s by %s: the listing is wrong", want.imp, want.pkg)
		}
	}
	if v := importViolations(importRules, imports); len(v) > 0 {
		t.Errorf("imports that break internal/'s rules:\n%s", strings.Join(v, "\n"))
	}

	t.Run("each rule can fail", func(t *testing.T) {
		planted := []kstepImport{
			{pkg: "cluster/kubelet", file: "cluster/kubelet/a.go", line: 1, imp: "internal/testenv"},
			{pkg: "bench", file: "bench/b.go", line: 2, imp: "internal/tiers"},
			{pkg: "internal/util/gopool", file: "internal/util/gopool/c.go", line: 3, imp: "cluster/trace"},
			{pkg: "internal/tiers", file: "internal/tiers/d.go", line: 4, imp: "internal/util/gopool"},
			// Allowed: each of these is what a rule permits.
			{pkg: "internal/testenv", file: "internal/testenv/e.go", line: 5, imp: "internal/tiers"},
			{pkg: "hack/tiers", file: "hack/tiers/f.go", line: 6, imp: "internal/tiers"},
			{pkg: "cluster/apiserver", file: "cluster/apiserver/g.go", line: 7, imp: "internal/util/gopool"},
			{pkg: "internal/util/gopool", file: "internal/util/gopool/h.go", line: 8, imp: "internal/util/jsonctl"},
		}
		got := importViolations(importRules, planted)
		want := []string{"cluster/kubelet/a.go:1 ", "bench/b.go:2 ", "internal/util/gopool/c.go:3 ", "internal/tiers/d.go:4 "}
		if len(got) != len(want) {
			t.Fatalf("violations %q, want one for each of %q", got, want)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("violation %d: %q, want one for %s", i, got[i], want[i])
			}
		}
	})
}
