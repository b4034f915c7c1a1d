package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's utime and stime
// (sysconf(_SC_CLK_TCK), 100 on every Linux kstep runs on).
const clockTick = 10 * time.Millisecond

// sample is what /proc says of one process at one moment.
type sample struct {
	PID      int
	CPU      time.Duration // utime + stime
	RSS, HWM int64         // bytes: VmRSS, VmHWM
}

// actor is the part of the process provider's cluster.json this reads.
type actor struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	Endpoint string `json:"endpoint"`
	PID      int    `json:"pid"`
}

// apiserverFor is the apiserver actor of stateDir's cluster.json whose
// endpoint is host (the kubeconfig's server).
func apiserverFor(stateDir, host string) (actor, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, "cluster.json"))
	if err != nil {
		return actor{}, fmt.Errorf("%w (the process provider's state: run kstep up -d with this --state-dir)", err)
	}
	var st struct {
		Actors []actor `json:"actors"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return actor{}, fmt.Errorf("cluster.json: %w", err)
	}
	var seen []string
	for _, a := range st.Actors {
		if a.Role != "apiserver" {
			continue
		}
		if strings.TrimSuffix(a.Endpoint, "/") == strings.TrimSuffix(host, "/") {
			if a.PID == 0 {
				return a, fmt.Errorf("%s is not running", a.Name)
			}
			return a, nil
		}
		seen = append(seen, a.Name+"="+a.Endpoint)
	}
	return actor{}, fmt.Errorf("no apiserver of cluster.json serves %s (it lists %v)", host, seen)
}

// readSample reads pid's CPU time and memory from /proc.
func readSample(pid int) (sample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return sample{}, err
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return sample{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return sample{}, err
	}
	rss, hwm, err := parseStatusMem(string(status))
	if err != nil {
		return sample{}, err
	}
	return sample{PID: pid, CPU: cpu, RSS: rss, HWM: hwm}, nil
}

// parseStatCPU is utime + stime of a /proc/<pid>/stat line. The command
// (field 2) is in parentheses and may hold spaces: fields are counted
// from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command field")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields", len(f)+2)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat: %w", err)
	}
	return time.Duration(u+s) * clockTick, nil
}

// parseStatusMem is VmRSS and VmHWM of a /proc/<pid>/status, in bytes.
func parseStatusMem(status string) (rss, hwm int64, err error) {
	var seen int
	for _, l := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc status: %s: %q", k, v)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status: %s: %w", k, err)
		}
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
		seen++
	}
	if seen != 2 {
		return 0, 0, errors.New("/proc status: no VmRSS or VmHWM")
	}
	return rss, hwm, nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
