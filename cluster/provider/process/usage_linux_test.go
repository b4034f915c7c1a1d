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
// the test burns: what a running actor's Usage adds. It spins until the
// group has used 0.2 s more (on a loaded machine that takes longer than 0.2
// s of wall time), and fails if that never shows within 30 s.
func TestGroupCPUSecondsGrows(t *testing.T) {
	pgid := syscall.Getpgrp()
	groupCPU := func() float64 {
		g, err := cpuByGroup()
		if err != nil {
			t.Fatal(err)
		}
		return g[pgid]
	}
	before := groupCPU()
	x, after := 0, before
	deadline := time.Now().Add(30 * time.Second)
	for after-before < 0.2 && time.Now().Before(deadline) {
		for range 1_000_000 {
			x++
		}
		after = groupCPU()
	}
	if d := after - before; d < 0.2 {
		t.Fatalf("group %d's CPU grew %.2f s in 30 s of spinning (x %d), want ≥ 0.2", pgid, d, x)
	}
	if g, _ := cpuByGroup(); g[1<<30] != 0 {
		t.Fatal("a group with no process has a CPU time")
	}
}
