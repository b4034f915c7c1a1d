package process

import (
	"syscall"
	"testing"
	"time"
)

// A command name with spaces and parentheses does not shift the fields.
func TestParseStat(t *testing.T) {
	line := []byte("4242 (kstep (hollow) x) S 1 4200 4200 0 -1 4194560 100 0 0 0 7 3 11 13 20 0 9 0 123 456 789\n")
	pgrp, ticks, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if pgrp != 4200 || ticks != 7+3+11+13 {
		t.Fatalf("pgrp %d ticks %d, want 4200 and 34", pgrp, ticks)
	}
	if _, _, err := parseStat([]byte("4242 (short) S 1 2")); err == nil {
		t.Fatal("a truncated line parsed")
	}
}

// The test's own process group, read from the real /proc, grows by the CPU
// the test burns: what a running actor's Usage adds.
func TestGroupCPUSecondsGrows(t *testing.T) {
	pgid := syscall.Getpgrp()
	before, err := groupCPUSeconds(pgid)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		x++
	}
	after, err := groupCPUSeconds(pgid)
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 0.1 {
		t.Fatalf("group %d's CPU grew %.2f s over 300 ms of spinning (x %d), want ≥ 0.1", pgid, d, x)
	}
	if _, err := groupCPUSeconds(1 << 30); err == nil {
		t.Fatal("a group with no process has a CPU time")
	}
}
