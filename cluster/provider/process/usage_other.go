//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
)

// maxRSSBytes: the BSDs and macOS report ru_maxrss in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) }

// groupCPUSeconds needs /proc: a running life is counted when it exits.
func groupCPUSeconds(int) (float64, error) {
	return 0, errors.New("no /proc: a running actor's CPU is counted when it exits")
}
