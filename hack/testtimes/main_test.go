package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReadAndWrite(t *testing.T) {
	stream := `{"Action":"run","Package":"p/a","Test":"TestFast"}
{"Action":"pass","Package":"p/a","Test":"TestFast","Elapsed":0.5}
not json: a build line
{"Action":"fail","Package":"p/a","Test":"TestSlow","Elapsed":12.25}
{"Action":"pass","Package":"p/a","Test":"TestSlow/sub","Elapsed":12}
{"Action":"fail","Package":"p/a","Elapsed":13}
{"Action":"skip","Package":"p/b","Test":"TestSkipped","Elapsed":0}
{"Action":"pass","Package":"p/b","Elapsed":2}
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
		"12.3s  fail  p/a  TestSlow\n",
		"12s  pass  p/a  TestSlow/sub\n",
		"13s  fail  p/a\n",
		"15s  sum",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestFast") {
		t.Errorf("the third slowest test is printed with -n 2:\n%s", got)
	}
	if tests[0].Elapsed != 12250*time.Millisecond {
		t.Errorf("slowest %v, want 12.25s", tests[0].Elapsed)
	}
}
