package results

import "fmt"

// Delta is one step of two runs side by side.
type Delta struct {
	Step, Name      string
	BaseP50, NewP50 float64
	BaseP99, NewP99 float64
	P50Pct, P99Pct  float64 // (new − base) / base, in percent
	P               float64 // Mann–Whitney two-sided p
	Regressed       bool
	Reason          string
}

// Alpha is the significance level of a regression.
const Alpha = 0.05

// Compare sets each step (and end to end) of base and cur side by side. A
// step regresses when its p50 or p99 grew by more than threshold percent and
// the rank test says the distributions differ (p < Alpha). Steps present in
// only one run are skipped.
func Compare(base, cur *Run, threshold float64) []Delta {
	bySteps := map[string]Step{}
	for _, s := range append(append([]Step(nil), base.Steps...), base.EndToEnd) {
		bySteps[s.Step+"|"+s.Name] = s
	}
	var out []Delta
	for _, n := range append(append([]Step(nil), cur.Steps...), cur.EndToEnd) {
		b, ok := bySteps[n.Step+"|"+n.Name]
		if !ok || b.Count == 0 || n.Count == 0 {
			continue
		}
		d := Delta{Step: n.Step, Name: n.Name, BaseP50: b.P50, NewP50: n.P50, BaseP99: b.P99, NewP99: n.P99,
			P50Pct: pct(b.P50, n.P50), P99Pct: pct(b.P99, n.P99)}
		_, d.P = MannWhitney(b.SamplesMS, n.SamplesMS)
		if d.P < Alpha {
			switch {
			case d.P50Pct > threshold:
				d.Regressed, d.Reason = true, fmt.Sprintf("p50 +%.1f%% (p=%.3g)", d.P50Pct, d.P)
			case d.P99Pct > threshold:
				d.Regressed, d.Reason = true, fmt.Sprintf("p99 +%.1f%% (p=%.3g)", d.P99Pct, d.P)
			}
		}
		out = append(out, d)
	}
	return out
}

func pct(base, cur float64) float64 {
	if base == 0 {
		if cur == 0 {
			return 0
		}
		return 100
	}
	return (cur - base) / base * 100
}
