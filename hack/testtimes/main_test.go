package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReadAndWrite(t *testing.T) {
	stream := `{"Time":"2026-12-08T01:00:00Z","Action":"start","Package":"p/a"}
{"Time":"2026-12-08T01:00:01Z","Action":"run","Package":"p/a","Test":"TestFast"}
{"Time":"2026-12-08T01:00:01Z","Action":"pass","Package":"p/a","Test":"TestFast","Elapsed":0.5}
not json: a build line
{"Time":"2026-12-08T01:00:02Z","Action":"output","Package":"p/a","Test":"TestSlow","Output":"    lanes_test.go:57: lane: real nodes (waited 10s)\n"}
{"Time":"2026-12-08T01:00:13Z","Action":"fail","Package":"p/a","Test":"TestSlow","Elapsed":12.25}
{"Time":"2026-12-08T01:00:13Z","Action":"output","Package":"p/a","Test":"TestSlow/sub","Output":"    lanes_test.go:57: lane: containers (waited 1s)\n"}
{"Time":"2026-12-08T01:00:13Z","Action":"pass","Package":"p/a","Test":"TestSlow/sub","Elapsed":12}
{"Time":"2026-12-08T01:00:14Z","Action":"fail","Package":"p/a","Elapsed":13}
{"Time":"2026-12-08T01:00:15Z","Action":"skip","Package":"p/b","Test":"TestSkipped","Elapsed":0}
{"Time":"2026-12-08T01:01:05Z","Action":"pass","Package":"p/b","Elapsed":2}
`
	tests, pkgs, err := read(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 4 || len(pkgs) != 2 {
		t.Fatalf("%d tests, %d packages, want 4 and 2", len(tests), len(pkgs))
	}
	var out bytes.Buffer
	write(&out, tests, pkgs, 2)
	got := out.String()
	for _, want := range []string{
		"The 2 slowest tests (of 4, subtests included)",
		// TestSlow waited 10 s of its 12.25 for its lane: its own time
		// is 2.25 s, so the subtest (11 s of its own) is the slowest.
		"11s         1s  pass  p/a  TestSlow/sub\n",
		"2.3s        10s  fail  p/a  TestSlow\n",
		"11s  containers\n",
		"2s  real nodes\n",
		"13s  all lanes\n",
		"13s  fail  p/a",
		"0:00 – 0:14\n",
		"0:15 – 1:05\n",
		"15s  sum",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestFast") {
		t.Errorf("the third slowest test is printed with -n 2:\n%s", got)
	}
	if tests[0].Run() != 11*time.Second || tests[1].Wait != 10*time.Second {
		t.Errorf("slowest %v of its own, second waited %v; want 11s and 10s", tests[0].Run(), tests[1].Wait)
	}
}
