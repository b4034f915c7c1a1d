package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the path every pattern below is relative to.
const module = "github.com/kstep-dev/kstep"

// A rule: the packages matching pkgs (but not skip) must not import a
// package matching forbidden (but not allowed), directly, or with deps
// through any chain of imports. Patterns are paths in the module: "x" is
// x, "x/..." is x and every package under it, "..." every package.
type rule struct {
	// doc is the doc.go that states the rule; says is words of it, the
	// line they begin on is the one a failure names.
	doc, says          string
	pkgs, skip         []string
	forbidden, allowed []string
	deps               bool
}

// actors are the actors' packages.
var actors = []string{"cluster/apiserver/...", "cluster/etcd", "cluster/storage", "cluster/controller/...",
	"cluster/scheduler/...", "cluster/kubelet/...", "cluster/node/..."}

// implementations are the providers' implementations.
var implementations = []string{"cluster/provider/process/...", "cluster/provider/docker/...", "cluster/provider/external/..."}

func join(ss ...[]string) []string { return slices.Concat(ss...) }

var rules = []rule{
	{doc: "chaos/doc.go", says: "It must never import the actors' packages",
		pkgs: []string{"chaos/..."}, forbidden: join(actors, implementations, []string{"bench/...", "results/..."}),
		allowed: []string{"cluster/kubelet/hollowctl"}, deps: true},
	{doc: "loadgen/doc.go", says: "It must not import the actors' packages",
		pkgs: []string{"loadgen/..."}, forbidden: actors},
	{doc: "bench/doc.go", says: "it imports no implementation",
		pkgs: []string{"bench/..."}, forbidden: implementations},
	{doc: "cluster/provider/doc.go", says: "bench and chaos import this package and no implementation",
		pkgs: []string{"bench/...", "chaos/..."}, forbidden: implementations},
	{doc: "cluster/provider/doc.go", says: "It must not import an implementation",
		pkgs: []string{"cluster/provider"}, forbidden: join(implementations, actors)},
	{doc: "cluster/provider/process/doc.go", says: "It must not import the actors' packages",
		pkgs: []string{"cluster/provider/process/..."}, forbidden: actors},
	{doc: "cluster/provider/docker/doc.go", says: "It must not import the actors' packages",
		pkgs: []string{"cluster/provider/docker/..."}, forbidden: actors},
	{doc: "cluster/provider/external/doc.go", says: "It must not import the harness",
		pkgs: []string{"cluster/provider/external/..."}, forbidden: join(actors, []string{"bench/...", "chaos/...", "loadgen/..."})},
	{doc: "cluster/storage/doc.go", says: "controllers, schedulers and kubelets never import it",
		pkgs: []string{"cluster/controller/...", "cluster/scheduler/...", "cluster/kubelet/..."}, forbidden: []string{"cluster/storage"}},
	{doc: "cluster/storage/doc.go", says: "or any actor other than the apiserver",
		pkgs: []string{"cluster/storage"}, forbidden: actors, allowed: []string{"cluster/storage"}},
	// Of "never talk to each other, to etcd, or to any actor but the
	// apiserver", etcd is an import rule; the rest is about requests
	// (replicationcontroller reuses replicaset's code, resourcequota the
	// apiserver's quota evaluation: code, not talk).
	{doc: "cluster/controller/doc.go", says: "Controllers never talk to each other, to etcd",
		pkgs: []string{"cluster/controller/..."}, forbidden: []string{"cluster/etcd", "cluster/storage", "cluster/etcdadmin"}},
	{doc: "cluster/scheduler/doc.go", says: "It must not touch etcd, the apiserver's internals, or any other actor",
		pkgs: []string{"cluster/scheduler/..."}, forbidden: actors, allowed: []string{"cluster/scheduler/..."}},
	{doc: "cluster/kubelet/doc.go", says: "It must not touch etcd",
		pkgs: []string{"cluster/kubelet/..."}, forbidden: []string{"cluster/etcd", "cluster/storage", "cluster/etcdadmin"}},
	{doc: "cluster/kubelet/hollowctl/doc.go", says: "It must not know chaos, providers or the kubelet's internals",
		pkgs: []string{"cluster/kubelet/hollowctl"}, forbidden: []string{"chaos/...", "cluster/provider/...", "cluster/kubelet/..."},
		allowed: []string{"cluster/kubelet/hollowctl"}},
	{doc: "cluster/node/doc.go", says: "It must not import cluster/images",
		pkgs: []string{"cluster/node/..."}, forbidden: []string{"cluster/images/..."}},
	{doc: "cluster/nodelabels/doc.go", says: "It must not import the apiserver or the kubelet",
		pkgs: []string{"cluster/nodelabels"}, forbidden: []string{"cluster/apiserver/...", "cluster/kubelet/..."}},
	{doc: "cluster/failpoint/doc.go", says: "it imports no kstep package",
		pkgs: []string{"cluster/failpoint"}, forbidden: []string{"..."}},
	{doc: "cluster/etcdadmin/doc.go", says: "it imports no kstep package",
		pkgs: []string{"cluster/etcdadmin"}, forbidden: []string{"..."}},
	{doc: "preflight/doc.go", says: "it imports loadgen (the job) and no other kstep package",
		pkgs: []string{"preflight"}, forbidden: []string{"..."}, allowed: []string{"loadgen"}},
	{doc: "cmd/kstep-pause/doc.go", says: "It imports nothing of kstep and must not",
		pkgs: []string{"cmd/kstep-pause"}, forbidden: []string{"..."}},
	{doc: "cmd/kstep-app/doc.go", says: "It imports nothing of kstep and must not",
		pkgs: []string{"cmd/kstep-app"}, forbidden: []string{"..."}},
	{doc: "cmd/kstep/doc.go", says: "lives in the library packages, which must not import this one",
		pkgs: []string{"..."}, forbidden: []string{"cmd/kstep"}},
	{doc: "hack/tiers/doc.go", says: "It owns no part of kstep and must not be imported by it",
		pkgs: []string{"..."}, skip: []string{"hack/..."}, forbidden: []string{"hack/tiers"}},
	{doc: "hack/conformance/doc.go", says: "It owns no part of kstep and must not be imported by it",
		pkgs: []string{"..."}, skip: []string{"hack/..."}, forbidden: []string{"hack/conformance"}},
	{doc: "hack/importrules/doc.go", says: "It owns no part of kstep and must not be imported by it",
		pkgs: []string{"..."}, skip: []string{"hack/..."}, forbidden: []string{"hack/importrules"}},
	{doc: "cluster/scheduler/internal/st/doc.go", says: "it must not be imported by non-test code",
		pkgs: []string{"..."}, forbidden: []string{"cluster/scheduler/internal/st"}},
	{doc: "internal/testenv/doc.go", says: "no other file of a kstep package",
		pkgs: []string{"..."}, skip: []string{"internal/testenv"}, forbidden: []string{"internal/testenv"}},
	{doc: "internal/util/gopool/doc.go", says: "imports no other kstep package",
		pkgs: []string{"internal/util/..."}, forbidden: []string{"..."}, allowed: []string{"internal/util/..."}},
	{doc: "internal/util/jsonctl/doc.go", says: "it imports no other kstep package",
		pkgs: []string{"internal/util/..."}, forbidden: []string{"..."}, allowed: []string{"internal/util/..."}},
	{doc: "internal/tiers/doc.go", says: "Who may import it: internal/testenv and hack/tiers",
		pkgs: []string{"..."}, skip: []string{"internal/testenv", "hack/tiers", "internal/tiers"}, forbidden: []string{"internal/tiers"}},
	{doc: "internal/tiers/doc.go", says: "It must not import any kstep package",
		pkgs: []string{"internal/tiers"}, forbidden: []string{"..."}},
}

// match reports whether the module path p matches pattern.
func match(pattern, p string) bool {
	rel, ok := strings.CutPrefix(p, module)
	if !ok || (rel != "" && rel[0] != '/') {
		return false
	}
	rel = strings.TrimPrefix(rel, "/")
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, p) })
}

// pkg is what go list says of a package (its non-test imports).
type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
	Deps       []string
}

// root is the module's directory.
func root(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// list is every package of the module, by import path.
func list(t *testing.T, dir string) map[string]*pkg {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,Imports,Deps", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// line is the line of path's comments on which says begins, 0 if they do
// not say it. The comment lines are read as one text (their "//" and line
// breaks as one space), so says may run over lines.
func line(path, says string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var text strings.Builder
	var lineAt []int // lineAt[i]: the line of text's byte i
	for n, l := range strings.Split(string(b), "\n") {
		c, ok := strings.CutPrefix(strings.TrimSpace(l), "//")
		if !ok {
			continue
		}
		c = strings.TrimSpace(c) + " "
		text.WriteString(c)
		for range c {
			lineAt = append(lineAt, n+1)
		}
	}
	i := strings.Index(text.String(), says)
	if i < 0 {
		return 0, nil
	}
	return lineAt[i], nil
}

// chain is a path of imports from p to dep (p first), through the
// module's packages.
func chain(pkgs map[string]*pkg, from, dep string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == dep {
			var out []string
			for p := cur; p != ""; p = prev[p] {
				out = append(out, strings.TrimPrefix(p, module+"/"))
			}
			slices.Reverse(out)
			return out
		}
		if p := pkgs[cur]; p != nil {
			for _, im := range p.Imports {
				if _, seen := prev[im]; !seen {
					prev[im] = cur
					queue = append(queue, im)
				}
			}
		}
	}
	return nil
}

// TestImportRules checks every rule of the table against the module's
// packages.
func TestImportRules(t *testing.T) {
	dir := root(t)
	pkgs := list(t, dir)
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, r := range rules {
		n, err := line(filepath.Join(dir, r.doc), r.says)
		if err != nil {
			t.Errorf("%s: %v", r.doc, err)
			continue
		}
		where := r.doc + ":" + strconv.Itoa(n)
		if n == 0 {
			t.Errorf("%s no longer says %q: change the rule's row with the doc", r.doc, r.says)
			continue
		}
		bound := 0
		for _, path := range paths {
			if !matchAny(r.pkgs, path) || matchAny(r.skip, path) || !strings.HasPrefix(path, module) {
				continue
			}
			bound++
			p := pkgs[path]
			imports := p.Imports
			if r.deps {
				imports = p.Deps
			}
			for _, im := range imports {
				if im == path || !matchAny(r.forbidden, im) || matchAny(r.allowed, im) {
					continue
				}
				how := "imports"
				if r.deps && !slices.Contains(p.Imports, im) {
					how = "imports (" + strings.Join(chain(pkgs, path, im), " → ") + ")"
				}
				t.Errorf("%s %s %s, which %s forbids: %q",
					strings.TrimPrefix(path, module+"/"), how, strings.TrimPrefix(im, module+"/"), where, r.says)
			}
		}
		if bound == 0 {
			t.Errorf("%s: the rule binds no package (%v): change the row", where, r.pkgs)
		}
	}
}
