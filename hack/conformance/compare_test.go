package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// spec is a ReportEntry of an It node as e2e.test writes it: the
// SIGDescribe container's text, then the leaf's.
func spec(container, leaf string, state types.SpecState) types.SpecReport {
	sr := types.SpecReport{
		ContainerHierarchyTexts: []string{container},
		LeafNodeType:            types.NodeTypeIt,
		LeafNodeText:            leaf,
		State:                   state,
		RunTime:                 2 * time.Second,
	}
	if state.Is(types.SpecStateFailureStates) {
		sr.Failure = types.Failure{Message: "Expected\n    <int>: 0\nto equal\n    <int>: 1", Location: types.CodeLocation{FileName: "test/e2e/apps/rc.go", LineNumber: 42}}
	}
	return sr
}

const knownList = `# known failures
## an API kstep does not serve
[sig-apps] ReplicationController should surface a failure condition [Conformance]
[sig-apps] ReplicaSet should adopt matching pods [Conformance]

## renamed upstream
[sig-apps] Deployment an old name [Conformance]
`

// roundTrip writes reports as e2e.test's --ginkgo.json-report does and
// reads them back.
func roundTrip(t *testing.T, reports []types.Report) []types.Report {
	t.Helper()
	data, err := json.Marshal(reports)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestCompare(t *testing.T) {
	known, err := ReadList("known-failures.txt", strings.NewReader(knownList))
	if err != nil {
		t.Fatal(err)
	}
	reports := roundTrip(t, []types.Report{{
		SuiteDescription: "Kubernetes e2e suite",
		RunTime:          3 * time.Minute,
		SpecReports: []types.SpecReport{
			{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed},
			spec("[sig-api-machinery] Watchers", "should observe add, update, and delete watch notifications on configmaps [Conformance]", types.SpecStatePassed),
			spec("[sig-apps] ReplicationController", "should surface a failure condition [Conformance]", types.SpecStateFailed),
			spec("[sig-apps] ReplicaSet", "should adopt matching pods [Conformance]", types.SpecStatePassed),
			spec("[sig-apps] ReplicaSet", "should serve a basic image on each replica [Conformance]", types.SpecStateTimedout),
			spec("[sig-node] Pods", "should be submitted and removed [Conformance]", types.SpecStateSkipped),
			spec("[sig-apps] Deployment", "not a conformance spec", types.SpecStateFailed),
		},
	}})
	v := Compare(reports, known)

	want := map[string]Outcome{
		"[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance]": Passed,
		"[sig-apps] ReplicationController should surface a failure condition [Conformance]":                                   FailedKnown,
		"[sig-apps] ReplicaSet should adopt matching pods [Conformance]":                                                      KnownNowPassing,
		"[sig-apps] ReplicaSet should serve a basic image on each replica [Conformance]":                                      FailedNew,
		"[sig-node] Pods should be submitted and removed [Conformance]":                                                       Skipped,
	}
	if len(v.Specs) != len(want) {
		t.Fatalf("%d specs, want the %d [Conformance] ones: %+v", len(v.Specs), len(want), v.Specs)
	}
	for _, s := range v.Specs {
		if want[s.Name] != s.Outcome {
			t.Errorf("%s: %s, want %s", s.Name, s.Outcome, want[s.Name])
		}
	}
	if len(v.Stale) != 1 || v.Stale[0].Text != "[sig-apps] Deployment an old name [Conformance]" || v.Stale[0].Line != 7 {
		t.Errorf("stale %+v, want the Deployment entry of line 7", v.Stale)
	}
	if v.Ran() != 4 || v.Exit() != 1 {
		t.Errorf("ran %d, exit %d; want 4 and 1", v.Ran(), v.Exit())
	}

	var out bytes.Buffer
	v.Summary(&out, "known-failures.txt")
	for _, line := range []string{
		"5 [Conformance] specs in the report, 4 ran in 3m0s: 1 passed, 1 failed-known, 1 failed-new, 1 known-now-passing; 1 skipped",
		"FAILED (new, not in known-failures.txt): [sig-apps] ReplicaSet should serve a basic image on each replica [Conformance] [timedout]",
		"to equal", "(test/e2e/apps/rc.go:42)",
		"PASSES (listed as a known failure: remove it from known-failures.txt): [sig-apps] ReplicaSet should adopt matching pods [Conformance]",
		"STALE (known-failures.txt:7 names a spec the suite does not have): [sig-apps] Deployment an old name [Conformance]",
		"failed-known   1: an API kstep does not serve",
		"conformance: FAIL",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("summary lacks %q:\n%s", line, out.String())
		}
	}
}

func TestCompareExit(t *testing.T) {
	known, err := ReadList("k", strings.NewReader("## an API kstep does not serve\n[sig-apps] RC fails [Conformance]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		specs []types.SpecReport
		extra []string // SpecialSuiteFailureReasons
		exit  int
	}{
		{"only known failures", []types.SpecReport{
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateFailed),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStatePassed),
		}, nil, 0},
		{"a listed spec skipped is no verdict on it", []types.SpecReport{
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateSkipped),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStatePassed),
		}, nil, 0},
		{"a panic is a failure", []types.SpecReport{
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateFailed),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStatePanicked),
		}, nil, 1},
		{"the suite hit its timeout", []types.SpecReport{
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateFailed),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStatePassed),
		}, []string{"Interrupted by Timeout"}, 1},
		{"the suite's setup failed: nothing ran", []types.SpecReport{
			{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no nodes are ready"}},
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateSkipped),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStateSkipped),
		}, nil, 3},
		{"a failed report node", []types.SpecReport{
			spec("[sig-apps] RC", "fails [Conformance]", types.SpecStateFailed),
			spec("[sig-apps] RS", "passes [Conformance]", types.SpecStatePassed),
			{LeafNodeType: types.NodeTypeReportAfterSuite, LeafNodeText: "Kubernetes e2e suite report", State: types.SpecStateFailed},
		}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Compare(roundTrip(t, []types.Report{{SpecReports: tc.specs, SpecialSuiteFailureReasons: tc.extra}}), known)
			if got := v.Exit(); got != tc.exit {
				var out bytes.Buffer
				v.Summary(&out, "k")
				t.Errorf("exit %d, want %d:\n%s", got, tc.exit, out.String())
			}
		})
	}
}

func TestReadReportRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"not json":     "<testsuites/>",
		"no suite":     "[]",
		"not a report": `{"SuiteDescription": "an object, not a list"}`,
	} {
		if _, err := ReadReport(strings.NewReader(in)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

func TestReadList(t *testing.T) {
	for name, tc := range map[string]struct{ in, err string }{
		"no reason":        {"[sig-apps] A [Conformance]\n", `k:1: "[sig-apps] A [Conformance]" has no reason`},
		"empty reason":     {"##   \n[sig-apps] A\n", `k:1: a "##" line without a reason`},
		"duplicate":        {"## r\nA\n# c\nA\n", `k:4: "A" is listed already on line 2`},
		"overlong line":    {"## r\n" + strings.Repeat("x", maxLine+1) + "\n", "k:2: bufio.Scanner: token too long"},
		"reasons per part": {"## first\nA\n## second\nB\n", ""},
	} {
		entries, err := ReadList("k", strings.NewReader(tc.in))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", name, err, tc.err)
		case tc.err == "" && (len(entries) != 2 || entries[0].Reason != "first" || entries[1].Reason != "second"):
			t.Errorf("%s: %+v", name, entries)
		}
	}
}

func TestSkipRegexp(t *testing.T) {
	skips, err := ReadList("s", strings.NewReader("## no pod network\n\\[sig-network\\]\n## no volumes' contents\n\\[sig-storage\\]\n"))
	if err != nil {
		t.Fatal(err)
	}
	re, err := SkipRegexp("s", skips)
	if err != nil || re != `(?:\[sig-network\])|(?:\[sig-storage\])` {
		t.Fatalf("%q, %v", re, err)
	}
	bad, _ := ReadList("s", strings.NewReader("## r\nok\n[sig-node\n"))
	if _, err := SkipRegexp("s", bad); err == nil || !strings.HasPrefix(err.Error(), "s:3: ") {
		t.Errorf("an unbalanced bracket: %v, want an error naming line 3", err)
	}
}

func TestDraft(t *testing.T) {
	reports := roundTrip(t, []types.Report{{SpecReports: []types.SpecReport{
		spec("[sig-apps] B", "fails [Conformance]", types.SpecStateFailed),
		spec("[sig-apps] A", "fails [Conformance]", types.SpecStateFailed),
		spec("[sig-apps] C", "passes [Conformance]", types.SpecStatePassed),
		spec("[sig-apps] D", "is known [Conformance]", types.SpecStateFailed),
		{ContainerHierarchyTexts: []string{"[sig-auth] E"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "times out [Conformance]", State: types.SpecStateTimedout,
			Failure: types.Failure{Message: "the server could not find the requested resource"}},
	}}})
	known, err := ReadList("k", strings.NewReader("## r\n[sig-apps] D is known [Conformance]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Compare(reports, known).Draft(&out)
	want := `## Expected
[sig-apps] A fails [Conformance]
[sig-apps] B fails [Conformance]

## the server could not find the requested resource
[sig-auth] E times out [Conformance]
`
	if out.String() != want {
		t.Errorf("draft:\n%s\nwant:\n%s", out.String(), want)
	}
	// A draft is a list: it parses, and as the known list it leaves no
	// failed-new spec.
	entries, err := ReadList("draft", strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if v := Compare(reports, append(known, entries...)); v.Count(FailedNew) != 0 {
		t.Errorf("with the draft added, %d failed-new", v.Count(FailedNew))
	}
}
