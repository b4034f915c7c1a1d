package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/kubelet"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/trace"
)

func newHollowNodesCmd() *cobra.Command {
	var kubeconfig, traceFile, metricsAddr, prefix string
	var count, first int
	var nf nodeFlags
	cmd := &cobra.Command{
		Use:   "hollow-nodes",
		Short: "Run N hollow nodes (kubelets on a simulated runtime) in one process",
		Long: `Run N hollow nodes in one process: each the unchanged kubelet with its own
Node, Lease, pod informer and watch (so the apiserver's load is what N real
nodes would put on it), driving its own in-process simulated CRI runtime.
They share one HTTP transport to the apiserver.

Node i is named <prefix><i>; its pods get IPs from the i-th /24 of
240.0.0.0/4 (node 1: 240.0.1.0/24), a reserved range nothing routes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if count <= 0 {
				return errors.New("--count must be positive")
			}
			rc, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			hc, err := rest.HTTPClientFor(rc)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfigAndClient(rc, hc)
			if err != nil {
				return err
			}
			prof, err := simruntime.LoadProfile(nf.latencyProfile)
			if err != nil {
				return err
			}
			t, err := trace.Open(traceFile, "hollow-nodes")
			if err != nil {
				return err
			}
			defer t.Close()
			recorder, stopEvents := eventRecorder(cs, nf.events)
			defer stopEvents()
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("actor", "hollow-nodes")

			kubelets := make([]*kubelet.Kubelet, count)
			for i := range kubelets {
				name := fmt.Sprintf("%s%d", prefix, first+i)
				cfg := kubelet.Config{NodeName: name, Client: cs, Tracer: t, Log: log, Recorder: recorder(name)}
				if err := nf.config(&cfg, true); err != nil {
					return err
				}
				sim, err := simruntime.New(name, simruntime.NodeCIDR(first+i), prof, nil)
				if err != nil {
					return err
				}
				if kubelets[i], err = kubelet.NewHollow(cfg, sim); err != nil {
					return err
				}
			}
			registered := func() int {
				n := 0
				for _, k := range kubelets {
					if k.Registered() {
						n++
					}
				}
				return n
			}
			if err := serveOps(ctx, metricsAddr, func() error {
				if n := registered(); n < count {
					return fmt.Errorf("%d of %d nodes registered", n, count)
				}
				return nil
			}); err != nil {
				return err
			}
			var wg sync.WaitGroup
			errs := make([]error, count)
			for i, k := range kubelets {
				wg.Go(func() { errs[i] = k.Run(ctx) })
			}
			wg.Wait()
			if ctx.Err() == nil {
				return errors.Join(errs...)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver to use (required)")
	f.IntVar(&count, "count", 0, "how many hollow nodes (required)")
	f.IntVar(&first, "first-index", 0, "number of the first node (to run several hollow-nodes processes side by side)")
	f.StringVar(&prefix, "name-prefix", "hollow-", "node names are <prefix><index>")
	f.StringVar(&traceFile, "trace-file", "", "append step events (JSON lines) to this file")
	f.StringVar(&metricsAddr, "metrics-listen", "", "host:port for /healthz (200 once every node is registered), /metrics and /debug/pprof")
	nf.add(f, false)
	return cmd
}
