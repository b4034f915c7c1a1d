package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestParseDefaults(t *testing.T) {
	j, err := Parse([]byte("apiVersion: kstep.dev/v1alpha1\nkind: LoadJob\nname: quick\ncount: 4\nnamespaces: [a, b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if j.Object.Kind != KindReplicaSet || j.Object.Replicas != 1 || j.QPS != 20 || j.Burst != 1 || j.Timeouts.Ready.Duration != 10*time.Minute || j.Object.NamePrefix != "quick-" {
		t.Errorf("defaults not applied: %+v", j)
	}
	if j.ExpectedPods() != 4 {
		t.Errorf("expected pods %d", j.ExpectedPods())
	}
}

func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"count: 0", "count: 0"},
		{"count: 1\nqps: -1", "qps: -1"},
		{"count: 1\nobject: {kind: Pod}", `object.kind: "Pod"`},
		{"count: 1\nnamespaces: [Bad_NS]", "not a DNS label"},
		{"count: 1\nkind: Job", `kind: "Job"`},
		{"count: 1\nqsp: 3", "unknown field"},
		{"count: 1\ntimeouts: {ready: soon}", "duration"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want it to mention %q", tc.doc, err, tc.want)
		}
	}
}
