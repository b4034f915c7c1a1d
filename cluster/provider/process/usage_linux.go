package process

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// maxRSSBytes: Linux reports ru_maxrss in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux ABI.
const clockTicks = 100

// cpuByGroup is the CPU time (user + system) of every process group's live
// processes, with what each has reaped (cutime, cstime), read in one pass
// over /proc: an actor's processes are the group it leads.
func cpuByGroup() (map[int]float64, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	ticks := map[int]uint64{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the glob
		}
		if group, t, err := parseStat(b); err == nil {
			ticks[group] += t
		}
	}
	out := make(map[int]float64, len(ticks))
	for g, t := range ticks {
		out[g] = float64(t) / clockTicks
	}
	return out, nil
}

// parseStat reads a /proc/<pid>/stat line's process group (field 5) and
// utime + stime + cutime + cstime (fields 14 to 17). The command name
// (field 2) may hold spaces and parentheses: fields are counted from its
// last ')'.
func parseStat(b []byte) (pgrp int, ticks uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("stat: no command name")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, fmt.Errorf("stat: pgrp: %w", err)
	}
	for _, s := range f[11:15] {
		v, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("stat: times: %w", err)
		}
		ticks += v
	}
	return g, ticks, nil
}
