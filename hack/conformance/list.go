package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Entry is one line of a list: a spec's full name (known failures) or a
// regexp (skips), and the reason it is there.
type Entry struct {
	Text, Reason string
	Line         int
}

// maxLine bounds a list's line: a spec name is a few hundred bytes.
const maxLine = 4096

// ReadList parses a list (the format is in doc.go). An entry before any
// "## reason", a duplicate entry, an empty reason or an overlong line is an
// error naming the line.
func ReadList(name string, r io.Reader) ([]Entry, error) {
	var (
		out    []Entry
		reason string
		seen   = map[string]int{}
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, maxLine), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "##"):
			reason = strings.TrimSpace(strings.TrimPrefix(line, "##"))
			if reason == "" {
				return nil, fmt.Errorf("%s:%d: a \"##\" line without a reason", name, n)
			}
		case strings.HasPrefix(line, "#"):
		default:
			if reason == "" {
				return nil, fmt.Errorf("%s:%d: %q has no reason (a \"## reason\" line above it)", name, n, line)
			}
			if first, dup := seen[line]; dup {
				return nil, fmt.Errorf("%s:%d: %q is listed already on line %d", name, n, line, first)
			}
			seen[line] = n
			out = append(out, Entry{Text: line, Reason: reason, Line: n})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return out, nil
}

// SkipRegexp joins a skip list's entries into one --ginkgo.skip regexp,
// each checked to compile on its own first.
func SkipRegexp(name string, skips []Entry) (string, error) {
	parts := make([]string, 0, len(skips))
	for _, s := range skips {
		if _, err := regexp.Compile(s.Text); err != nil {
			return "", fmt.Errorf("%s:%d: %w", name, s.Line, err)
		}
		parts = append(parts, "(?:"+s.Text+")")
	}
	return strings.Join(parts, "|"), nil
}
