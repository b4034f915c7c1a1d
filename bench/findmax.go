package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// FindMax is a capacity search: on one cluster, the profile's object
// offered at a rising rate, step after step (each step's pods deleted before
// the next, so node capacity never caps it), until the SLO breaks, then
// bisection between the last step that held it and the first that did not.
type FindMax struct {
	// StartPodsPerS is the first step's offered rate (pods/s).
	StartPodsPerS float64
	// Factor multiplies the rate after each step that held the SLO, until
	// one does not.
	Factor float64
	// StepDuration and StepPods size a step: it offers rate × StepDuration
	// pods, but no more than StepPods (a step lasts StepDuration or has
	// StepPods pods, whichever comes first).
	StepDuration time.Duration
	StepPods     int
	// Precision ends the bisection: when the failing rate is within this
	// fraction above the passing one.
	Precision float64
	// MaxSteps bounds the search (raising, bisecting, and lowering when
	// even the first step breaks the SLO).
	MaxSteps int
	// StepTimeout bounds a step's wait for its pods to be Ready (a step
	// that does not make it breaks the SLO).
	StepTimeout time.Duration
	SLO         SLO
}

// SLO is what a step must hold to count as sustained.
type SLO struct {
	// P99 bounds the p99 of Of.
	P99 time.Duration
	// Of is the latency judged: SLOControlPlane or SLOEndToEnd.
	Of string
	// AllowDisruption: a step with a disruption (a leader Lease changing
	// hands, a node leaving Ready) may still hold the SLO.
	AllowDisruption bool
}

// SLO latencies, both from the load generator's own watch on its own clock,
// so the search means the same on every provider.
const (
	// SLOControlPlane: client sent → pod seen bound (①–⑤ from outside).
	SLOControlPlane = "control-plane"
	// SLOEndToEnd: client sent → pod seen Ready.
	SLOEndToEnd = "e2e"
)

// DefaultFindMax is `kstep bench --find-max`'s search: from 10 pods/s,
// ×1.5 per step, steps of 30 s or 500 pods, bisection to 10 %, and the
// SLO control-plane p99 ≤ 1 s with no disruption.
func DefaultFindMax() FindMax {
	return FindMax{StartPodsPerS: 10, Factor: 1.5, StepDuration: 30 * time.Second, StepPods: 500, Precision: 0.1,
		MaxSteps: 20, StepTimeout: 2 * time.Minute, SLO: SLO{P99: time.Second, Of: SLOControlPlane}}
}

// Validate says what is wrong with the search.
func (f *FindMax) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !(f.StartPodsPerS > 0) || f.StartPodsPerS > 1e5 {
		bad("find-max start %v pods/s: want > 0 and ≤ 100000", f.StartPodsPerS)
	}
	if !(f.Factor > 1) || f.Factor > 10 {
		bad("find-max factor %v: want > 1 and ≤ 10", f.Factor)
	}
	if f.StepDuration < time.Second || f.StepDuration > time.Hour {
		bad("find-max step duration %v: want 1s to 1h", f.StepDuration)
	}
	if f.StepPods < 1 || f.StepPods > 100000 {
		bad("find-max step pods %d: want 1 to 100000", f.StepPods)
	}
	if !(f.Precision > 0) || f.Precision >= 1 {
		bad("find-max precision %v: want between 0 and 1", f.Precision)
	}
	if f.MaxSteps < 1 || f.MaxSteps > 100 {
		bad("find-max steps %d: want 1 to 100", f.MaxSteps)
	}
	if f.StepTimeout < time.Second {
		bad("find-max step timeout %v: want ≥ 1s", f.StepTimeout)
	}
	if f.SLO.P99 <= 0 {
		bad("SLO p99 %v: want > 0", f.SLO.P99)
	}
	if f.SLO.Of != SLOControlPlane && f.SLO.Of != SLOEndToEnd {
		bad("SLO latency %q: want %s or %s", f.SLO.Of, SLOControlPlane, SLOEndToEnd)
	}
	return errors.Join(errs...)
}

// sloText is the SLO as the report states it.
func (s SLO) text() string {
	t := fmt.Sprintf("%s p99 ≤ %v", s.Of, s.P99)
	if !s.AllowDisruption {
		t += " and no disruption"
	}
	return t
}

// search is the capacity search's pure core: the next rate to offer from
// the steps so far. It raises by Factor while steps hold the SLO, lowers
// by Factor while none has, and bisects once it has a passing and a failing
// rate, until they are within Precision.
type search struct {
	cfg        FindMax
	pass, fail float64 // the highest passing, the lowest failing rate; 0: none yet
	steps      int
}

// next is the rate of the next step; false when the search is over.
func (s *search) next() (float64, bool) {
	if s.steps >= s.cfg.MaxSteps {
		return 0, false
	}
	switch {
	case s.steps == 0:
		return s.cfg.StartPodsPerS, true
	case s.fail == 0:
		return s.pass * s.cfg.Factor, true
	case s.pass == 0:
		// Even the first step broke the SLO: lower, to a floor.
		r := s.fail / s.cfg.Factor
		if r < s.cfg.StartPodsPerS/math.Pow(s.cfg.Factor, 6) {
			return 0, false
		}
		return r, true
	case (s.fail-s.pass)/s.pass <= s.cfg.Precision:
		return 0, false
	default:
		return (s.pass + s.fail) / 2, true
	}
}

// record is a step's outcome at rate.
func (s *search) record(rate float64, held bool) {
	s.steps++
	if held {
		s.pass = max(s.pass, rate)
	} else if s.fail == 0 || rate < s.fail {
		s.fail = rate
	}
}

// phase names what a step at rate did in the search.
func (s *search) phase() string {
	switch {
	case s.fail == 0:
		return "raise"
	case s.pass == 0:
		return "lower"
	default:
		return "bisect"
	}
}

// stepJob is the profile's job sized and paced for one step at rate pods/s:
// its own name (so its objects never meet an earlier step's), deleting what
// it made at the end.
func stepJob(base loadgen.Job, f FindMax, i int, rate float64) loadgen.Job {
	j := base
	replicas := float64(max(j.Object.Replicas, 1))
	pods := min(math.Ceil(rate*f.StepDuration.Seconds()), float64(f.StepPods))
	j.Name = fmt.Sprintf("%s-fm%02d", base.Name, i)
	if len(j.Name) > 63 {
		j.Name = fmt.Sprintf("fm%02d", i)
	}
	j.Object.NamePrefix = j.Name + "-"
	j.Count = max(1, int(math.Ceil(pods/replicas)))
	j.QPS = rate / replicas
	j.Burst = 1
	// Enough writes in flight for a fifth of a second of the step's (two
	// per object with Services) at tens of ms each.
	j.Workers = max(base.Workers, int(math.Ceil(j.QPS*2*0.2)))
	j.Phases = loadgen.Phases{Delete: true}
	j.Timeouts.Ready.Duration = f.StepTimeout
	return j
}

// findMax runs the search on the cluster cs reaches. Each step's load
// generator writes its trace to traces/loadgen-fmNN.jsonl; the step is
// judged on its own pods' outside rows. It returns the search and the
// result of the highest step that held the SLO (nil if none did), whose
// pods the run's step table then breaks down.
func findMax(ctx context.Context, f FindMax, base loadgen.Job, cs kubernetes.Interface, traces string, lopts loadgen.Options,
	disruptions func() []results.Disruption, since time.Time, logf func(string, ...any)) (*results.FindMax, *loadgen.Result, error) {
	out := &results.FindMax{SLO: f.SLO.text(), Factor: f.Factor, StepDurationS: f.StepDuration.Seconds(), StepPods: f.StepPods, Precision: f.Precision}
	s := &search{cfg: f}
	var best *loadgen.Result
	for i := 1; ; i++ {
		rate, ok := s.next()
		if !ok {
			break
		}
		phase := s.phase()
		job := stepJob(base, f, i, rate)
		o := lopts
		o.TraceFile = filepath.Join(traces, fmt.Sprintf("%s-fm%02d.jsonl", loadgen.Actor, i))
		o.Outside = true
		before := len(disruptions())
		start := time.Now()
		logf("find-max step %d (%s): %.1f pods/s offered, %d %s × %d", i, phase, rate, job.Count, job.Object.Kind, job.Object.Replicas)
		res, lerr := loadgen.Run(ctx, &job, o)
		if ctx.Err() != nil {
			return out, best, ctx.Err()
		}
		st := results.FindMaxStep{Step: i, Phase: phase, OfferedPodsPerS: rate, StartS: start.Sub(since).Seconds(), DurationS: time.Since(start).Seconds()}
		if res != nil {
			st.Pods, st.Ready = res.Expected, res.Ready
		}
		seen := disruptions()
		st.Disruptions = len(seen) - before
		if err := judgeStep(&st, f.SLO, o.TraceFile, res, int(job.Object.Replicas), lerr); err != nil {
			return out, best, fmt.Errorf("find-max step %d: %w", i, err)
		}
		s.record(rate, st.Held)
		if st.Held && (best == nil || rate >= out.OfferedPodsPerS) {
			best = res
			out.OfferedPodsPerS, out.PodsPerS, out.Step = rate, st.AchievedPodsPerS, i
		}
		verdict := "held"
		if !st.Held {
			verdict = "broke it: " + st.Why
		}
		logf("find-max step %d: %.1f pods/s achieved, %s p99 %.1f ms: %s", i, st.AchievedPodsPerS, f.SLO.Of, st.P99MS, verdict)
		out.Steps = append(out.Steps, st)
		if lerr != nil && res == nil {
			return out, best, fmt.Errorf("find-max step %d: %w", i, lerr)
		}
		// The step's delete phase failed: its pods are still there, and
		// the next step would not start on an empty cluster.
		if errors.Is(lerr, loadgen.ErrDeletePhase) {
			return out, best, fmt.Errorf("find-max step %d: %w", i, lerr)
		}
	}
	out.Bracketed = s.pass > 0 && s.fail > 0
	out.Reason = searchEnd(s)
	return out, best, nil
}

// searchEnd says why the search stopped.
func searchEnd(s *search) string {
	switch {
	case s.pass == 0:
		return "no step held the SLO, down to the lowest rate tried: the cluster does not meet it at any rate searched"
	case s.fail == 0:
		return fmt.Sprintf("every step held the SLO up to %d steps: the answer is a lower bound (raise --find-max-steps)", s.steps)
	case (s.fail-s.pass)/s.pass <= s.cfg.Precision:
		return fmt.Sprintf("bisected to within %.0f %%: held at %.1f pods/s offered, broke at %.1f", 100*s.cfg.Precision, s.pass, s.fail)
	default:
		return fmt.Sprintf("stopped after %d steps between %.1f (held) and %.1f pods/s (broke)", s.steps, s.pass, s.fail)
	}
}

// judgeStep fills a step's figures from its load generator's trace (its
// outside rows: the load generator's own watch, on its own clock) and says
// whether it held the SLO.
func judgeStep(st *results.FindMaxStep, slo SLO, traceFile string, res *loadgen.Result, replicas int, lerr error) error {
	var why []string
	if res != nil && res.Ready < res.Expected {
		why = append(why, fmt.Sprintf("%d of %d pods Ready", res.Ready, res.Expected))
	}
	if lerr != nil && len(why) == 0 {
		why = append(why, lerr.Error())
	}
	if res != nil {
		events, _, err := trace.ReadFile(traceFile)
		if err != nil {
			return err
		}
		var objects []types.UID
		for _, w := range res.Writes {
			if w.Op == "create" && w.Kind != loadgen.KindService {
				objects = append(objects, w.UID)
			}
		}
		r := &results.Run{Valid: true}
		Analyze(Input{Events: events, Objects: objects, Pods: res.Pods, Replicas: replicas, Outside: true, External: true}, r)
		st.AchievedPodsPerS = r.Throughput.PodsPerS
		cp := samplesOf(r, controlPlaneOutside)
		if len(cp) > 0 {
			sum := results.Summarize(cp)
			st.ControlPlaneP50MS, st.ControlPlaneP99MS = sum.P50, sum.P99
		}
		st.E2EP50MS, st.E2EP99MS = r.EndToEnd.P50, r.EndToEnd.P99
	}
	st.P99MS = st.ControlPlaneP99MS
	if slo.Of == SLOEndToEnd {
		st.P99MS = st.E2EP99MS
	}
	if limit := float64(slo.P99) / float64(time.Millisecond); st.P99MS > limit {
		why = append(why, fmt.Sprintf("%s p99 %.1f ms > %.0f ms", slo.Of, st.P99MS, limit))
	}
	if st.Disruptions > 0 && !slo.AllowDisruption {
		why = append(why, fmt.Sprintf("%d disruptions", st.Disruptions))
	}
	st.Held = len(why) == 0
	st.Why = strings.Join(why, "; ")
	return nil
}

// controlPlaneOutside is the outside row find-max's control-plane SLO is
// judged on.
const controlPlaneOutside = "outside: control plane: client sent → pod seen bound"

// samplesOf merges the samples of every row of that name (one per node
// kind).
func samplesOf(r *results.Run, name string) []float64 {
	var out []float64
	for _, s := range r.Steps {
		if s.Name == name {
			out = append(out, s.SamplesMS...)
		}
	}
	return out
}
