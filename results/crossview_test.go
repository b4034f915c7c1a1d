package results

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// viewRow is a row of a constructed run: its identity, its two stamps and
// its latency scale, ms.
type viewRow struct {
	step, name, nodes, from, to string
	scaleMS                     float64
}

// Rows as bench writes them: the client's own, the outside view's (both
// harness stamps), and the cluster's (an actor's stamps).
var (
	rowClient   = viewRow{"①", "client → apiserver: sent → 201", NodesAll, "client.rs.sent", "client.rs.acked", 4}
	rowSeenMade = viewRow{"①–③", "outside: client sent → pod seen created", NodesAll, "client.rs.sent", "client.pod.added", 12}
	rowSeenRun  = viewRow{"⑥–⑦", "outside: seen bound → seen Running", NodesHollow, "client.pod.bound", "client.pod.running", 30}
	rowSelect   = viewRow{"⑤", "node selection", NodesAll, "pod.observed.scheduler", "pod.scheduled", 2}
	rowSandbox  = viewRow{"⑦-b", "sandbox + CNI + volumes", NodesHollow, "pod.observed.kubelet", "pod.sandbox.ready", 20}
	rowE2E      = viewRow{"e2e", "client sent → pod Ready observed", NodesAll, "client.rs.sent", "pod.ready.observed", 60}
)

// clusterStamps are what only a component stamps: not observable on an
// external cluster.
var clusterStamps = []string{"pod.observed.scheduler", "pod.scheduled", "pod.observed.kubelet", "pod.sandbox.ready"}

// viewRun is one healthy run of profile "quick" with rows on provider,
// its sources and, on external, the component stamps not observable.
func viewRun(r *rand.Rand, prov string, outside bool, rows ...viewRow) *Run {
	run := &Run{Schema: Schema, Provider: prov, Profile: "quick", Version: "v1", Valid: true, OutsideView: outside}
	if prov == provider.External {
		run.Cluster.External = &External{Nodes: 10}
		run.NotObservable = clusterStamps
		run.Unavailable = clusterStamps
	} else {
		run.Cluster.Topology = provider.Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 1, Schedulers: 1, HollowNodes: 50}
	}
	seen := map[string]bool{}
	for _, row := range rows {
		f := 1 + 0.1*(2*r.Float64()-1)
		samples := make([]float64, 50)
		for i := range samples {
			samples[i] = row.scaleMS * f * (1 + 0.3*r.ExpFloat64())
		}
		st := Step{Step: row.step, Name: row.name, Nodes: row.nodes, From: row.from, To: row.to, Summary: Summarize(samples), SamplesMS: samples}
		if row.step == "e2e" {
			run.EndToEnd = st
		} else {
			run.Steps = append(run.Steps, st)
		}
		for _, s := range []string{row.from, row.to} {
			if !seen[s] {
				seen[s] = true
				where := FromCluster
				if strings.HasPrefix(s, "client.") || s == "pod.ready.observed" {
					where = FromHarness
				}
				run.Sources = append(run.Sources, StepSource{Step: s, Where: where})
			}
		}
	}
	if prov == provider.External {
		for _, s := range clusterStamps {
			run.Sources = append(run.Sources, StepSource{Step: s, Where: NotObservable})
		}
	}
	return run
}

func viewSet(dir string, seed uint64, n int, prov string, outside bool, rows ...viewRow) *Set {
	r := rand.New(rand.NewPCG(seed, 0x71e))
	s := &Set{Dir: dir}
	for i := range n {
		s.Runs = append(s.Runs, viewRun(r, prov, outside, rows...))
		s.Dirs = append(s.Dirs, dir+"/"+RunDirName(i+1))
	}
	return s
}

var (
	externalRows = []viewRow{rowClient, rowSeenMade, rowSeenRun, rowE2E}
	processRows  = []viewRow{rowClient, rowSelect, rowSandbox, rowSeenMade, rowSeenRun, rowE2E}
)

// An external set against a process set of the same profile with the
// outside view: the provider and the topology differ without a refusal,
// only the rows both have are judged, and every row of the process side
// alone is left out with the stamp the external cluster could not see;
// either way round.
func TestCompareSetsCrossView(t *testing.T) {
	ext := viewSet("ext", 1, 5, provider.External, true, externalRows...)
	proc := viewSet("proc", 2, 5, "process", true, processRows...)
	for _, tc := range []struct {
		name      string
		base, cur *Set
		procSide  string
	}{{"external base", ext, proc, "new"}, {"external new", proc, ext, "base"}} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareSets(tc.base, tc.cur, CompareOptions{})
			if len(c.Refused) > 0 || !c.CrossView || !c.Concluded {
				t.Fatalf("refused %q, cross view %v, concluded %v", c.Refused, c.CrossView, c.Concluded)
			}
			if !contains(c.Warnings, "cross view: the ") || !contains(c.Warnings, "only the rows both have are compared") {
				t.Errorf("warnings %q do not say it is a cross view", c.Warnings)
			}
			var keys []string
			for _, d := range c.Deltas {
				keys = append(keys, d.Key)
				if d.Verdict == VerdictInconclusive || d.Verdict == "" {
					t.Errorf("row %s: no verdict (%s)", d.Key, d.Verdict)
				}
			}
			var want []string
			for _, r := range externalRows {
				want = append(want, Step{Step: r.step, Name: r.name, Nodes: r.nodes}.Key())
			}
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("compared rows %q, want the ones both have %q", keys, want)
			}
			if len(c.LeftOut) != 2 {
				t.Fatalf("left out %+v, want node selection and sandbox", c.LeftOut)
			}
			for _, l := range c.LeftOut {
				if l.In != tc.procSide || !strings.Contains(l.Why, "not observable on the") ||
					!strings.HasPrefix(l.Why, map[string]string{rowSelect.name: rowSelect.from, rowSandbox.name: rowSandbox.from}[l.Name]) {
					t.Errorf("left out %+v: want it in %s, not observable on the external side by its first stamp", l, tc.procSide)
				}
			}
		})
	}
}

// The refusals of a cross view: a process side without the outside view
// and two sides with no row in common are refused whatever Force says; a
// set that mixes both views, or process runs that differ among themselves
// (topology, provider), are refused as any set measured differently is,
// and Force turns those into warnings.
func TestCompareSetsCrossViewRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur func() *Set
		want      string
		unforced  bool
	}{
		{"no outside view", func() *Set { return viewSet("ext", 1, 5, provider.External, true, externalRows...) },
			func() *Set { return viewSet("proc", 2, 5, "process", false, rowClient, rowSelect, rowSandbox, rowE2E) },
			"cross view without the outside view: new run proc/run-01, new run proc/run-02, new run proc/run-03, new run proc/run-04, new run proc/run-05 ran on process without outsideView", true},
		{"no row in common", func() *Set { return viewSet("ext", 1, 5, provider.External, true, rowSeenMade, rowSeenRun) },
			func() *Set { return viewSet("proc", 2, 5, "process", true, rowSelect, rowSandbox) },
			"no row in common: the base runs measured 2 rows and the new runs 2", true},
		{"a set of both views", func() *Set {
			s := viewSet("ext", 1, 5, provider.External, true, externalRows...)
			s.Runs[3] = viewRun(rand.New(rand.NewPCG(9, 9)), "process", true, processRows...)
			return s
		}, func() *Set { return viewSet("proc", 2, 5, "process", true, processRows...) },
			"the base set mixes runs on the external provider (base run ext/run-01, base run ext/run-02, base run ext/run-03, base run ext/run-05) with runs on a provider that runs the cluster (base run ext/run-04)", false},
		{"process runs of two topologies", func() *Set { return viewSet("ext", 1, 5, provider.External, true, externalRows...) },
			func() *Set {
				s := viewSet("proc", 2, 5, "process", true, processRows...)
				s.Runs[2].Cluster.Topology.HollowNodes = 20
				return s
			}, "topology hollowNodes 20 in new run proc/run-03, where new run proc/run-01 has 50", false},
		{"process and docker", func() *Set { return viewSet("ext", 1, 5, provider.External, true, externalRows...) },
			func() *Set {
				s := viewSet("proc", 2, 5, "process", true, processRows...)
				s.Runs[1].Provider = provider.Docker
				return s
			}, `provider "docker" in new run proc/run-02, where new run proc/run-01 has "process"`, false},
		{"another profile", func() *Set { return viewSet("ext", 1, 5, provider.External, true, externalRows...) },
			func() *Set {
				s := viewSet("proc", 2, 5, "process", true, processRows...)
				s.Runs[0].Profile = "small"
				return s
			}, `profile "small" in new run proc/run-01, where base run ext/run-01 has "quick"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareSets(tc.base(), tc.cur(), CompareOptions{})
			if !contains(c.Refused, tc.want) || c.Concluded || len(c.Deltas) != 0 || c.Unforced != tc.unforced {
				t.Fatalf("refused %q (unforced %v), concluded %v, %d deltas; want a refusal with %q, unforced %v",
					c.Refused, c.Unforced, c.Concluded, len(c.Deltas), tc.want, tc.unforced)
			}
			f := CompareSets(tc.base(), tc.cur(), CompareOptions{Force: true})
			if tc.unforced {
				if !contains(f.Refused, tc.want) || !f.Unforced || len(f.Deltas) != 0 {
					t.Fatalf("forced: refused %q, unforced %v, %d deltas; Force must not lift %q", f.Refused, f.Unforced, len(f.Deltas), tc.want)
				}
				return
			}
			if len(f.Refused) != 0 || !contains(f.Warnings, "forced: "+tc.want) || len(f.Deltas) == 0 {
				t.Fatalf("forced: refused %q, warnings %q, %d deltas", f.Refused, f.Warnings, len(f.Deltas))
			}
		})
	}
}

// A row one side lacks says why, from the other side's run.json: a stamp
// no actor of it stamps, one it does not record without the outside view,
// or no sample on that population.
func TestCompareSetsLeftOutWhy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	base := &Set{Runs: []*Run{viewRun(r, "process", false, rowClient, rowSelect, rowE2E)}}
	base.Runs[0].Unavailable = []string{"pod.sandbox.ready"}
	hollowOnly := rowSelect
	hollowOnly.nodes = NodesReal
	cur := &Set{Runs: []*Run{viewRun(r, "process", true, rowClient, rowSelect, rowSandbox, rowSeenMade, hollowOnly, rowE2E)}}
	c := CompareSets(base, cur, CompareOptions{Force: true})
	why := map[string]string{}
	for _, l := range c.LeftOut {
		if l.In != "new" {
			t.Errorf("left out %+v: only the new side has extra rows", l)
		}
		why[l.Name+"|"+l.Nodes] = l.Why
	}
	for key, want := range map[string]string{
		rowSandbox.name + "|" + NodesHollow: "no actor of the base runs stamps pod.sandbox.ready",
		rowSeenMade.name + "|" + NodesAll:   "the base runs do not record client.pod.added (they ran without the outside view)",
		hollowOnly.name + "|" + NodesReal:   "the base runs have no sample of it on real nodes",
	} {
		if why[key] != want {
			t.Errorf("%s left out because %q, want %q", key, why[key], want)
		}
	}
	if len(c.LeftOut) != 3 || c.CrossView || len(c.Deltas) != 3 {
		t.Errorf("left out %d, cross view %v, %d deltas; want 3, false, 3", len(c.LeftOut), c.CrossView, len(c.Deltas))
	}
}
