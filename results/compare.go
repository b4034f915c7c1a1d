package results

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// Defaults of CompareOptions.
const (
	DefaultThreshold = 10   // percent
	DefaultAlpha     = 0.05 // two-sided significance level
	// DefaultMinShiftMS is the smallest shift that counts, in ms: +25 %
	// of a 0.05 ms step (an informer handing a ReplicaSet on) is 12 µs,
	// within what two fresh clusters on a shared machine differ by, and
	// no user waits for it.
	DefaultMinShiftMS = 0.25
)

// CompareOptions tune CompareSets.
type CompareOptions struct {
	Threshold float64 // percent; default 10 when 0
	Alpha     float64 // default 0.05 when 0
	// MinShiftMS is the smallest Hodges–Lehmann shift, in ms, that is a
	// regression or an improvement, beside Threshold percent; default
	// DefaultMinShiftMS when 0, none when negative.
	MinShiftMS float64
	// Force compares what would be refused: the refusals become warnings,
	// and with too few runs the deltas come without verdicts.
	Force bool
}

func (o CompareOptions) withDefaults() CompareOptions {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	switch {
	case o.MinShiftMS == 0:
		o.MinShiftMS = DefaultMinShiftMS
	case o.MinShiftMS < 0:
		o.MinShiftMS = 0
	}
	return o
}

// Comparison is two sets of runs, step by step. Its JSON (kstep compare
// --json) uses run.json's snake_case keys.
type Comparison struct {
	BaseRuns int `json:"base_runs"`
	NewRuns  int `json:"new_runs"`
	// Threshold and Alpha are the options in effect (defaults applied).
	Threshold  float64 `json:"threshold_pct"`
	MinShiftMS float64 `json:"min_shift_ms"`
	Alpha      float64 `json:"alpha"`
	// MinRuns is the fewest runs a side at which the test can reach Alpha.
	MinRuns int `json:"min_runs"`
	// Refused says why the sets are not comparable (exit 2), one sentence
	// each; empty when Force turned them into Warnings.
	Refused []string `json:"refused,omitempty"`
	// Unforced: a refusal Force does not lift is among Refused (the sides
	// have no row in common, or a cross-view comparison whose process side
	// has no outside view): there is nothing alike to compare.
	Unforced bool       `json:"unforced,omitempty"`
	Warnings []string   `json:"warnings,omitempty"`
	Deltas   []SetDelta `json:"deltas"`
	// OnlyBase and OnlyNew are the step keys measured on one side only.
	OnlyBase []string `json:"only_base,omitempty"`
	OnlyNew  []string `json:"only_new,omitempty"`
	// LeftOut is each of those rows with the reason the other side lacks
	// it (base's first, then new's).
	LeftOut []LeftOut `json:"left_out,omitempty"`
	// CrossView: one side's runs are on the external provider and the
	// other's on a provider that runs the cluster, with the outside view:
	// only the rows both have are compared (Deltas), the others are in
	// LeftOut.
	CrossView bool `json:"cross_view,omitempty"`
	// Concluded: each side has enough runs for the test to reach Alpha.
	// False, the deltas (forced) carry no verdicts.
	Concluded bool `json:"concluded"`
	// Family is how the deltas' p's were adjusted together (PAdj).
	Family Family `json:"family"`
}

// LeftOut is a row one side measured and the other did not: not compared.
type LeftOut struct {
	Key   string `json:"key"` // Step.Key()
	Step  string `json:"step"`
	Name  string `json:"name"`
	Nodes string `json:"nodes"`
	// In is the side that measured it: "base" or "new".
	In string `json:"in"`
	// Why the other side has no such row, from its first run's run.json.
	Why string `json:"why"`
}

// Verdicts of a SetDelta.
const (
	VerdictRegressed    = "regressed"
	VerdictImproved     = "improved"
	VerdictOK           = "ok"           // no significant change beyond the threshold
	VerdictInconclusive = "inconclusive" // too few runs to reach Alpha
)

// SetDelta is one step of two sets side by side.
type SetDelta struct {
	Key   string `json:"key"` // Step.Key()
	Step  string `json:"step"`
	Name  string `json:"name"`
	Nodes string `json:"nodes"`
	// BaseP50 ... are medians over the runs of each run's p50 / p99, ms.
	BaseP50 float64 `json:"base_p50_ms"`
	NewP50  float64 `json:"new_p50_ms"`
	BaseP99 float64 `json:"base_p99_ms"`
	NewP99  float64 `json:"new_p99_ms"`
	// BaseP50CVPct ... are each side's run-to-run coefficient of
	// variation of the runs' p50 / p99, in percent (TrendPoint): the noise
	// the shift is judged against.
	BaseP50CVPct float64 `json:"base_p50_cv_pct"`
	NewP50CVPct  float64 `json:"new_p50_cv_pct"`
	BaseP99CVPct float64 `json:"base_p99_cv_pct"`
	NewP99CVPct  float64 `json:"new_p99_cv_pct"`
	P50          Effect  `json:"p50"`
	P99          Effect  `json:"p99"`
	// BaseN and NewN are the runs of each side that measured the step
	// (fewer than the set's when some runs lack it).
	BaseN     int  `json:"base_n"`
	NewN      int  `json:"new_n"`
	Regressed bool `json:"regressed"`
	Improved  bool `json:"improved"`
	// Verdict is one of the Verdict constants.
	Verdict string `json:"verdict"`
	// Reason says which of p50 and p99 moved, by how much and how surely.
	Reason string `json:"reason,omitempty"`
	// CannotSee, on an ok row a calibration (ApplyCalibration) found
	// blind to the threshold: the smallest shift it can see here.
	CannotSee string `json:"cannot_see,omitempty"`
}

// Effect is one statistic (p50 or p99) of a step across the runs of two
// sets: one value per run.
type Effect struct {
	// ShiftPct is the Hodges–Lehmann shift (median of every pairwise
	// difference new − base) and CILoPct..CIHiPct its distribution-free
	// interval (HodgesLehmann), in percent of the base median.
	ShiftPct float64 `json:"shift_pct"`
	CILoPct  float64 `json:"ci_lo_pct"`
	CIHiPct  float64 `json:"ci_hi_pct"`
	// CILevel is the interval's exact coverage in percent: at least
	// 100·(1−Alpha) when the runs suffice (95 at the default).
	CILevel float64 `json:"ci_level_pct"`
	P       float64 `json:"p"` // two-sided Mann–Whitney over per-run values
	// PAdj is P adjusted for every test of the comparison (Family): the
	// verdict's significance. 1 when there was nothing to adjust over.
	PAdj float64 `json:"p_adj"`
	// ShiftMS is the Hodges–Lehmann shift in ms.
	ShiftMS float64 `json:"shift_ms"`
}

// Regressions are the deltas that regressed.
func (c *Comparison) Regressions() []SetDelta {
	return c.where(func(d SetDelta) bool { return d.Regressed })
}

// Improvements are the deltas that improved.
func (c *Comparison) Improvements() []SetDelta {
	return c.where(func(d SetDelta) bool { return d.Improved })
}

func (c *Comparison) where(keep func(SetDelta) bool) []SetDelta {
	var out []SetDelta
	for _, d := range c.Deltas {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// CompareSets sets each step of two sets of runs side by side and judges a
// regression on the spread between runs, not between pods: two runs of one
// build on fresh clusters differ by more than their pods' samples say, so a
// test over pooled per-pod samples (one run against one run) raises false
// alarms. Each run contributes one p50 and one p99 per step; a step
// regresses when the Mann–Whitney test over those per-run values, its p
// adjusted over every row's p50 and p99 together (family.go: Westfall–Young
// step-down min-P over relabellings of the runs), gives p < Alpha and their
// Hodges–Lehmann shift exceeds Threshold percent, on p50 or on p99: two
// sets of one build fail the comparison with probability at most Alpha,
// however many rows they have. The mirror image is an improvement,
// reported, never a failure.
//
// Sets that were not measured alike (profile, provider, topology, the
// settings in which their cluster is not as `kstep up` starts it, an
// invalid or disrupted run) are refused, and so are sets too small for the
// test to reach Alpha; Force turns refusals into warnings. Extra actor
// flags (topology's *Args) are how a build's flags and failpoints are
// varied: they differ with a warning.
//
// The one difference of provider that is compared is the cross view: one
// side on the external provider (only what kstep's own watches see), the
// other on a provider that runs the cluster with the outside view (the
// profile's outsideView, run.json's outside_view). Their topologies are
// not compared (an external run has none), each side's runs are checked
// against the first run of their own provider, and only the rows both
// have are judged; the rest are listed in LeftOut with the reason. A cross
// view whose other side lacks the outside view is refused, and so are two
// sides with no row in common; Force lifts neither (Unforced).
func CompareSets(base, cur *Set, o CompareOptions) *Comparison {
	o = o.withDefaults()
	c := &Comparison{Threshold: o.Threshold, MinShiftMS: o.MinShiftMS, Alpha: o.Alpha, MinRuns: MinRuns(o.Alpha)}
	if base != nil {
		c.BaseRuns = len(base.Runs)
	}
	if cur != nil {
		c.NewRuns = len(cur.Runs)
	}
	sides := []side{{"base", base}, {"new", cur}}
	if c.BaseRuns == 0 || c.NewRuns == 0 {
		for _, s := range sides {
			if s.set == nil || len(s.set.Runs) == 0 {
				c.Refused = append(c.Refused, fmt.Sprintf("the %s set has no runs", s.name))
			}
		}
		return c
	}
	refused, unforced, cross, warnings := comparable(sides)
	c.Warnings, c.CrossView = warnings, cross

	b, n := stepsOf(base), stepsOf(cur)
	for _, k := range b.order {
		if _, ok := n.byKey[k]; !ok {
			c.OnlyBase = append(c.OnlyBase, k)
			c.LeftOut = append(c.LeftOut, leftOut(b.byKey[k].step, sides[0].name, sides[1]))
		}
	}
	for _, k := range n.order {
		if _, ok := b.byKey[k]; !ok {
			c.OnlyNew = append(c.OnlyNew, k)
			c.LeftOut = append(c.LeftOut, leftOut(n.byKey[k].step, sides[1].name, sides[0]))
		}
	}
	if common := len(b.order) - len(c.OnlyBase); common == 0 {
		unforced = append(unforced, fmt.Sprintf("no row in common: the base runs measured %d rows and the new runs %d, none of them the same step, transition and nodes (see the rows left out): nothing to compare",
			len(b.order), len(n.order)))
	}
	if len(unforced) > 0 {
		c.Refused, c.Unforced, c.Concluded = append(unforced, refused...), true, false
		return c
	}
	c.Concluded = MinP(c.BaseRuns, c.NewRuns) < o.Alpha
	if !c.Concluded {
		msg := fmt.Sprintf("too few runs: %d base and %d new runs cannot reach p < %g (the smallest two-sided p they allow is %.3g); need at least %d runs a side",
			c.BaseRuns, c.NewRuns, o.Alpha, MinP(c.BaseRuns, c.NewRuns), c.MinRuns)
		// Uneven sides can do with fewer on one side: say what the
		// larger side's count asks of the other.
		if more := max(c.BaseRuns, c.NewRuns); more > c.MinRuns {
			other := "new"
			if c.NewRuns == more {
				other = "base"
			}
			msg += fmt.Sprintf(", or %d %s runs beside these %d", minOther(more, o.Alpha), other, more)
		}
		refused = append(refused, msg)
	}
	if len(refused) > 0 {
		if !o.Force {
			c.Refused = refused
			c.Concluded = false
			return c
		}
		for _, r := range refused {
			c.Warnings = append(c.Warnings, "forced: "+r)
		}
	}

	var tests []*familyTest
	for _, k := range b.order {
		ns, ok := n.byKey[k]
		if !ok {
			continue
		}
		bs := b.byKey[k]
		var runs []int
		runs = append(runs, bs.runs...)
		for _, r := range ns.runs {
			runs = append(runs, c.BaseRuns+r)
		}
		tests = append(tests,
			newFamilyTest(runs, append(append([]float64(nil), bs.p50...), ns.p50...), c.BaseRuns),
			newFamilyTest(runs, append(append([]float64(nil), bs.p99...), ns.p99...), c.BaseRuns))
		d := measure(bs, ns, o.Alpha)
		for _, x := range []struct {
			name    string
			got, of int
		}{{"base", d.BaseN, c.BaseRuns}, {"new", d.NewN, c.NewRuns}} {
			if x.got < x.of {
				c.Warnings = append(c.Warnings, fmt.Sprintf("step %s: measured in %d of %d %s runs", k, x.got, x.of, x.name))
			}
		}
		c.Deltas = append(c.Deltas, d)
	}
	adj, fam := adjust(tests, c.BaseRuns, c.NewRuns)
	c.Family = fam
	for i := range c.Deltas {
		d := &c.Deltas[i]
		d.P50.PAdj, d.P99.PAdj = adj[2*i], adj[2*i+1]
		judge(d, o, c.Concluded)
	}
	return c
}

type side struct {
	name string
	set  *Set
}

// dir names the i-th run of a set: its directory, else its ID.
func (s side) dir(i int) string {
	if i < len(s.set.Dirs) && s.set.Dirs[i] != "" {
		return s.set.Dirs[i]
	}
	if id := s.set.Runs[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("#%d", i+1)
}

// external: the run saw its cluster from outside only (the external
// provider).
func external(r *Run) bool { return r.Provider == provider.External }

// comparable checks that every run of both sides was measured as the base
// set's first run was, and that each was healthy: refusals Force lifts,
// refusals it does not (unforced), whether the sides are a cross view
// (CompareSets), and warnings. In a cross view the provider and the
// topology of a run are checked against the first run of its own view.
func comparable(sides []side) (refused, unforced []string, cross bool, warnings []string) {
	ref := sides[0].set.Runs[0]
	refName := "base run " + sides[0].dir(0)
	// Each view's first run (base's first for its own view): what a run's
	// provider and topology are checked against.
	viewRef, viewRefName := map[bool]*Run{}, map[bool]string{}
	viewOf := map[string]map[bool][]string{} // side → view → its runs
	for _, s := range sides {
		viewOf[s.name] = map[bool][]string{}
		for i, r := range s.set.Runs {
			if _, ok := viewRef[external(r)]; !ok {
				viewRef[external(r)], viewRefName[external(r)] = r, s.name+" run "+s.dir(i)
			}
			viewOf[s.name][external(r)] = append(viewOf[s.name][external(r)], s.name+" run "+s.dir(i))
		}
	}
	for _, s := range sides {
		if v := viewOf[s.name]; len(v[true]) > 0 && len(v[false]) > 0 {
			refused = append(refused, fmt.Sprintf("the %s set mixes runs on the external provider (%s) with runs on a provider that runs the cluster (%s): its runs were not measured alike",
				s.name, strings.Join(v[true], ", "), strings.Join(v[false], ", ")))
		}
	}
	if len(viewRef) == 2 && len(refused) == 0 {
		// One side all external, the other all not.
		cross = true
		ext, other := sides[0], sides[1]
		if !external(ext.set.Runs[0]) {
			ext, other = other, ext
		}
		var blind []string
		for i, r := range other.set.Runs {
			if !r.OutsideView {
				blind = append(blind, other.name+" run "+other.dir(i))
			}
		}
		if len(blind) > 0 {
			unforced = append(unforced, fmt.Sprintf("cross view without the outside view: %s ran on %s without outsideView, so it has none of the rows kstep's own watches see that the %s runs (external) have beside ① and end to end; run the profile with outsideView: true on %s",
				strings.Join(blind, ", "), other.set.Runs[0].Provider, ext.name, other.set.Runs[0].Provider))
		}
		warnings = append(warnings, fmt.Sprintf("cross view: the %s runs are on the external provider (only what kstep's own watches see), the %s runs on %s with the outside view; only the rows both have are compared, the others are left out",
			ext.name, other.name, other.set.Runs[0].Provider))
	}
	// A difference shared by several runs is one sentence naming them all.
	type diff struct {
		what, val, refName, refVal string
		runs                       []string
		refusal                    bool
	}
	var diffs []*diff
	unrecorded := false
	note := func(refusal bool, what, val, refName, refVal, run string) {
		for _, d := range diffs {
			if d.what == what && d.val == val && d.refName == refName && d.refVal == refVal {
				d.runs = append(d.runs, run)
				return
			}
		}
		diffs = append(diffs, &diff{what, val, refName, refVal, []string{run}, refusal})
	}
	for _, s := range sides {
		versions := map[string][]string{}
		var order []string
		for i, r := range s.set.Runs {
			name := s.name + " run " + s.dir(i)
			if !r.Valid {
				why := "no reason recorded"
				if len(r.Invalid) > 0 {
					why = r.Invalid[0]
				}
				refused = append(refused, fmt.Sprintf("%s is invalid: %s", name, why))
			}
			if r.Disrupted || len(r.Disruptions) > 0 {
				msg := fmt.Sprintf("%s was disrupted", name)
				if len(r.Disruptions) > 0 {
					d := r.Disruptions[0]
					msg += fmt.Sprintf(" (%d disruption(s), first at %.1f s: %s %s)", len(r.Disruptions), d.AtS, d.Kind, d.Detail)
				}
				refused = append(refused, msg+": its latencies are not a healthy cluster's")
			}
			if _, ok := versions[r.Version]; !ok {
				order = append(order, r.Version)
			}
			versions[r.Version] = append(versions[r.Version], s.dir(i))
			if r == ref {
				continue
			}
			if r.Profile != ref.Profile {
				note(true, "profile", fmt.Sprintf("%q", r.Profile), refName, fmt.Sprintf("%q", ref.Profile), name)
			}
			if r.EndpointsObject() != ref.EndpointsObject() {
				// ⑧'s endpoints row times a different write.
				note(true, "endpoints stamp", r.EndpointsObject(), refName, ref.EndpointsObject(), name)
			}
			if r.WarmUp.Rule() != ref.WarmUp.Rule() {
				// The rows cover another part of the load.
				note(true, "warm-up", r.WarmUp.Rule(), refName, ref.WarmUp.Rule(), name)
			}
			vref := ref
			if cross {
				vref = viewRef[external(r)]
			}
			vrefName := refName
			if vref != ref {
				vrefName = viewRefName[external(r)]
			}
			if r == vref {
				continue
			}
			if r.Provider != vref.Provider {
				note(true, "provider", fmt.Sprintf("%q", r.Provider), vrefName, fmt.Sprintf("%q", vref.Provider), name)
			}
			for _, f := range topologyDiff(vref.Cluster.Topology, r.Cluster.Topology) {
				note(!f.args, "topology "+f.name, f.b, vrefName, f.a, name)
			}
			// A setting of the topology (actorProcs, etcd, insecure...)
			// was judged just above, by topologyDiff's rule (flags warn,
			// the rest refuse): its not_as_up entry is not judged again.
			switch a, b := beyondTopology(vref.Cluster.NotAsUp), beyondTopology(r.Cluster.NotAsUp); {
			case a != nil && b != nil:
				if sa, sb := settingsText(a), settingsText(b); sa != sb {
					note(true, "cluster settings (where the cluster is not as kstep up starts it)", sb, vrefName, sa, name)
				}
			case (a == nil) != (b == nil) && !unrecorded:
				unrecorded = true
				warnings = append(warnings, "some runs recorded the settings in which their cluster is not as kstep up starts it and some did not (older runs): those settings are not compared")
			}
		}
		if len(order) > 1 {
			var parts []string
			for _, v := range order {
				label := v
				if label == "" {
					label = "(no version)"
				}
				parts = append(parts, fmt.Sprintf("%s in %s", label, strings.Join(versions[v], ", ")))
			}
			warnings = append(warnings, fmt.Sprintf("the %s set mixes builds: %s", s.name, strings.Join(parts, "; ")))
		}
	}
	for _, d := range diffs {
		msg := fmt.Sprintf("%s %s in %s, where %s has %s", d.what, d.val, strings.Join(d.runs, ", "), d.refName, d.refVal)
		if d.refusal {
			refused = append(refused, msg)
		} else {
			warnings = append(warnings, msg+" (extra flags vary a build; compared anyway)")
		}
	}
	// v2's steps ②, ④, ⑥ and ⑧ started from the writer's acknowledgement,
	// v3's from a stamp that causally precedes their end.
	schemas := map[string]bool{}
	for _, s := range sides {
		for _, r := range s.set.Runs {
			schemas[r.Schema] = true
		}
	}
	if len(schemas) > 1 {
		var l []string
		for k := range schemas {
			l = append(l, k)
		}
		sort.Strings(l)
		warnings = append(warnings, fmt.Sprintf("runs of different run.json schemas (%s): some steps were measured between different stamps", strings.Join(l, ", ")))
	}
	return refused, unforced, cross, warnings
}

// topologyKeys are the JSON names of provider.Topology's fields, the
// settings topologyDiff compares.
var topologyKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[provider.Topology]()
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			keys[tag] = true
		}
	}
	return keys
}()

// beyondTopology is l (a run's cluster.not_as_up, "setting: value (kstep
// up: value)" each) without the settings of the topology, which
// topologyDiff compares; nil stays nil (not recorded).
func beyondTopology(l []string) []string {
	if l == nil {
		return nil
	}
	out := []string{}
	for _, e := range l {
		if key, _, _ := strings.Cut(e, ":"); !topologyKeys[key] {
			out = append(out, e)
		}
	}
	return out
}

// settingsText is a run's cluster.not_as_up as one sentence, in a fixed
// order.
func settingsText(l []string) string {
	if len(l) == 0 {
		return "[none: as kstep up starts it]"
	}
	l = slices.Clone(l)
	sort.Strings(l)
	return "[" + strings.Join(l, "; ") + "]"
}

// leftOut is the row st, measured on side in alone, with the reason the
// other side has no such row: a stamp it could not see (not observable on
// its cluster), one no actor of it stamps, one it does not record (no
// outside view), or no sample on that population of nodes.
func leftOut(st Step, in string, other side) LeftOut {
	l := LeftOut{Key: st.Key(), Step: st.Step, Name: st.Name, Nodes: st.Nodes, In: in}
	r := other.set.Runs[0]
	ends := []string{st.From, st.To}
	recorded := func(step string) bool {
		for _, s := range r.Sources {
			if s.Step == step {
				return true
			}
		}
		return false
	}
	for _, check := range []func(step string) string{
		func(step string) string {
			if slices.Contains(r.NotObservable, step) {
				return fmt.Sprintf("%s is not observable on the %s runs' cluster: only a component of it could stamp it, and its components do not stamp kstep's tracer", step, other.name)
			}
			return ""
		},
		func(step string) string {
			if slices.Contains(r.Unavailable, step) {
				return fmt.Sprintf("no actor of the %s runs stamps %s", other.name, step)
			}
			return ""
		},
		func(step string) string {
			if len(r.Sources) == 0 || recorded(step) {
				return ""
			}
			if !r.OutsideView {
				return fmt.Sprintf("the %s runs do not record %s (they ran without the outside view)", other.name, step)
			}
			return fmt.Sprintf("the %s runs do not record %s", other.name, step)
		},
	} {
		for _, step := range ends {
			if step == "" {
				continue
			}
			if why := check(step); why != "" {
				l.Why = why
				return l
			}
		}
	}
	l.Why = fmt.Sprintf("the %s runs have no sample of it on %s nodes", other.name, l.Nodes)
	return l
}

type topoField struct {
	name string // JSON name
	a, b string // JSON values
	args bool   // an extra-flags field
}

// argsFields are the Topology fields that vary a build's flags and
// failpoints, or how its processes run (ActorProcs, ActorCPUs): a difference there is
// what a comparison is for.
var argsFields = map[string]bool{"APIServerArgs": true, "ControllerManagerArgs": true,
	"SchedulerArgs": true, "NodeArgs": true, "HollowArgs": true, "ActorProcs": true, "ActorCPUs": true}

// topologyDiff lists the fields in which b differs from a, by JSON name
// with their JSON values, so a new field is compared without a change here.
func topologyDiff(a, b provider.Topology) []topoField {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	var out []topoField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" {
			continue // not in run.json: nothing a run could differ in
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(x, y) {
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		out = append(out, topoField{name: name, a: jsonString(x), b: jsonString(y), args: argsFields[f.Name]})
	}
	return out
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// setSteps is one side's steps: per key, each run's p50 and p99.
type setSteps struct {
	order []string
	byKey map[string]*stepRuns
}

type stepRuns struct {
	step     Step // the first run's, for its number, name and population
	p50, p99 []float64
	pods     []float64 // each run's samples of the step
	runs     []int     // each value's run, its index in the set
}

// stepsOf gathers a set's steps and end to end by Key. A run whose step
// has no samples gives it no value; a step no run measured is absent (an
// unavailable step: there is nothing to compare).
func stepsOf(s *Set) setSteps {
	out := setSteps{byKey: map[string]*stepRuns{}}
	for ri, r := range s.Runs {
		for _, st := range append(append([]Step(nil), r.Steps...), r.EndToEnd) {
			if st.Count == 0 {
				continue
			}
			k := st.Key()
			sr, ok := out.byKey[k]
			if !ok {
				if st.Nodes == "" {
					st.Nodes = NodesAll
				}
				sr = &stepRuns{step: st}
				out.byKey[k] = sr
				out.order = append(out.order, k)
			}
			sr.p50 = append(sr.p50, st.P50)
			sr.p99 = append(sr.p99, st.P99)
			sr.pods = append(sr.pods, float64(st.Count))
			sr.runs = append(sr.runs, ri)
		}
	}
	return out
}

// point is the step across its runs: medians, ranges and CVs.
func (sr *stepRuns) point() TrendPoint {
	lo50, hi50 := minMax(sr.p50)
	lo99, hi99 := minMax(sr.p99)
	return TrendPoint{Runs: len(sr.p50), Pods: int(medianOf(sr.pods)),
		P50: medianOf(sr.p50), P50Lo: lo50, P50Hi: hi50, P50CVPct: noiseOf(sr.p50).CVPct,
		P99: medianOf(sr.p99), P99Lo: lo99, P99Hi: hi99, P99CVPct: noiseOf(sr.p99).CVPct}
}

// measure sets one step's two sides beside each other: medians, CVs,
// shifts, intervals and each statistic's own p.
func measure(b, n *stepRuns, alpha float64) SetDelta {
	d := SetDelta{Key: b.step.Key(), Step: b.step.Step, Name: b.step.Name, Nodes: b.step.Nodes,
		BaseN: len(b.p50), NewN: len(n.p50)}
	bp, np := b.point(), n.point()
	d.BaseP50, d.NewP50 = bp.P50, np.P50
	d.BaseP99, d.NewP99 = bp.P99, np.P99
	d.BaseP50CVPct, d.NewP50CVPct = bp.P50CVPct, np.P50CVPct
	d.BaseP99CVPct, d.NewP99CVPct = bp.P99CVPct, np.P99CVPct
	d.P50 = effect(b.p50, n.p50, alpha)
	d.P99 = effect(b.p99, n.p99, alpha)
	return d
}

// judge gives a measured step its verdict on the family-wise adjusted p's;
// verdicts only when concluded (enough runs in both sets) and when this
// step's runs can reach Alpha themselves.
func judge(d *SetDelta, o CompareOptions, concluded bool) {
	if !concluded || MinP(d.BaseN, d.NewN) >= o.Alpha {
		d.Verdict = VerdictInconclusive
		d.Reason = fmt.Sprintf("%d base and %d new runs cannot reach p < %g", d.BaseN, d.NewN, o.Alpha)
		return
	}
	var worse, better []string
	for _, e := range []struct {
		name string
		e    Effect
	}{{"p50", d.P50}, {"p99", d.P99}} {
		if e.e.PAdj >= o.Alpha || math.Abs(e.e.ShiftMS) < o.MinShiftMS {
			continue
		}
		switch {
		case e.e.ShiftPct > o.Threshold:
			worse = append(worse, describe(e.name, e.e))
		case e.e.ShiftPct < -o.Threshold:
			better = append(better, describe(e.name, e.e))
		}
	}
	if len(worse)+len(better) == 0 {
		// A large shift the runs' spread does not support is said, so
		// an "ok" beside +40 % is not taken for a measured no-change.
		var loose []string
		for _, e := range []struct {
			name string
			e    Effect
		}{{"p50", d.P50}, {"p99", d.P99}} {
			if math.Abs(e.e.ShiftPct) > o.Threshold {
				loose = append(loose, fmt.Sprintf("%s %+.1f%% not significant (p=%.3g, adjusted %.3g)", e.name, e.e.ShiftPct, e.e.P, e.e.PAdj))
			}
		}
		d.Verdict, d.Reason = VerdictOK, strings.Join(loose, "; ")
		return
	}
	switch {
	case len(worse) > 0:
		d.Regressed, d.Verdict = true, VerdictRegressed
	default:
		d.Improved, d.Verdict = true, VerdictImproved
	}
	d.Reason = strings.Join(append(worse, better...), "; ")
}

func describe(name string, e Effect) string {
	return fmt.Sprintf("%s %+.1f%% [%+.1f, %+.1f] p=%.3g adjusted %.3g", name, e.ShiftPct, e.CILoPct, e.CIHiPct, e.P, e.PAdj)
}

// effect is the test and the shift of one statistic, one value per run.
func effect(base, cur []float64, alpha float64) Effect {
	_, p := MannWhitney(base, cur)
	shift, lo, hi, level, _ := HodgesLehmann(base, cur, alpha)
	m := medianOf(base)
	return Effect{ShiftPct: pctOf(shift, m), CILoPct: pctOf(lo, m), CIHiPct: pctOf(hi, m), CILevel: level, P: p, ShiftMS: shift}
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return median(s)
}

// minOther is the fewest runs beside n others that let the test reach
// alpha.
func minOther(n int, alpha float64) int {
	m := 1
	for MinP(n, m) >= alpha && m < 1000 {
		m++
	}
	return m
}

// pctOf is x in percent of base. A base of 0 ms has no percent: a change
// from it counts as ±100 %, as a new cost would.
func pctOf(x, base float64) float64 {
	if base == 0 {
		switch {
		case x > 0:
			return 100
		case x < 0:
			return -100
		}
		return 0
	}
	return x / base * 100
}
