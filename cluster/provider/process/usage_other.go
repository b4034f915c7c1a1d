//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
)

// maxRSSBytes: the BSDs and macOS report ru_maxrss in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) }

// cpuByGroup needs /proc: a running life is counted when it exits.
func cpuByGroup() (map[int]float64, error) {
	return nil, errors.New("no /proc: a running actor's CPU is counted when it exits")
}
