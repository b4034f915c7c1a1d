package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "skip":
		fs := flag.NewFlagSet("skip", flag.ExitOnError)
		skips := fs.String("skips", "test/conformance/skips.txt", "the skip list")
		_ = fs.Parse(os.Args[2:])
		entries, err := readListFile(*skips)
		if err != nil {
			fail(err)
		}
		re, err := SkipRegexp(*skips, entries)
		if err != nil {
			fail(err)
		}
		fmt.Println(re)
	case "compare":
		fs := flag.NewFlagSet("compare", flag.ExitOnError)
		knownPath := fs.String("known", "test/conformance/known-failures.txt", "the known-failures list")
		outcomes := fs.String("outcomes", "", "also write every spec's outcome, run time and name to this file")
		draft := fs.String("draft", "", "also write the failed-new specs to this file in the list's format, grouped under their failure's first line, to be given their reasons and added to the list")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		known, err := readListFile(*knownPath)
		if err != nil {
			fail(err)
		}
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			os.Exit(3)
		}
		reports, err := ReadReport(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "conformance: %s: %v\n", fs.Arg(0), err)
			os.Exit(3)
		}
		v := Compare(reports, known)
		if err := writeFile(*outcomes, v.Outcomes); err != nil {
			fail(err)
		}
		if err := writeFile(*draft, v.Draft); err != nil {
			fail(err)
		}
		v.Summary(os.Stdout, *knownPath)
		os.Exit(v.Exit())
	default:
		usage()
	}
}

func readListFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadList(path, f)
}

// writeFile writes path with write, when path is given.
func writeFile(path string, write func(io.Writer)) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	write(f)
	return f.Close()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "conformance:", err)
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: conformance skip [-skips FILE] | conformance compare [-known FILE] [-outcomes FILE] [-draft FILE] REPORT.json")
	os.Exit(2)
}
