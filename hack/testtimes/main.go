package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is the part of test2json's TestEvent this command reads.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds, on pass/fail/skip
}

// timing is one finished test or package.
type timing struct {
	Package, Test, Result string
	Elapsed               time.Duration
}

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

// read collects every finished test and package from a test2json stream.
// Lines that are not JSON (a build error printed beside the stream) are
// skipped, as `go test -json` can interleave them.
func read(r io.Reader) (tests, pkgs []timing, err error) {
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
		switch e.Action {
		case "pass", "fail", "skip":
		default:
			continue
		}
		t := timing{Package: e.Package, Test: e.Test, Result: e.Action, Elapsed: time.Duration(e.Elapsed * float64(time.Second))}
		if e.Test == "" {
			pkgs = append(pkgs, t)
		} else {
			tests = append(tests, t)
		}
	}
	return tests, pkgs, sc.Err()
}

func write(w io.Writer, tests, pkgs []timing, n int) {
	slowest := func(ts []timing) {
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].Elapsed > ts[j].Elapsed })
	}
	slowest(tests)
	slowest(pkgs)
	if n > len(tests) {
		n = len(tests)
	}
	fmt.Fprintf(w, "The %d slowest tests (of %d, subtests included):\n", n, len(tests))
	for _, t := range tests[:n] {
		fmt.Fprintf(w, "  %9s  %-4s  %s  %s\n", t.Elapsed.Round(100*time.Millisecond), t.Result, strings.TrimPrefix(t.Package, "github.com/kstep-dev/kstep/"), t.Test)
	}
	var sum time.Duration
	fmt.Fprintf(w, "\nEvery package's wall time (%d packages):\n", len(pkgs))
	for _, p := range pkgs {
		sum += p.Elapsed
		fmt.Fprintf(w, "  %9s  %-4s  %s\n", p.Elapsed.Round(100*time.Millisecond), p.Result, strings.TrimPrefix(p.Package, "github.com/kstep-dev/kstep/"))
	}
	fmt.Fprintf(w, "  %9s  sum (packages run in parallel, so the wall time is less)\n", sum.Round(time.Second))
}
