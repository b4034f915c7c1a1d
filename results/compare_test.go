package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// synthStep is one step of a synthetic run: its identity and its base
// latency scale, ms.
type synthStep struct {
	step, name, nodes string
	scaleMS           float64
}

var synthSteps = []synthStep{
	{"①", "apiserver write", NodesAll, 4},
	{"⑤", "node selection", NodesAll, 2},
	{"⑦", "kubelet noticed → ready", NodesHollow, 20},
}

var synthE2E = synthStep{"e2e", "end to end", NodesAll, 30}

// synthRun is a healthy run of the small profile. Each step's pods share a
// run factor of 1 ± 15 % (uniform): what a fresh cluster, another moment on
// the machine, does to every pod of a run at once; the pods vary around it
// (a skewed, exponential tail). shift multiplies a step's latencies, by key.
func synthRun(r *rand.Rand, shift map[string]float64) *Run {
	mk := func(s synthStep) Step {
		st := Step{Step: s.step, Name: s.name, Nodes: s.nodes}
		f := 1 + 0.15*(2*r.Float64()-1)
		if m, ok := shift[st.Key()]; ok {
			f *= m
		}
		samples := make([]float64, 100)
		for i := range samples {
			samples[i] = s.scaleMS * f * (1 + 0.3*r.ExpFloat64())
		}
		st.Summary, st.SamplesMS = Summarize(samples), samples
		return st
	}
	run := &Run{Schema: Schema, Provider: "process", Profile: "small", Version: "v1.0.0", Valid: true,
		Cluster: Cluster{Topology: provider.Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 1, Schedulers: 1, HollowNodes: 20}}}
	for _, s := range synthSteps {
		run.Steps = append(run.Steps, mk(s))
	}
	run.EndToEnd = mk(synthE2E)
	return run
}

// synthSet is n runs drawn with one seed; dir names them dir/run-01...
func synthSet(dir string, seed uint64, n int, shift map[string]float64) *Set {
	r := rand.New(rand.NewPCG(seed, 0x5e7))
	s := &Set{Dir: dir}
	for i := range n {
		s.Runs = append(s.Runs, synthRun(r, shift))
		s.Dirs = append(s.Dirs, dir+"/"+RunDirName(i+1))
	}
	return s
}

var keySelect = Step{Step: "⑤", Name: "node selection", Nodes: NodesAll}.Key()

func deltaOf(t *testing.T, c *Comparison, key string) SetDelta {
	t.Helper()
	for _, d := range c.Deltas {
		if d.Key == key {
			return d
		}
	}
	t.Fatalf("no delta for %s in %+v", key, c.Deltas)
	return SetDelta{}
}

func contains(l []string, sub string) bool {
	for _, s := range l {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestCompareSetsSameDistribution(t *testing.T) {
	c := CompareSets(synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil), CompareOptions{})
	if len(c.Refused) > 0 || !c.Concluded || len(c.Warnings) > 0 {
		t.Fatalf("refused %v, concluded %v, warnings %v", c.Refused, c.Concluded, c.Warnings)
	}
	if len(c.Deltas) != len(synthSteps)+1 || c.BaseRuns != 5 || c.NewRuns != 5 || c.Threshold != 10 || c.Alpha != 0.05 || c.MinRuns != 4 {
		t.Fatalf("comparison %+v", c)
	}
	for _, d := range c.Deltas {
		if d.Regressed || d.Improved || d.Verdict != VerdictOK || d.BaseN != 5 || d.NewN != 5 {
			t.Errorf("same distribution: %+v", d)
		}
		// A 95 % interval of noise straddles 0.
		if d.P50.CILoPct > 0 || d.P50.CIHiPct < 0 || d.P50.CILevel < 95 {
			t.Errorf("%s: p50 interval [%v, %v] at %v%%", d.Key, d.P50.CILoPct, d.P50.CIHiPct, d.P50.CILevel)
		}
	}
	if len(c.Regressions()) != 0 {
		t.Errorf("regressions: %+v", c.Regressions())
	}
}

// 7 runs a side: the synthetic steps' run factors are independent, so the
// family-wise adjustment over their 8 tests is about Bonferroni's, and 5
// runs a side (smallest p 2/252) cannot clear 0.05/8 with room.
func TestCompareSetsFlagsAShiftedStep(t *testing.T) {
	base := synthSet("base", 1, 7, nil)
	cur := synthSet("new", 2, 7, map[string]float64{keySelect: 1.3})
	c := CompareSets(base, cur, CompareOptions{})
	for _, d := range c.Deltas {
		if d.Key != keySelect {
			if d.Regressed || d.Improved {
				t.Errorf("an unshifted step flagged: %+v", d)
			}
			continue
		}
		if !d.Regressed || d.Verdict != VerdictRegressed || d.P50.P >= 0.05 || d.P50.CILoPct <= 0 || d.P50.ShiftPct <= 10 ||
			!strings.HasPrefix(d.Reason, "p50 +") {
			t.Errorf("a +30 %% step: %+v", d)
		}
		if d.NewP50 <= d.BaseP50 {
			t.Errorf("medians: base %v new %v", d.BaseP50, d.NewP50)
		}
	}
	if r := c.Regressions(); len(r) != 1 || r[0].Key != keySelect {
		t.Errorf("regressions %+v, want %s alone", r, keySelect)
	}
	// The other way round it is an improvement, not a failure.
	back := CompareSets(cur, base, CompareOptions{})
	if d := deltaOf(t, back, keySelect); d.Regressed || !d.Improved || d.Verdict != VerdictImproved || d.P50.CIHiPct >= 0 {
		t.Errorf("a −23 %% step: %+v", d)
	}
	if len(back.Regressions()) != 0 || len(back.Improvements()) != 1 {
		t.Errorf("reversed: regressions %v, improvements %v", back.Regressions(), back.Improvements())
	}
	// A threshold above the shift holds it back, however significant.
	if d := deltaOf(t, CompareSets(base, cur, CompareOptions{Threshold: 60}), keySelect); d.Regressed || d.Verdict != VerdictOK {
		t.Errorf("threshold 60: %+v", d)
	}
}

// The test has power: a +30 % shift under ±15 % run-to-run noise is found
// in most 7v7 pairs (family-wise, over 8 independent tests), and the
// shift's interval covers 30 % about as often as it claims.
func TestCompareSetsPower(t *testing.T) {
	const pairs = 100
	found, covered := 0, 0
	for i := range uint64(pairs) {
		c := CompareSets(synthSet("base", 1000+i, 7, nil), synthSet("new", 5000+i, 7, map[string]float64{keySelect: 1.3}), CompareOptions{})
		d := deltaOf(t, c, keySelect)
		if d.Regressed {
			found++
		}
		if d.P50.CILoPct <= 30 && 30 <= d.P50.CIHiPct {
			covered++
		}
	}
	if found < 80 {
		t.Errorf("a +30 %% shift found in %d of %d pairs", found, pairs)
	}
	// The interval is in percent of the base median, itself noisy, so
	// its coverage of the true 30 % is approximate.
	if covered < 85 {
		t.Errorf("the p50 interval covered +30 %% in %d of %d pairs", covered, pairs)
	}
	t.Logf("found in %d, covered in %d of %d pairs", found, covered, pairs)
}

// The test's size: pairs of sets of one distribution are flagged about as
// often as alpha allows (the exact test at 5v5 rejects two-sided with
// probability 8/252 = 3.2 %, half of it upwards, per statistic), not the
// much more often a per-pod test of one run against another was.
func TestCompareSetsFalseAlarms(t *testing.T) {
	const pairs = 200
	regressedPairs, flagged, tests, perPod := 0, 0, 0, 0
	for i := range uint64(pairs) {
		base, cur := synthSet("base", 10000+i, 5, nil), synthSet("new", 20000+i, 5, nil)
		// What kstep compare did before: one run against one, per pod.
		b, n := base.Runs[0].Steps[1], cur.Runs[0].Steps[1]
		if _, p := MannWhitney(b.SamplesMS, n.SamplesMS); p < 0.05 && (n.P50-b.P50)/b.P50 > 0.1 {
			perPod++
		}
		c := CompareSets(base, cur, CompareOptions{})
		if !c.Concluded || len(c.Refused) > 0 {
			t.Fatalf("pair %d: %+v", i, c)
		}
		if d := deltaOf(t, c, keySelect); d.Regressed {
			regressedPairs++
		}
		for _, d := range c.Deltas {
			for _, e := range []Effect{d.P50, d.P99} {
				tests++
				if e.P < c.Alpha {
					flagged++
				}
			}
		}
	}
	// One step: at most 2 × 1.6 % regress by chance; 5 % + 3 sd of
	// margin is 20 of 200.
	if regressedPairs > 20 {
		t.Errorf("%d of %d same-distribution pairs regressed on one step", regressedPairs, pairs)
	}
	// Every statistic of every step: a two-sided size of 3.2 %, under 5 %.
	if rate := float64(flagged) / float64(tests); rate > 0.05 {
		t.Errorf("%d of %d same-distribution tests had p < 0.05 (%.1f %%)", flagged, tests, 100*rate)
	}
	// The per-pod test takes the run-to-run spread for a change: two run
	// factors of 1 ± 15 % differ by over 10 % in about a fifth of the
	// pairs, and 100 pods a run make that significant.
	if perPod < 3*regressedPairs || perPod < 10 {
		t.Errorf("the per-pod test flagged %d pairs, the per-run test %d: the synthetic runs lack run-to-run spread", perPod, regressedPairs)
	}
	t.Logf("%d of %d pairs regressed on %s (per-pod test of one run each: %d); %d of %d tests below alpha",
		regressedPairs, pairs, keySelect, perPod, flagged, tests)
}

// Too few runs cannot conclude: 3 a side allow no p below 0.1. That is a
// refusal, computed from alpha; forced, the deltas come without verdicts.
func TestCompareSetsTooFewRuns(t *testing.T) {
	base := synthSet("base", 1, 3, nil)
	cur := synthSet("new", 2, 3, map[string]float64{keySelect: 2})
	c := CompareSets(base, cur, CompareOptions{})
	if c.Concluded || len(c.Deltas) != 0 || !contains(c.Refused, "need at least 4 runs a side") {
		t.Fatalf("3v3: concluded %v, %d deltas, refused %v", c.Concluded, len(c.Deltas), c.Refused)
	}
	if c := CompareSets(base, cur, CompareOptions{Alpha: 0.2}); !c.Concluded || len(c.Refused) > 0 {
		t.Errorf("3v3 at alpha 0.2 (min p 0.1): refused %v", c.Refused)
	}
	if c := CompareSets(synthSet("base", 1, 4, nil), synthSet("new", 2, 4, nil), CompareOptions{}); !c.Concluded || len(c.Refused) > 0 {
		t.Errorf("4v4: refused %v", c.Refused)
	}
	// Uneven sides count as they are: 3 v 5 allows 2/C(8,3) = 0.036.
	if c := CompareSets(synthSet("base", 1, 3, nil), synthSet("new", 2, 5, nil), CompareOptions{}); !c.Concluded {
		t.Errorf("3v5: refused %v", c.Refused)
	}
	// 5 against 1: the refusal says what the single side needs.
	if c := CompareSets(synthSet("base", 1, 5, nil), synthSet("new", 2, 1, nil), CompareOptions{}); !contains(c.Refused, "need at least 4 runs a side, or 3 new runs beside these 5") {
		t.Errorf("5v1: refused %q", c.Refused)
	}
	f := CompareSets(base, cur, CompareOptions{Force: true})
	if f.Concluded || len(f.Refused) > 0 || !contains(f.Warnings, "forced: too few runs") || len(f.Deltas) != len(synthSteps)+1 {
		t.Fatalf("3v3 forced: %+v", f)
	}
	for _, d := range f.Deltas {
		if d.Regressed || d.Improved || d.Verdict != VerdictInconclusive {
			t.Errorf("3v3 forced, a verdict: %+v", d)
		}
	}
	// The doubled step's shift is still reported.
	if d := deltaOf(t, f, keySelect); d.P50.ShiftPct < 50 {
		t.Errorf("3v3 forced, a ×2 step: %+v", d)
	}
}

func TestCompareSetsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(base, cur *Set)
		want  string // in the refusal
	}{
		{"profile", func(_, cur *Set) { cur.Runs[2].Profile = "nightly" },
			`profile "nightly" in new run new/run-03, where base run base/run-01 has "small"`},
		{"provider", func(_, cur *Set) { cur.Runs[0].Provider = "docker" }, `provider "docker" in new run new/run-01`},
		{"endpoints stamp", func(_, cur *Set) { cur.Runs[1].EndpointsStamp = "endpointslices" },
			"endpoints stamp EndpointSlice in new run new/run-02, where base run base/run-01 has Endpoints"},
		{"topology", func(_, cur *Set) {
			for _, r := range cur.Runs {
				r.Cluster.Topology.HollowNodes = 50
			}
		}, "topology hollowNodes 50 in new run new/run-01, new run new/run-02, new run new/run-03, new run new/run-04, new run new/run-05, where base run base/run-01 has 20"},
		{"topology inside a side", func(base, _ *Set) { base.Runs[4].Cluster.Topology.Etcd.HeartbeatInterval.Duration = 5e7 },
			`topology etcd {"heartbeatInterval":"50ms"} in base run base/run-05`},
		{"cluster settings", func(base, cur *Set) {
			for _, r := range base.Runs {
				r.Cluster.NotAsUp = []string{}
			}
			for _, r := range cur.Runs {
				r.Cluster.NotAsUp = []string{"leaseTiming: upstream (kstep up: kstep)", "endpointsWriters: stamping"}
			}
		}, "cluster settings (where the cluster is not as kstep up starts it) [endpointsWriters: stamping; leaseTiming: upstream (kstep up: kstep)] in new run new/run-01, new run new/run-02, new run new/run-03, new run new/run-04, new run new/run-05, where base run base/run-01 has [none: as kstep up starts it]"},
		{"invalid", func(base, _ *Set) {
			base.Runs[1].Valid, base.Runs[1].Invalid = false, []string{"3 pods never Ready", "trace drops"}
		}, "base run base/run-02 is invalid: 3 pods never Ready"},
		{"invalid, no reason", func(_, cur *Set) { cur.Runs[1].Valid = false }, "new run new/run-02 is invalid: no reason recorded"},
		{"disrupted", func(_, cur *Set) {
			cur.Runs[3].Disrupted = true
			cur.Runs[3].Disruptions = []Disruption{{AtS: 2.5, Kind: "leader", Detail: "kube-scheduler lease a → b"}}
		}, "new run new/run-04 was disrupted (1 disruption(s), first at 2.5 s: leader kube-scheduler lease a → b)"},
		{"disruptions listed, flag unset", func(_, cur *Set) {
			cur.Runs[0].Disruptions = []Disruption{{Kind: "node", Detail: "hollow-3 NotReady"}}
		}, "new run new/run-01 was disrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
			tc.spoil(base, cur)
			c := CompareSets(base, cur, CompareOptions{})
			if !contains(c.Refused, tc.want) || c.Concluded || len(c.Deltas) != 0 {
				t.Fatalf("refused %q, concluded %v, %d deltas; want a refusal with %q", c.Refused, c.Concluded, len(c.Deltas), tc.want)
			}
			// Forced, the same sentence is a warning and the steps are judged.
			f := CompareSets(base, cur, CompareOptions{Force: true})
			if len(f.Refused) != 0 || !contains(f.Warnings, "forced: "+tc.want) || !f.Concluded || len(f.Deltas) != len(synthSteps)+1 {
				t.Fatalf("forced: refused %q, warnings %q, concluded %v, %d deltas", f.Refused, f.Warnings, f.Concluded, len(f.Deltas))
			}
			for _, d := range f.Deltas {
				if d.Verdict == VerdictInconclusive || d.Verdict == "" {
					t.Errorf("forced, no verdict: %+v", d)
				}
			}
		})
	}
	if c := CompareSets(&Set{}, synthSet("new", 2, 5, nil), CompareOptions{Force: true}); !contains(c.Refused, "the base set has no runs") {
		t.Errorf("an empty base: %+v", c)
	}
}

// Extra actor flags are how a build's flags and failpoints are varied:
// they are named in a warning and the comparison goes on.
func TestCompareSetsArgsAreWarnings(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	for _, r := range cur.Runs {
		r.Cluster.Topology.SchedulerArgs = []string{"--feature-gates=X=true"}
	}
	cur.Runs[0].Cluster.Topology.APIServerArgs = []string{"--failpoint=slow-write"}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) > 0 || !c.Concluded || len(c.Deltas) == 0 {
		t.Fatalf("refused %v", c.Refused)
	}
	if !contains(c.Warnings, `topology schedulerArgs ["--feature-gates=X=true"] in new run new/run-01, new run new/run-02, new run new/run-03, new run new/run-04, new run new/run-05, where base run base/run-01 has null`) ||
		!contains(c.Warnings, `topology apiserverArgs ["--failpoint=slow-write"] in new run new/run-01,`) {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// Runs that recorded the same cluster settings, in any order, are
// compared; runs from before the record, beside runs with it, are compared
// with a warning.
func TestCompareSetsClusterSettingsAlike(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	for i, r := range append(slices.Clone(base.Runs), cur.Runs...) {
		r.Cluster.NotAsUp = []string{"a: 1", "b: 2"}
		if i%2 == 1 {
			r.Cluster.NotAsUp = []string{"b: 2", "a: 1"}
		}
	}
	if c := CompareSets(base, cur, CompareOptions{}); len(c.Refused) > 0 || len(c.Warnings) > 0 || !c.Concluded {
		t.Fatalf("alike: refused %q, warnings %q", c.Refused, c.Warnings)
	}
	for _, r := range cur.Runs {
		r.Cluster.NotAsUp = nil
	}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) > 0 || !c.Concluded || !contains(c.Warnings, "some runs recorded the settings in which their cluster is not as kstep up starts it and some did not") {
		t.Fatalf("unrecorded on one side: refused %q, warnings %q", c.Refused, c.Warnings)
	}
}

// A setting of the topology that run.json's not_as_up also lists is
// judged once, by the topology's rule: a different actorProcs (how the
// actors' processes run) is a warning, not also a refusal; a different
// etcd tuning is one refusal, not two.
func TestCompareSetsTopologySettingsJudgedOnce(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	for _, r := range base.Runs {
		r.Cluster.NotAsUp = []string{"leaseTiming: kstep (kstep up: upstream)"}
	}
	for _, r := range cur.Runs {
		r.Cluster.Topology.ActorProcs = 3
		r.Cluster.NotAsUp = []string{"actorProcs: 3 (kstep up: 1 on this machine)", "leaseTiming: kstep (kstep up: upstream)"}
	}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) > 0 || !c.Concluded || !contains(c.Warnings, "topology actorProcs 3 in new run new/run-01") {
		t.Fatalf("actorProcs: refused %q, warnings %q; want compared with a warning", c.Refused, c.Warnings)
	}
	for _, r := range cur.Runs {
		r.Cluster.Topology.ActorProcs = 0
		r.Cluster.Topology.Etcd.HeartbeatInterval.Duration = 5e7
		r.Cluster.NotAsUp = []string{`etcd: {"heartbeatInterval":"50ms"} (kstep up: {})`, "leaseTiming: kstep (kstep up: upstream)"}
	}
	c = CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) != 1 || !contains(c.Refused, `topology etcd {"heartbeatInterval":"50ms"} in new run new/run-01`) {
		t.Fatalf("etcd tuning: refused %q; want the one topology refusal", c.Refused)
	}
	// A setting outside the topology still refuses.
	cur.Runs[2].Cluster.NotAsUp = append(cur.Runs[2].Cluster.NotAsUp, "supervise: false")
	c = CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) != 2 || !contains(c.Refused, "cluster settings (where the cluster is not as kstep up starts it) [leaseTiming: kstep (kstep up: upstream); supervise: false] in new run new/run-03") {
		t.Fatalf("supervise: refused %q", c.Refused)
	}
}

func TestCompareSetsMixedBuildsWarn(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	base.Runs[3].Version = "v1.0.1"
	// The new side's build differs from the base's: that is what a
	// comparison is for, no warning.
	for _, r := range cur.Runs {
		r.Version = "v2.0.0"
	}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Refused) > 0 || len(c.Warnings) != 1 ||
		!contains(c.Warnings, "the base set mixes builds: v1.0.0 in base/run-01, base/run-02, base/run-03, base/run-05; v1.0.1 in base/run-04") {
		t.Errorf("refused %v, warnings %q", c.Refused, c.Warnings)
	}
}

// A step measured on one side only is listed, never dropped; one measured
// by some runs only is compared over those, with a warning.
func TestCompareSetsStepsOnOneSide(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	extra := Step{Step: "⑧", Name: "endpoints", Nodes: NodesAll, Summary: Summary{Count: 10, P50: 3, P99: 9}}
	for _, r := range cur.Runs {
		r.Steps = append(r.Steps, extra)
	}
	for _, r := range base.Runs {
		r.Steps = r.Steps[1:] // ① is gone from the base
	}
	// ⑦ unmeasured (no samples) in one new run.
	cur.Runs[2].Steps[2].Summary = Summary{}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.OnlyNew) != 2 || c.OnlyNew[0] != synthSteps[0].key() || c.OnlyNew[1] != extra.Key() || len(c.OnlyBase) != 0 {
		t.Errorf("only base %v, only new %v", c.OnlyBase, c.OnlyNew)
	}
	if len(c.Deltas) != 3 {
		t.Errorf("%d deltas, want ⑤, ⑦ and e2e", len(c.Deltas))
	}
	k7 := synthSteps[2].key()
	if d := deltaOf(t, c, k7); d.BaseN != 5 || d.NewN != 4 || d.Verdict == VerdictInconclusive || !contains(c.Warnings, "step "+k7+": measured in 4 of 5 new runs") {
		t.Errorf("⑦ in 4 new runs: %+v, warnings %q", d, c.Warnings)
	}
	back := CompareSets(cur, base, CompareOptions{})
	if len(back.OnlyBase) != 2 || len(back.OnlyNew) != 0 {
		t.Errorf("reversed: only base %v, only new %v", back.OnlyBase, back.OnlyNew)
	}
}

func (s synthStep) key() string { return Step{Step: s.step, Name: s.name, Nodes: s.nodes}.Key() }

// Runs of schema v2 have no Nodes; their steps are every pod's ("all") and
// meet v3's "all" steps. The schemas' difference is a warning.
func TestCompareSetsSchemaV2(t *testing.T) {
	base, cur := synthSet("base", 1, 5, nil), synthSet("new", 2, 5, nil)
	for _, r := range base.Runs {
		r.Schema = SchemaV2
		for i := range r.Steps {
			if r.Steps[i].Nodes == NodesAll {
				r.Steps[i].Nodes = ""
			}
		}
		r.EndToEnd.Nodes = ""
	}
	c := CompareSets(base, cur, CompareOptions{})
	if len(c.Deltas) != len(synthSteps)+1 || len(c.OnlyBase)+len(c.OnlyNew) != 0 || !contains(c.Warnings, SchemaV2) {
		t.Fatalf("%d deltas, only %v %v, warnings %q", len(c.Deltas), c.OnlyBase, c.OnlyNew, c.Warnings)
	}
	if d := deltaOf(t, c, keySelect); d.Nodes != NodesAll {
		t.Errorf("v2 step's nodes %q, want all", d.Nodes)
	}
}

// Two sets of identical runs: every shift is 0 and p is 1.
func TestCompareSetsIdentical(t *testing.T) {
	base := synthSet("base", 7, 5, nil)
	cur := &Set{Runs: base.Runs, Dirs: []string{"a", "b", "c", "d", "e"}}
	c := CompareSets(base, cur, CompareOptions{})
	for _, d := range c.Deltas {
		if d.P50.ShiftPct != 0 || d.P99.ShiftPct != 0 || d.P50.P != 1 || d.P99.P != 1 || d.Verdict != VerdictOK {
			t.Errorf("identical: %s", fmt.Sprintf("%+v", d))
		}
	}
}

// setOfP50 is a set of runs whose one step has these p50s (p99 three
// times each).
func setOfP50(dir string, p50s ...float64) *Set {
	s := &Set{Dir: dir}
	for i, p := range p50s {
		st := Step{Step: "⑤", Name: "node selection", Nodes: NodesAll, Summary: Summary{Count: 10, P50: p, P99: 3 * p}}
		s.Runs = append(s.Runs, &Run{Schema: Schema, Profile: "small", Provider: "process", Valid: true, Steps: []Step{st}})
		s.Dirs = append(s.Dirs, fmt.Sprintf("%s/run-%02d", dir, i+1))
	}
	return s
}

// A shift beyond the threshold that the runs' spread does not support is
// no regression, and the verdict says why.
func TestCompareSetsNotSignificant(t *testing.T) {
	c := CompareSets(setOfP50("base", 10, 11, 12, 13, 14), setOfP50("new", 11, 12, 22, 23, 24), CompareOptions{})
	d := deltaOf(t, c, keySelect)
	// Differences new − base: median +9 ms, 75 % of the base median 12.
	// Base U = 6 of 25 with ties at 11 and 12: 54 of the 252 splits put a
	// mid-rank sum as far from its mean as base's 21, p = 3/14.
	if d.Regressed || d.Verdict != VerdictOK || d.P50.ShiftPct != 75 || math.Abs(d.P50.P-3.0/14) > 1e-12 ||
		d.Reason != fmt.Sprintf("p50 +75.0%% not significant (p=%.3g, adjusted %.3g); p99 +75.0%% not significant (p=%.3g, adjusted %.3g)", d.P50.P, d.P50.PAdj, d.P99.P, d.P99.PAdj) {
		t.Errorf("%+v", d)
	}
	// Every base run below every new one: significant, regressed.
	c = CompareSets(setOfP50("base", 10, 11, 12, 13, 14), setOfP50("new", 15, 16, 22, 23, 24), CompareOptions{})
	if d := deltaOf(t, c, keySelect); !d.Regressed || d.P50.P != 2.0/252 || d.P50.CILoPct <= 0 {
		t.Errorf("separated: %+v", d)
	}
}

// A significant +40 % of a 0.05 ms step is 20 µs: below the default floor
// it is no regression; with the floor off it is.
func TestCompareSetsMinShift(t *testing.T) {
	base, cur := setOfP50("base", 0.050, 0.051, 0.052, 0.053, 0.054), setOfP50("new", 0.070, 0.071, 0.072, 0.073, 0.074)
	d := deltaOf(t, CompareSets(base, cur, CompareOptions{}), keySelect)
	if d.Regressed || d.P50.P != 2.0/252 || math.Abs(d.P50.ShiftMS-0.02) > 1e-9 {
		t.Errorf("a 20 µs shift regressed at the default floor: %+v", d)
	}
	if d := deltaOf(t, CompareSets(base, cur, CompareOptions{MinShiftMS: -1}), keySelect); !d.Regressed {
		t.Errorf("with no floor a significant +40 %% is a regression: %+v", d)
	}
	// 5 ms more in a 5 ms step, as the nightly self-check's failpoint adds.
	base, cur = setOfP50("base", 4.5, 4.8, 5.0, 5.2, 5.6), setOfP50("new", 9.4, 9.9, 10.1, 10.3, 10.8)
	if d := deltaOf(t, CompareSets(base, cur, CompareOptions{}), keySelect); !d.Regressed {
		t.Errorf("+5 ms of 5 ms: %+v", d)
	}
}
