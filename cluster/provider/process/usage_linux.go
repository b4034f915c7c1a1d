package process

import "syscall"

// maxRSSBytes: Linux reports ru_maxrss in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }
