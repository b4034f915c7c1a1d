package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kstep:", err)
		os.Exit(exitCode(err))
	}
}

// The exit codes of every kstep command, one table (docs/reference/exit-codes.md):
// CI must tell "the cluster got slower" from "the run cannot be judged"
// from "the harness broke".
const (
	exitOK = 0
	// exitFailed: a regression, a failed gate, a load job that failed.
	exitFailed = 1
	// exitInvalid: an invalid run, runs that are not comparable, or a
	// usage error (bad flags, bad input, no cluster to talk to).
	exitInvalid = 2
	// exitHarness: the harness itself failed (a cluster that did not come
	// up, a run that could not complete): nothing was measured.
	exitHarness = 3
)

// exitCode is err's exit code: its own when it has one, exitInvalid for
// cobra's usage errors (unknown command or flag, wrong arguments), and
// otherwise exitHarness: an error nobody classified is kstep failing.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag", "accepts ", "invalid argument"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, "flag needs an argument") {
			return exitInvalid
		}
	}
	return exitHarness
}

// usageError exits 2: bad flags or input, or no cluster to talk to.
type usageError struct{ error }

func (e usageError) ExitCode() int { return exitInvalid }
func (e usageError) Unwrap() error { return e.error }

// invalidRun exits 2: the run finished, but what it measured cannot be
// trusted (a pod missed a step, a trace lost events, a sample ended before
// it began).
type invalidRun struct{ error }

func (e invalidRun) ExitCode() int { return exitInvalid }
func (e invalidRun) Unwrap() error { return e.error }

// jobFailed exits 1: the command ran and what it did failed (a
// regression, a gate, a load job).
type jobFailed struct{ error }

func (e jobFailed) ExitCode() int { return exitFailed }
func (e jobFailed) Unwrap() error { return e.error }

// harnessFailed exits 3: kstep could not do what it was asked (a cluster
// that would not start, a run dir it could not write).
type harnessFailed struct{ error }

func (e harnessFailed) ExitCode() int { return exitHarness }
func (e harnessFailed) Unwrap() error { return e.error }

// usageArgs wraps a cobra argument check so its complaint exits 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	var procs int
	root.PersistentFlags().IntVar(&procs, "gomaxprocs", 0, "this process's GOMAXPROCS, and its children's (0: Go's default); kstep up gives every actor its cluster's actorProcs (--actor-procs)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if procs < 0 {
			return usageError{fmt.Errorf("--gomaxprocs %d is negative", procs)}
		}
		if procs > 0 {
			runtime.GOMAXPROCS(procs)
			// A node's containerd and kubelet inherit it.
			return os.Setenv("GOMAXPROCS", strconv.Itoa(procs))
		}
		return nil
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
		newCleanCmd(),
		newReportCmd(),
		newCompareCmd(),
		newCalibrateCmd(),
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
