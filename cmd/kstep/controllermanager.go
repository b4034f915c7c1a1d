package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/manager"
	"github.com/kstep-dev/kstep/cluster/leader"
	"github.com/kstep-dev/kstep/cluster/opsserver"
	"github.com/kstep-dev/kstep/cluster/trace"
)

func newControllerManagerCmd() *cobra.Command {
	var kubeconfig, traceFile, metricsAddr string
	var opsTLS opsserver.TLS
	cfg := manager.Config{
		Identity: defaultIdentity("controller-manager"),
		Options:  controller.DefaultOptions(),
		Leader:   leader.Defaults("kstep-controller-manager", ""),
	}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controllers (ReplicaSet, Deployment, ...) until SIGINT or SIGTERM",
		Long: `Run the controller-manager: the controllers that turn desired state into
pods (steps ② and ③). Several run side by side; one leads (a Lease in
kube-system), the others stand by and take over when it dies.

Controllers: ` + strings.Join(manager.Names(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := controller.ValidateEndpointsStamp(cfg.Options.EndpointsStamp); err != nil {
				return fmt.Errorf("--endpoints-stamp: %w", err)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			rc, err := restConfig(ctx, kubeconfig)
			if err != nil {
				return err
			}
			cfg.REST = rc
			cfg.Leader.Identity = cfg.Identity
			cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("actor", cfg.Identity)
			t, err := trace.Open(traceFile, cfg.Identity)
			if err != nil {
				return err
			}
			defer t.Close()
			cfg.Tracer = t
			reviews, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			if err := serveOps(ctx, metricsAddr, opsTLS, reviews.AuthorizationV1(), nil); err != nil {
				return err
			}
			if err := manager.Run(ctx, cfg); err != nil {
				return fmt.Errorf("controller-manager %s: %w", cfg.Identity, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver to use (required)")
	f.StringVar(&cfg.Identity, "name", cfg.Identity, "this controller-manager's identity in leader election and events")
	f.StringSliceVar(&cfg.Controllers, "controllers", []string{"*"}, `controllers to run: "*" for all, "-name" to leave one out`)
	f.StringVar(&cfg.RootCAFile, "root-ca-file", "", "CA bundle (PEM) the root CA publisher puts in every namespace's kube-root-ca.crt (default: the CA of --kubeconfig)")
	f.StringVar(&traceFile, "trace-file", "", "append step events (JSON lines) to this file")
	opsTLSFlags(f, &opsTLS)
	f.StringVar(&metricsAddr, "metrics-listen", "", "host:port for /healthz, /metrics and /debug/pprof (empty: none)")
	f.IntVar(&cfg.Options.Workers, "concurrent-syncs", cfg.Options.Workers, "keys each controller syncs concurrently")
	f.DurationVar(&cfg.Options.NodeMonitorGracePeriod, "node-monitor-grace-period", cfg.Options.NodeMonitorGracePeriod, "a node whose Lease is not renewed for this long becomes Ready=Unknown and is tainted unreachable (upstream: 50s)")
	f.DurationVar(&cfg.Options.NodeMonitorPeriod, "node-monitor-period", cfg.Options.NodeMonitorPeriod, "how often node health is checked")
	f.DurationVar(&cfg.Options.PodEvictionTimeout, "pod-eviction-timeout", cfg.Options.PodEvictionTimeout, "how long pods that do not tolerate it stay on an unreachable node before deletion (upstream: 300s via default tolerations)")
	f.StringVar(&cfg.Options.EndpointsStamp, "endpoints-stamp", cfg.Options.EndpointsStamp, `which controller stamps step ⑧'s endpoints.updated: "endpoints" (its Endpoints write) or "endpointslices" (its EndpointSlice write)`)
	f.IntVar(&cfg.Options.MaxEndpointsPerSlice, "max-endpoints-per-slice", cfg.Options.MaxEndpointsPerSlice, "endpoints in each EndpointSlice the endpointslice and mirroring controllers write (upstream: 100)")
	f.DurationVar(&cfg.Options.PodWatchDelay, "failpoint-pod-watch-delay", 0, "testing only: deliver every pod event to the ReplicaSet controller this late")
	_ = f.MarkHidden("failpoint-pod-watch-delay")
	f.BoolVar(&cfg.Options.NoExpectations, "failpoint-no-expectations", false, "testing only: the ReplicaSet controller ignores its expectations (the chaos gate must catch the over-creation)")
	_ = f.MarkHidden("failpoint-no-expectations")
	addLeaderFlags(f, &cfg.LeaderElect, &cfg.Leader)
	return cmd
}
