package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kstep-dev/kstep/internal/tiers"
)

func main() {
	check := flag.Bool("check", false, "check the table against the code; exit 1 naming every problem")
	root := flag.String("root", "", "the module root (default: found above the working directory)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tiers -check | tiers TIER   (TIER: "+strings.Join(tiers.Known, ", ")+")")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *root == "" {
		wd, _ := os.Getwd()
		r, err := tiers.Root(wd)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		*root = r
	}
	table, err := tiers.Load(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiers:", err)
		os.Exit(1)
	}
	switch {
	case *check && flag.NArg() == 0:
		problems, err := Check(*root, table)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tiers:", err)
			os.Exit(1)
		}
		for _, p := range problems {
			fmt.Println(p)
		}
		if len(problems) > 0 {
			os.Exit(1)
		}
	case !*check && flag.NArg() == 1 && slices.Contains(tiers.Known, flag.Arg(0)):
		for _, l := range Patterns(table, flag.Arg(0)) {
			fmt.Println(l)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// Patterns is, for each package with tests of tier, a line "./PKG
// PATTERN": the -run pattern of its top-level tests of that tier. Their
// subtests of other tiers skip themselves (testenv.Tier).
func Patterns(t *tiers.Table, tier string) []string {
	byPkg := map[string][]string{}
	for _, r := range t.Rows {
		if !r.GoTest() || r.Tier != tier {
			continue
		}
		top, _, _ := strings.Cut(r.Test, "/")
		if !slices.Contains(byPkg[r.Package], top) {
			byPkg[r.Package] = append(byPkg[r.Package], top)
		}
	}
	var out []string
	for pkg, tests := range byPkg {
		out = append(out, "./"+pkg+" ^("+strings.Join(tests, "|")+")$")
	}
	sort.Strings(out)
	return out
}

// fn is what one function of a package's test files does, directly.
type fn struct {
	pos    token.Position
	calls  map[string]bool
	starts bool // a provider's Up, or the kstep binary's up, bench or chaos
	argv   bool // a []string{"up", ...} (starts, where the function also runs a command)
	execs  bool // exec.Command or exec.CommandContext
	tier   bool // testenv.Tier
}

// laneFunc is the function with which a package that has lanes (test/e2e)
// makes a cluster test wait for its lane (docs/testing.md, "Lanes"). In
// such a package every test that starts a cluster must reach it: one that
// does not runs beside the lanes' clusters, unbounded.
const laneFunc = "inLane"

// pkgFuncs is a package directory's test functions by name (methods by
// their name alone: a call through a selector is matched by name).
type pkgFuncs map[string]*fn

// startsCluster are the kstep subcommands that bring a cluster up.
var startsCluster = map[string]bool{"up": true, "bench": true, "chaos": true}

var testName = regexp.MustCompile(`^Test[A-Z0-9_]`)

// scan reads every _test.go file under root (not tools/, its own module,
// nor testdata, bin or results).
func scan(root string) (map[string]pkgFuncs, error) {
	fset := token.NewFileSet()
	pkgs := map[string]pkgFuncs{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "bin", "results", "tools", "node_modules":
				if path != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if pkgs[rel] == nil {
			pkgs[rel] = pkgFuncs{}
		}
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || d.Body == nil {
				continue
			}
			f := pkgs[rel][d.Name.Name]
			if f == nil {
				f = &fn{pos: fset.Position(d.Pos()), calls: map[string]bool{}}
				pkgs[rel][d.Name.Name] = f
			}
			inspect(d.Body, f)
		}
		return nil
	})
	return pkgs, err
}

func inspect(body ast.Node, f *fn) {
	ast.Inspect(body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok && len(lit.Elts) > 0 && startsClusterArg(lit.Elts[0]) {
			// []string{"up", ...}: the argv of the kstep binary, however
			// it is passed on to exec (a cobra command's own test sets
			// such an argv without running anything).
			f.argv = true
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fun := call.Fun.(type) {
		case *ast.Ident:
			f.calls[fun.Name] = true
		case *ast.SelectorExpr:
			f.calls[fun.Sel.Name] = true
			pkg, _ := fun.X.(*ast.Ident)
			switch {
			case fun.Sel.Name == "Up":
				f.starts = true
			case pkg != nil && pkg.Name == "testenv" && fun.Sel.Name == "Tier":
				f.tier = true
			case pkg != nil && pkg.Name == "exec" && (fun.Sel.Name == "Command" || fun.Sel.Name == "CommandContext"):
				f.execs = true
				for _, a := range call.Args {
					if startsClusterArg(a) {
						f.starts = true
					}
				}
			}
		}
		return true
	})
	if f.argv && f.execs {
		f.starts = true
	}
}

// startsClusterArg reports whether e is the string literal of a kstep
// subcommand that brings a cluster up.
func startsClusterArg(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && startsCluster[s]
}

// reaches reports whether name, or anything it calls in its package,
// has the property.
func reaches(funcs pkgFuncs, name string, prop func(*fn) bool) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		f := funcs[n]
		if f == nil || seen[n] {
			return false
		}
		seen[n] = true
		if prop(f) {
			return true
		}
		for c := range f.calls {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(name)
}

// Check holds the table to the code under root: every Go test a row names
// exists; every test that starts a cluster has a row (of its own or of a
// subtest) and reaches testenv.Tier (and, in a package with lanes,
// laneFunc); every row outside make test's tier
// belongs to a test that reaches testenv.Tier (else the row changes
// nothing).
func Check(root string, t *tiers.Table) ([]string, error) {
	pkgs, err := scan(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	listed := map[string]bool{} // "pkg TestX"
	for _, r := range t.Rows {
		if !r.GoTest() {
			continue
		}
		top, _, _ := strings.Cut(r.Test, "/")
		listed[r.Package+" "+top] = true
		funcs := pkgs[r.Package]
		if funcs == nil {
			problems = append(problems, fmt.Sprintf("%s:%d: package %s has no tests", tiers.DocPath, r.Line, r.Package))
			continue
		}
		if _, ok := funcs[top]; !ok || !testName.MatchString(top) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s has no test %s (renamed or removed? move its row with it)", tiers.DocPath, r.Line, r.Package, top))
			continue
		}
		if r.Tier != tiers.Test && !reaches(funcs, top, func(f *fn) bool { return f.tier }) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s %s is in the %s tier but never calls testenv.Tier, so it runs in make test too", tiers.DocPath, r.Line, r.Package, top, r.Tier))
		}
	}
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		funcs := pkgs[d]
		var names []string
		for n := range funcs {
			if testName.MatchString(n) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if !reaches(funcs, n, func(f *fn) bool { return f.starts }) {
				continue
			}
			pos := funcs[n].pos
			rel, _ := filepath.Rel(root, pos.Filename)
			if !listed[d+" "+n] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s starts a cluster and is in no tier: give it a row in %s", rel, pos.Line, n, tiers.DocPath))
			}
			if !reaches(funcs, n, func(f *fn) bool { return f.tier }) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s starts a cluster without calling testenv.Tier first", rel, pos.Line, n))
			}
			if funcs[laneFunc] != nil && !reaches(funcs, n, func(f *fn) bool { return f.calls[laneFunc] }) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s starts a cluster without taking a lane (%s): it would run beside the lanes' clusters, unbounded", rel, pos.Line, n, laneFunc))
			}
		}
	}
	return problems, nil
}
