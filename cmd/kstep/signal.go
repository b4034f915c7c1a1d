package main

import (
	"fmt"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/provider/process"
)

// newSignalCmd is what the docker provider runs inside an actor's container
// (docker exec) to signal one of its processes: a node's containerd or
// kubelet. It finds the process in the container's own /proc.
func newSignalCmd() *cobra.Command {
	var program string
	var sig int
	cmd := &cobra.Command{
		Use:    "signal",
		Short:  "Send a signal to a process of this container by its program (used by the docker provider)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if program == "" || sig <= 0 {
				return fmt.Errorf("signal: --program and a positive --signal are required")
			}
			pid, err := process.SignalProgram(1, program, syscall.Signal(sig))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "kstep signal: sent %v to %s (pid %d)\n", syscall.Signal(sig), program, pid)
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", `the program: argv[0]'s base name or a kstep subcommand ("containerd", "kubelet")`)
	cmd.Flags().IntVar(&sig, "signal", int(syscall.SIGKILL), "the signal number")
	return cmd
}
