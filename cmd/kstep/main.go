package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kstep:", err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}

// usageError exits 2: bad flags or input, or no cluster to talk to.
type usageError struct{ error }

func (e usageError) ExitCode() int { return 2 }
func (e usageError) Unwrap() error { return e.error }

// jobFailed exits 1: the command ran and what it did failed.
type jobFailed struct{ error }

func (e jobFailed) ExitCode() int { return 1 }
func (e jobFailed) Unwrap() error { return e.error }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "kstep",
		Short: "A Kubernetes-style control plane and the harness that measures it",
		Long: `kstep runs a Kubernetes-style control plane (etcd, apiserver, ...) on one
machine and measures it. "kstep up" starts a cluster; the other commands
are the cluster's actors, which kstep up runs as child processes.`,
		Version: version,
		// Errors are printed once, by main; usage only for bad flags.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.AddCommand(
		newVersionCmd(),
		newUpCmd(),
		newDownCmd(),
		newSuperviseCmd(),
		newLoadCmd(),
		newEtcdCmd(),
		newAPIServerCmd(),
		newControllerManagerCmd(),
		newKubeletCmd(),
		newHollowNodesCmd(),
		newRegistryCmd(),
		newNodeCmd(),
		newSchedulerCmd(),
		newBenchCmd(),
		newReportCmd(),
		newCompareCmd(),
		newHistoryCmd(),
		newChaosCmd(),
		newSignalCmd(),
	)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kstep's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "kstep", version)
		},
	}
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM.
// Once it is cancelled the handlers are removed, so a second ^C kills the
// process the default way instead of waiting for a slow shutdown.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
