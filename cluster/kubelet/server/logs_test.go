package server

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// criLine is one CRI log record at t0+sec seconds.
func criLine(sec int, stream, tag, msg string) string {
	return fmt.Sprintf("%s %s %s %s\n", t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano), stream, tag, msg)
}

func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readAll(t *testing.T, path string, q string) string {
	t.Helper()
	opts, err := parseLogOptions(mustQuery(t, q), t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if err := copyLog(context.Background(), f, &b, func() {}, opts, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func mustQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestContainerLogOptions(t *testing.T) {
	path := writeLog(t,
		criLine(0, "stdout", "F", "one"),
		criLine(1, "stderr", "F", "two"),
		"not a cri line\n",
		criLine(2, "stdout", "P", "thr"),
		criLine(2, "stdout", "F", "ee"),
		criLine(3, "stdout", "F", "four"),
		criLine(4, "stdout", "F:x", "five"),
	)
	for _, tc := range []struct{ q, want string }{
		{"", "one\ntwo\nthree\nfour\nfive\n"},
		{"tailLines=2", "four\nfive\n"},
		{"tailLines=0", ""},
		{"tailLines=100", "one\ntwo\nthree\nfour\nfive\n"},
		// Lines of the file, as upstream counts them: a partial record is one.
		{"tailLines=3", "ee\nfour\nfive\n"},
		{"sinceTime=" + t0.Add(3*time.Second).Format(time.RFC3339), "four\nfive\n"},
		{"sinceSeconds=7", "four\nfive\n"}, // now is t0+10s
		{"limitBytes=6", "one\ntw"},
		{"limitBytes=4&tailLines=1", "five"},
		{"timestamps=true&tailLines=1", t0.Add(4*time.Second).Format(time.RFC3339Nano) + " five\n"},
		{"timestamps=1&sinceSeconds=8&limitBytes=100", t0.Add(2*time.Second).Format(time.RFC3339Nano) + " thr" +
			t0.Add(2*time.Second).Format(time.RFC3339Nano) + " ee\n" +
			t0.Add(3*time.Second).Format(time.RFC3339Nano) + " four\n" +
			t0.Add(4*time.Second).Format(time.RFC3339Nano) + " five\n"},
	} {
		if got := readAll(t, path, tc.q); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestTailReadsFromTheEnd(t *testing.T) {
	var lines []string
	for i := 0; i < 20000; i++ { // ~1 MB: many tail blocks
		lines = append(lines, criLine(i, "stdout", "F", fmt.Sprintf("line %05d", i)))
	}
	path := writeLog(t, lines...)
	if got, want := readAll(t, path, "tailLines=3"), "line 19997\nline 19998\nline 19999\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	got := readAll(t, path, "tailLines=5000")
	if n := strings.Count(got, "\n"); n != 5000 || !strings.HasPrefix(got, "line 15000\n") {
		t.Fatalf("tail 5000: %d lines, starting %q", n, got[:min(len(got), 20)])
	}
	// The file ends in a line still being written (no newline): it counts
	// as a line for the offset, and is not printed until it is complete.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(strings.TrimSuffix(criLine(1, "stdout", "F", "half"), "\n"))
	f.Close()
	if got, want := readAll(t, path, "tailLines=2"), "line 19999\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A reader that cannot seek keeps a ring of the last lines.
	b, err := lastLines(strings.NewReader(strings.Join(lines, "")), 2)
	if err != nil || string(b) != lines[19998]+lines[19999] {
		t.Fatalf("lastLines: %q, %v", b, err)
	}
}

func TestParseLogOptionsRejectsBadInput(t *testing.T) {
	for _, q := range []string{
		"tailLines=-1", "tailLines=x", "limitBytes=0", "sinceSeconds=0", "sinceTime=yesterday",
		"follow=maybe", "previous=2", "sinceSeconds=5&sinceTime=" + t0.Format(time.RFC3339),
		"tailLines=" + strings.Repeat("9", 500),
	} {
		_, err := parseLogOptions(mustQuery(t, q), t0)
		if err == nil {
			t.Errorf("%q: accepted", q)
			continue
		}
		if len(err.Error()) > 300 {
			t.Errorf("%q: error not bounded: %d bytes", q, len(err.Error()))
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFollow(t *testing.T) {
	path := writeLog(t, criLine(0, "stdout", "F", "first"))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- copyLog(ctx, f, out, func() {}, logOptions{follow: true, tail: -1}, func() bool { return true })
	}()
	app, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	waitUntil(t, "first line", func() bool { return out.String() == "first\n" })
	// A line written in two writes is printed once complete.
	l := criLine(1, "stdout", "F", "second")
	_, _ = app.WriteString(l[:10])
	time.Sleep(3 * followPoll)
	_, _ = app.WriteString(l[10:])
	waitUntil(t, "appended line", func() bool { return out.String() == "first\nsecond\n" })
	select {
	case err := <-done:
		t.Fatalf("follow ended by itself: %v", err)
	case <-time.After(2 * followPoll):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end with its context")
	}
}

func TestFollowEndsWhenContainerStops(t *testing.T) {
	path := writeLog(t, criLine(0, "stdout", "F", "only"))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- copyLog(context.Background(), f, &b, func() {}, logOptions{follow: true, tail: -1}, func() bool { return false })
	}()
	select {
	case err := <-done:
		if err != nil || b.String() != "only\n" {
			t.Fatalf("got %q, %v", b.String(), err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follow of a stopped container did not end")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
