package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is the part of test2json's TestEvent this command reads.
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on pass/fail/skip
}

// timing is one finished test or package.
type timing struct {
	Package, Test, Result string
	// Elapsed is go test's figure: for a test in a lane, its wait for
	// the lane included.
	Elapsed time.Duration
	// Lane and Wait are what the test logged when it got its lane
	// (test/e2e's inLane: "lane: NAME (waited D)"); empty and 0 outside.
	Lane string
	Wait time.Duration
	// Start and End are the package's first and last events, from the
	// stream's first (packages only).
	Start, End time.Duration
}

// Run is the test's own time: its elapsed time less its wait for a lane.
func (t timing) Run() time.Duration { return t.Elapsed - t.Wait }

func main() {
	n := flag.Int("n", 30, "how many of the slowest tests to print")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if flag.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "testtimes: at most one file (else standard input)")
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = f
	}
	tests, pkgs, err := read(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
	write(os.Stdout, tests, pkgs, *n)
}

// laneLine is what inLane logs once the test has its lane.
var laneLine = regexp.MustCompile(`lane: (.+) \(waited ([^)]+)\)`)

// read collects every finished test and package from a test2json stream.
// Lines that are not JSON (a build error printed beside the stream) are
// skipped, as `go test -json` can interleave them.
func read(r io.Reader) (tests, pkgs []timing, err error) {
	type lane struct {
		name string
		wait time.Duration
	}
	lanes := map[[2]string]lane{}
	first := map[string]time.Time{} // package: its first event
	var t0 time.Time
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if !e.Time.IsZero() {
			if t0.IsZero() {
				t0 = e.Time
			}
			if _, ok := first[e.Package]; !ok {
				first[e.Package] = e.Time
			}
		}
		switch e.Action {
		case "output":
			if m := laneLine.FindStringSubmatch(e.Output); m != nil && e.Test != "" {
				if d, err := time.ParseDuration(m[2]); err == nil {
					lanes[[2]string{e.Package, e.Test}] = lane{m[1], d}
				}
			}
			continue
		case "pass", "fail", "skip":
		default:
			continue
		}
		t := timing{Package: e.Package, Test: e.Test, Result: e.Action, Elapsed: time.Duration(e.Elapsed * float64(time.Second))}
		if e.Test == "" {
			if !e.Time.IsZero() {
				t.Start, t.End = first[e.Package].Sub(t0), e.Time.Sub(t0)
			}
			pkgs = append(pkgs, t)
			continue
		}
		if l, ok := lanes[[2]string{e.Package, e.Test}]; ok && l.wait <= t.Elapsed {
			t.Lane, t.Wait = l.name, l.wait
		}
		tests = append(tests, t)
	}
	return tests, pkgs, sc.Err()
}

func write(w io.Writer, tests, pkgs []timing, n int) {
	short := func(p string) string { return strings.TrimPrefix(p, "github.com/kstep-dev/kstep/") }
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].Run() > tests[j].Run() })
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].Elapsed > pkgs[j].Elapsed })
	if n > len(tests) {
		n = len(tests)
	}
	fmt.Fprintf(w, "The %d slowest tests (of %d, subtests included), by their own time (a lane's wait taken out):\n", n, len(tests))
	fmt.Fprintf(w, "  %9s  %9s  %-4s  %s\n", "own", "lane wait", "", "test")
	for _, t := range tests[:n] {
		wait := "—"
		if t.Lane != "" {
			wait = t.Wait.Round(time.Second).String()
		}
		fmt.Fprintf(w, "  %9s  %9s  %-4s  %s  %s\n", t.Run().Round(100*time.Millisecond), wait, t.Result, short(t.Package), t.Test)
	}
	// A lane's tests' own times add up to what the lane's clusters cost:
	// with clusters run two at a time, half the sum bounds e2e from below.
	byLane := map[string]time.Duration{}
	var lanes []string
	for _, t := range tests {
		if t.Lane == "" {
			continue
		}
		if _, ok := byLane[t.Lane]; !ok {
			lanes = append(lanes, t.Lane)
		}
		byLane[t.Lane] += t.Run()
	}
	if len(lanes) > 0 {
		sort.Strings(lanes)
		var all time.Duration
		fmt.Fprintf(w, "\nEach lane's tests, their own time summed:\n")
		for _, l := range lanes {
			all += byLane[l]
			fmt.Fprintf(w, "  %9s  %s\n", byLane[l].Round(time.Second), l)
		}
		fmt.Fprintf(w, "  %9s  all lanes\n", all.Round(time.Second))
	}
	var sum time.Duration
	fmt.Fprintf(w, "\nEvery package's wall time (%d packages), and when it ran (from the stream's first event):\n", len(pkgs))
	for _, p := range pkgs {
		sum += p.Elapsed
		fmt.Fprintf(w, "  %9s  %-4s  %-40s  %s – %s\n", p.Elapsed.Round(100*time.Millisecond), p.Result, short(p.Package), clock(p.Start), clock(p.End))
	}
	fmt.Fprintf(w, "  %9s  sum (packages run in parallel, so the wall time is less)\n", sum.Round(time.Second))
}

// clock is d as minutes and seconds, "12:05".
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
