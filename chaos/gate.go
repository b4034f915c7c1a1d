package chaos

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// GateKind identifies a Gate document.
const GateKind = "Gate"

// Gate turns a chaos run into pass or fail: thresholds per fault (matched
// by target or by fault name) and per invariant. Every threshold is a
// maximum; an unmeasured value fails its line.
type Gate struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Name       string      `json:"name"`
	Faults     []FaultGate `json:"faults"`
	// Invariants: name (lost-writes, watch-gaps, rs-over-replicas,
	// pod-bound-twice, etcd-hash-mismatch, unconverged-replicasets) → the
	// most violations allowed, usually 0. An invariant not listed is
	// reported but not gated.
	Invariants map[string]int `json:"invariants"`
}

// FaultGate holds the thresholds for the faults it matches.
type FaultGate struct {
	// Match is a target (etcd-leader, apiserver, ...), an action (kill,
	// fill, ...) or a fault's name.
	Match        string    `json:"match"`
	MaxDetection *Duration `json:"maxDetection,omitempty"`
	MaxRecovery  *Duration `json:"maxRecovery,omitempty"`
	MaxWriteGap  *Duration `json:"maxWriteGap,omitempty"`
	// MaxWait bounds the longest any one probe request waited for its
	// answer during the fault.
	MaxWait *Duration `json:"maxWait,omitempty"`
	// MaxOtherNodesNotReady bounds the nodes besides the fault's own that
	// went NotReady during it.
	MaxOtherNodesNotReady *int `json:"maxOtherNodesNotReady,omitempty"`
	// MaxOtherPodsEvicted bounds the pods evicted during it from nodes
	// besides the fault's own.
	MaxOtherPodsEvicted *int `json:"maxOtherPodsEvicted,omitempty"`
	// MaxFailedWrites bounds probe writes that failed on every apiserver.
	MaxFailedWrites *int `json:"maxFailedWrites,omitempty"`
	// MaxUnclearErrors bounds the probe writes a fill fault failed with
	// anything but etcd's NOSPACE refusal (a 507, or a 500, with etcd's
	// message): a timeout, a 503, an answer that does not say why.
	MaxUnclearErrors *int `json:"maxUnclearErrors,omitempty"`
}

// Matches reports whether the line judges the fault named name.
func (fg FaultGate) Matches(name string, a Action, t Target) bool {
	return fg.Match == name || fg.Match == string(a) || fg.Match == string(t)
}

// Verdict is one gate line's outcome.
type Verdict struct {
	Line  string `json:"line"`
	Value string `json:"value"`
	Limit string `json:"limit"`
	Pass  bool   `json:"pass"`
}

//go:embed gates/default.yaml
var defaultGate []byte

//go:embed gates/ci.yaml
var ciGate []byte

// invWatchGapsOld is watch-reliable's name in older gate files.
const invWatchGapsOld = "watch-gaps"

// ParseGate reads a Gate from YAML and validates it.
func ParseGate(data []byte) (*Gate, error) {
	var g Gate
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	if g.APIVersion == "" {
		g.APIVersion = APIVersion
	}
	if g.Kind == "" {
		g.Kind = GateKind
	}
	// watch-gaps, before the watch guarantees were six, is watch-reliable.
	if n, ok := g.Invariants[invWatchGapsOld]; ok {
		if _, set := g.Invariants[InvWatchReliable]; !set {
			g.Invariants[InvWatchReliable] = n
		}
		delete(g.Invariants, invWatchGapsOld)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("gate %s: %w", g.Name, err)
	}
	return &g, nil
}

// Validate says what is wrong with g.
func (g *Gate) Validate() error {
	var errs []error
	if g.APIVersion != APIVersion || g.Kind != GateKind {
		errs = append(errs, fmt.Errorf("apiVersion/kind: %s/%s, want %s/%s", g.APIVersion, g.Kind, APIVersion, GateKind))
	}
	known := map[string]bool{InvLostWrites: true, InvRSOver: true, InvBoundTwice: true, InvWatchOrdered: true, InvWatchUnique: true, InvWatchReliable: true, InvWatchBookmarkable: true, InvWatchResumable: true, InvWatchIdle: true, InvLinearizable: true, InvHashKV: true, InvConvergence: true, InvRunningPods: true, InvLoadObjects: true}
	for name, n := range g.Invariants {
		if !known[name] {
			errs = append(errs, fmt.Errorf("invariants: %q unknown", name))
		}
		if n < 0 {
			errs = append(errs, fmt.Errorf("invariants: %s: %d is negative", name, n))
		}
	}
	for i, f := range g.Faults {
		if f.Match == "" {
			errs = append(errs, fmt.Errorf("faults[%d]: match is empty", i))
		}
		if f.MaxDetection == nil && f.MaxRecovery == nil && f.MaxWriteGap == nil && f.MaxWait == nil && f.MaxFailedWrites == nil && f.MaxOtherNodesNotReady == nil && f.MaxOtherPodsEvicted == nil && f.MaxUnclearErrors == nil {
			errs = append(errs, fmt.Errorf("faults[%d] (%s): no threshold", i, f.Match))
		}
	}
	return errors.Join(errs...)
}

// LoadGate returns the built-in gate "default" or "ci", or reads a file.
func LoadGate(name string) (*Gate, error) {
	switch name {
	case "", "default":
		return ParseGate(defaultGate)
	case "ci":
		return ParseGate(ciGate)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("gate %q is neither built in (default, ci) nor a readable file: %w", name, err)
	}
	return ParseGate(b)
}

// Evaluate checks every line of g against the run's faults and invariants.
// Lines matching no fault of the run are left out. A fault that was never
// injected, or whose injection failed, fails the run whether or not a line
// names it: a gate must not pass a run that did not do what it says.
func (g *Gate) Evaluate(faults []FaultResult, invs []Invariant) []Verdict {
	var out []Verdict
	failed := map[string]bool{}
	for _, f := range faults {
		switch {
		case f.Error != "":
			out = append(out, Verdict{Line: f.Name + ": injected", Value: f.Error, Limit: "injected without error", Pass: false})
		case f.InjectedAt.IsZero():
			out = append(out, Verdict{Line: f.Name + ": injected", Value: "never injected", Limit: "injected without error", Pass: false})
		default:
			continue
		}
		failed[f.Name] = true
	}
	dur := func(v *float64) string {
		if v == nil {
			return "not observed"
		}
		return (time.Duration(*v * float64(time.Millisecond))).Round(time.Millisecond).String()
	}
	within := func(v *float64, limit *Duration) bool {
		return v != nil && *v <= float64(limit.Duration)/float64(time.Millisecond)
	}
	for _, fg := range g.Faults {
		for _, f := range faults {
			if !fg.Matches(f.Name, f.Action, f.Target) {
				continue
			}
			line := func(what string) string { return fmt.Sprintf("%s: %s", f.Name, what) }
			if failed[f.Name] {
				continue // its measures mean nothing; the injection line fails it
			}
			if fg.MaxDetection != nil {
				out = append(out, Verdict{Line: line("detection (" + f.Detection.Kind + ")"), Value: f.Detection.Text(),
					Limit: "≤ " + fg.MaxDetection.String(), Pass: within(f.Detection.MS, fg.MaxDetection)})
			}
			if fg.MaxRecovery != nil {
				out = append(out, Verdict{Line: line("recovery (" + f.Recovery.Kind + ")"), Value: f.Recovery.Text(),
					Limit: "≤ " + fg.MaxRecovery.String(), Pass: within(f.Recovery.MS, fg.MaxRecovery)})
			}
			if fg.MaxWriteGap != nil {
				gap := f.WriteGapMS
				out = append(out, Verdict{Line: line("longest write gap"), Value: dur(&gap),
					Limit: "≤ " + fg.MaxWriteGap.String(), Pass: within(&gap, fg.MaxWriteGap)})
			}
			if fg.MaxWait != nil {
				wait := f.LongestWaitMS
				out = append(out, Verdict{Line: line("longest wait"), Value: dur(&wait),
					Limit: "≤ " + fg.MaxWait.String(), Pass: within(&wait, fg.MaxWait)})
			}
			if fg.MaxOtherNodesNotReady != nil {
				n := len(f.OtherNodesNotReady)
				out = append(out, Verdict{Line: line("other nodes NotReady"), Value: fmt.Sprint(n),
					Limit: fmt.Sprintf("≤ %d", *fg.MaxOtherNodesNotReady), Pass: n <= *fg.MaxOtherNodesNotReady})
			}
			if fg.MaxOtherPodsEvicted != nil {
				n := len(f.OtherPodsEvicted)
				out = append(out, Verdict{Line: line("other pods evicted"), Value: fmt.Sprint(n),
					Limit: fmt.Sprintf("≤ %d", *fg.MaxOtherPodsEvicted), Pass: n <= *fg.MaxOtherPodsEvicted})
			}
			if fg.MaxFailedWrites != nil {
				out = append(out, Verdict{Line: line("failed writes"), Value: fmt.Sprint(f.FailedWrites),
					Limit: fmt.Sprintf("≤ %d", *fg.MaxFailedWrites), Pass: f.FailedWrites <= *fg.MaxFailedWrites})
			}
			if fg.MaxUnclearErrors != nil && f.Action == ActionFill {
				out = append(out, Verdict{Line: line("writes failed without a NOSPACE answer"), Value: fmt.Sprint(f.UnclearErrors),
					Limit: fmt.Sprintf("≤ %d", *fg.MaxUnclearErrors), Pass: f.UnclearErrors <= *fg.MaxUnclearErrors})
				// Not vacuous: the quota was reached and refused writes.
				out = append(out, Verdict{Line: line("writes refused with NOSPACE"), Value: fmt.Sprint(f.NoSpaceRefusals),
					Limit: "≥ 1", Pass: f.NoSpaceRefusals >= 1})
			}
		}
	}
	for _, inv := range invs {
		limit, ok := g.Invariants[inv.Name]
		if !ok {
			continue
		}
		v := Verdict{Line: "invariant " + inv.Name, Value: fmt.Sprint(inv.Count), Limit: fmt.Sprintf("≤ %d", limit),
			Pass: inv.Checked && inv.Count <= limit}
		if !inv.Checked {
			v.Value = "not checked: " + strings.Join(inv.Detail, "; ")
		}
		out = append(out, v)
	}
	return out
}

// Passed reports whether every verdict passed.
func Passed(vs []Verdict) bool {
	for _, v := range vs {
		if !v.Pass {
			return false
		}
	}
	return true
}

// Failed lists the lines that failed.
func Failed(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		if !v.Pass {
			out = append(out, fmt.Sprintf("%s = %s (limit %s)", v.Line, v.Value, v.Limit))
		}
	}
	return out
}
