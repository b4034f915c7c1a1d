package main

import (
	"context"
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
		os.Exit(1)
	}
}

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
