package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("kstep-pause")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "kstep-pause: warning: not PID 1, zombies of other processes are not mine to reap")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "kstep-pause: %v, exiting\n", sig)
		return
	}
}

// reap collects every child that has exited. Signals coalesce, so one
// SIGCHLD may stand for several children: loop until none is left.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
