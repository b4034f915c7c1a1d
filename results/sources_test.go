package results

import (
	"bytes"
	"strings"
	"testing"
)

// An external run's report says what is not observable, which steps the
// harness stamped and which the cluster did, and what cluster it was.
func TestReportSaysWhereStepsCameFrom(t *testing.T) {
	r := &Run{Valid: true, NotObservable: []string{"rs.received", "pod.bound"}, Unavailable: []string{"rs.received", "pod.bound"},
		Sources: []StepSource{{Step: "client.rs.sent", Where: FromHarness}, {Step: "client.pod.bound", Where: FromHarness},
			{Step: "rs.received", Where: NotObservable}, {Step: "pod.bound", Where: NotObservable}},
		Cluster: Cluster{External: &External{Server: "https://k:6443", Context: "kind-kind", Version: "v1.37.2", Nodes: 3, Ready: 3,
			Kinds: map[string]int{"real": 1, "fake (kwok)": 2}, KindsBy: "annotations"}}}
	var b bytes.Buffer
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	for _, out := range []string{b.String(), md} {
		for _, want := range []string{"ot observable on this cluster", "rs.received, pod.bound", "client.rs.sent, client.pod.bound",
			"https://k:6443 (context kind-kind), v1.37.2, 3 nodes (3 Ready): 2 fake (kwok), 1 real"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "navailable (no actor") {
			t.Errorf("an external run's report calls its steps unavailable:\n%s", out)
		}
	}
}
