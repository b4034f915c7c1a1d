package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/node"
)

func newNodeCmd() *cobra.Command {
	var (
		cfg           node.Config
		kubeconfig    string
		kubeletArgs   []string
		runKubelet    bool
		keepPods      bool
		containerdLog string
	)
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run one real node (containerd + kubelet) until SIGINT or SIGTERM",
		Long: `Run one real node on this host: write containerd's configuration under
--dir, start containerd (built by make node-bins, from --bin-dir), wait
until its CRI answers, then run the kubelet as

  kstep kubelet --container-runtime-endpoint unix://<dir>/containerd.sock \
    --node-name <name> --pod-cidr 10.88.<index>.0/24 --root-dir <dir>/kubelet \
    --pod-logs-dir <dir>/pods [--kubeconfig <file>] <--kubelet-arg ...>

(--kubelet-arg values come last and so override the others).

Containerd or the kubelet that exits is started again. On SIGINT or SIGTERM
the kubelet stops, then containerd; containers keep running (their shims
outlive containerd) and a node started again on the same --dir finds them.

Pods get addresses on 10.88.<index>.0/24 (bridge kstep<index>); images
named registry.kstep.local/... are pulled from --registry (kstep registry).
Needs root on Linux.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			var err error
			if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
				return err
			}
			if cfg.BinDir, err = filepath.Abs(cfg.BinDir); err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("actor", "node-"+cfg.Name)
			opts := []node.Option{node.WithLog(log)}
			switch containerdLog {
			case "":
			case "-":
				opts = append(opts, node.WithContainerdOutput(os.Stdout))
			default:
				f, err := os.OpenFile(containerdLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				opts = append(opts, node.WithContainerdOutput(f))
			}
			if runKubelet {
				self, err := os.Executable()
				if err != nil {
					return err
				}
				opts = append(opts, node.WithKubelet(node.Kubelet{Binary: self, Kubeconfig: kubeconfig, Args: kubeletArgs}))
			}
			n, err := node.Start(ctx, cfg, opts...)
			if err != nil {
				if ctx.Err() != nil {
					return nil // stopped while starting
				}
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "kstep node: node %s ready: CRI at %s, pods on %s\n",
				cfg.Name, n.Endpoint(), n.Config().PodCIDR())
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if keepPods {
				return n.Stop(sctx)
			}
			return n.Shutdown(sctx)
		},
	}
	host, _ := os.Hostname()
	f := cmd.Flags()
	f.StringVar(&cfg.Name, "name", host, "the node's name")
	f.BoolVar(&keepPods, "keep-pods", false, "on SIGTERM stop only the kubelet and containerd and leave the pods running (their shims outlive containerd, as upstream); by default the node shuts down like a machine: every pod is stopped and removed first")
	f.IntVar(&cfg.Index, "index", 0, "the node's index on this host, 0-255: picks the pod subnet 10.88.<index>.0/24 and bridge kstep<index>")
	f.StringVar(&cfg.Dir, "dir", "", "the node's directory: configuration, containerd's root, state and socket, logs (default $HOME/.kstep/nodes/<name>)")
	f.StringVar(&cfg.BinDir, "bin-dir", defaultBinDir(), "directory holding containerd, containerd-shim-runc-v2, runc and the CNI plugins (make node-bins)")
	f.StringVar(&cfg.Registry, "registry", "127.0.0.1:5000", "host:port of kstep's registry, which serves registry.kstep.local")
	f.StringVar(&cfg.Snapshotter, "snapshotter", "", `containerd's snapshotter: "overlayfs", "native", or empty for overlayfs where it mounts`)
	f.StringVar(&cfg.LogLevel, "containerd-log-level", "info", "containerd's log level")
	f.StringVar(&containerdLog, "containerd-log", "", `file for containerd's output; "-" for stdout (default <dir>/containerd.log)`)
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig the kubelet uses to reach the apiserver")
	f.StringArrayVar(&kubeletArgs, "kubelet-arg", nil, "an extra argument for the kubelet (repeat the flag for each)")
	f.BoolVar(&runKubelet, "kubelet", true, "run the kubelet (false: containerd alone)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if cfg.Dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			cfg.Dir = filepath.Join(home, ".kstep", "nodes", cfg.Name)
		}
		return nil
	}
	return cmd
}
