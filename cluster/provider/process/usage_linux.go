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

// groupCPUSeconds is the CPU time (user + system) of every live process
// of process group pgid, with what each has reaped (cutime, cstime): an
// actor's processes, since each actor leads a group of its own.
func groupCPUSeconds(pgid int) (float64, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	var ticks uint64
	found := false
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the glob
		}
		group, t, err := parseStat(b)
		if err != nil || group != pgid {
			continue
		}
		ticks += t
		found = true
	}
	if !found {
		return 0, fmt.Errorf("process group %d: no live process", pgid)
	}
	return float64(ticks) / clockTicks, nil
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
