//go:build unix && !linux

package process

import "syscall"

// maxRSSBytes: the BSDs and macOS report ru_maxrss in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) }
