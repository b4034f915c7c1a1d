package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Outcome is where one [Conformance] spec of a run lands, against the
// known-failures list.
type Outcome string

const (
	Passed          Outcome = "passed"
	FailedKnown     Outcome = "failed-known"
	FailedNew       Outcome = "failed-new"        // not on the list: the gate fails
	KnownNowPassing Outcome = "known-now-passing" // on the list and passed: the gate fails until it leaves the list
	Skipped         Outcome = "skipped"           // not run: skip list, a narrower focus, or the spec skipped itself
)

// conformanceTag marks a conformance spec in its full name.
const conformanceTag = "[Conformance]"

// Spec is one [Conformance] spec's result.
type Spec struct {
	Name    string
	Outcome Outcome
	State   types.SpecState
	RunTime time.Duration
	Reason  string // the list's reason, for a listed spec
	Failure string // the failure's message and location, for a failed spec
}

// Verdict is a run held against the list.
type Verdict struct {
	Specs         []Spec   // every [Conformance] spec of the report, by name
	Stale         []Entry  // listed specs the suite does not have (renamed or removed upstream)
	SuiteFailures []string // failed suite-level nodes (BeforeSuite, ReportAfterSuite, ...) and ginkgo's special reasons (a timeout)
	RunTime       time.Duration
}

// maxReport bounds the report read: e2e.test's JSON report of a full
// conformance run is a few tens of MB (every spec of the suite is in it,
// skipped or not).
const maxReport = 512 << 20

// ReadReport decodes a ginkgo JSON report (a list of suite reports).
func ReadReport(r io.Reader) ([]types.Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxReport+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxReport {
		return nil, fmt.Errorf("the report is over %d MiB", maxReport>>20)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("not a ginkgo JSON report: %w", err)
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("the report holds no suite")
	}
	return reports, nil
}

// Compare sorts every [Conformance] spec of the reports against the
// known-failures list.
func Compare(reports []types.Report, known []Entry) Verdict {
	listed := make(map[string]Entry, len(known))
	for _, e := range known {
		listed[e.Text] = e
	}
	inSuite := map[string]bool{}
	var v Verdict
	for _, r := range reports {
		v.RunTime += r.RunTime
		for _, reason := range r.SpecialSuiteFailureReasons {
			v.SuiteFailures = append(v.SuiteFailures, reason)
		}
		for _, sr := range r.SpecReports {
			name := sr.FullText()
			if sr.LeafNodeType != types.NodeTypeIt {
				if sr.Failed() {
					v.SuiteFailures = append(v.SuiteFailures, fmt.Sprintf("%s %s: %s", sr.LeafNodeType, sr.State, failure(sr)))
				}
				continue
			}
			inSuite[name] = true
			if !strings.Contains(name, conformanceTag) {
				continue
			}
			e, isListed := listed[name]
			s := Spec{Name: name, State: sr.State, RunTime: sr.RunTime, Reason: e.Reason}
			switch {
			case sr.State == types.SpecStatePassed && isListed:
				s.Outcome = KnownNowPassing
			case sr.State == types.SpecStatePassed:
				s.Outcome = Passed
			case sr.Failed():
				s.Failure = failure(sr)
				s.Outcome = FailedNew
				if isListed {
					s.Outcome = FailedKnown
				}
			default: // skipped, pending
				s.Outcome = Skipped
			}
			v.Specs = append(v.Specs, s)
		}
	}
	for _, e := range known {
		if !inSuite[e.Text] {
			v.Stale = append(v.Stale, e)
		}
	}
	sort.Slice(v.Specs, func(i, j int) bool { return v.Specs[i].Name < v.Specs[j].Name })
	return v
}

// maxFailure bounds a failure's text in the summary: gomega's messages
// can carry whole objects.
const maxFailure = 600

func failure(sr types.SpecReport) string {
	msg := strings.TrimSpace(sr.Failure.Message)
	if len(msg) > maxFailure {
		msg = msg[:maxFailure] + " …"
	}
	if loc := sr.Failure.Location; loc.FileName != "" {
		msg += fmt.Sprintf(" (%s:%d)", loc.FileName, loc.LineNumber)
	}
	return msg
}

// Count is the number of specs with an outcome.
func (v Verdict) Count(o Outcome) int {
	n := 0
	for _, s := range v.Specs {
		if s.Outcome == o {
			n++
		}
	}
	return n
}

// Ran is the number of specs that ran to a result.
func (v Verdict) Ran() int { return len(v.Specs) - v.Count(Skipped) }

// Exit is the gate's exit code: 0 the run matches the list, 1 a new
// failure, a listed spec that passed, a stale entry or a failed suite
// node, 3 no spec ran (no verdict: the suite's setup failed, or the
// focus matched nothing).
func (v Verdict) Exit() int {
	switch {
	case v.Ran() == 0:
		return 3
	case v.Count(FailedNew) > 0 || v.Count(KnownNowPassing) > 0 || len(v.Stale) > 0 || len(v.SuiteFailures) > 0:
		return 1
	}
	return 0
}

// Summary writes the verdict for a reader: the counts, then every spec
// that makes the gate fail and why, then the known failures by reason.
func (v Verdict) Summary(w io.Writer, knownPath string) {
	fmt.Fprintf(w, "conformance: %d [Conformance] specs in the report, %d ran in %s: %d passed, %d failed-known, %d failed-new, %d known-now-passing; %d skipped\n",
		len(v.Specs), v.Ran(), v.RunTime.Round(time.Second), v.Count(Passed), v.Count(FailedKnown), v.Count(FailedNew), v.Count(KnownNowPassing), v.Count(Skipped))
	for _, f := range v.SuiteFailures {
		fmt.Fprintf(w, "SUITE FAILED: %s\n", f)
	}
	for _, s := range v.Specs {
		if s.Outcome == FailedNew {
			fmt.Fprintf(w, "FAILED (new, not in %s): %s [%s]\n    %s\n", knownPath, s.Name, s.State, indent(s.Failure))
		}
	}
	for _, s := range v.Specs {
		if s.Outcome == KnownNowPassing {
			fmt.Fprintf(w, "PASSES (listed as a known failure: remove it from %s): %s\n", knownPath, s.Name)
		}
	}
	for _, e := range v.Stale {
		fmt.Fprintf(w, "STALE (%s:%d names a spec the suite does not have): %s\n", knownPath, e.Line, e.Text)
	}
	byReason := map[string]int{}
	var reasons []string
	for _, s := range v.Specs {
		if s.Outcome == FailedKnown {
			if byReason[s.Reason] == 0 {
				reasons = append(reasons, s.Reason)
			}
			byReason[s.Reason]++
		}
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "failed-known %3d: %s\n", byReason[r], r)
	}
	switch v.Exit() {
	case 0:
		fmt.Fprintln(w, "conformance: PASS (every failure is a known one)")
	case 1:
		fmt.Fprintln(w, "conformance: FAIL")
	default:
		fmt.Fprintln(w, "conformance: NO VERDICT (no [Conformance] spec ran)")
	}
}

// Outcomes writes one line per spec: outcome, run time, name.
func (v Verdict) Outcomes(w io.Writer) {
	for _, s := range v.Specs {
		fmt.Fprintf(w, "%s\t%s\t%s\n", s.Outcome, s.RunTime.Round(100*time.Millisecond), s.Name)
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// Draft writes, in the list's format, the entries a run would add to the
// known-failures list: its failed-new specs, grouped under the first line
// of their failure (a reason to rewrite into why kstep fails them before
// the list is committed).
func (v Verdict) Draft(w io.Writer) {
	byFirst := map[string][]string{}
	var firsts []string
	for _, s := range v.Specs {
		if s.Outcome != FailedNew {
			continue
		}
		first, _, _ := strings.Cut(s.Failure, "\n")
		first = strings.TrimSpace(first)
		if first == "" {
			first = "(no failure message)"
		}
		if byFirst[first] == nil {
			firsts = append(firsts, first)
		}
		byFirst[first] = append(byFirst[first], s.Name)
	}
	sort.Strings(firsts)
	for i, f := range firsts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "## %s\n", f)
		for _, name := range byFirst[f] {
			fmt.Fprintln(w, name)
		}
	}
}
