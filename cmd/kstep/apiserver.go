package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/apiserver"
)

func newAPIServerCmd() *cobra.Command { return apiserverCmd(apiserver.Run) }

// apiserverCmd builds the command around run, so tests can see the Options
// the flags produce.
func apiserverCmd(run func(context.Context, apiserver.Options) error) *cobra.Command {
	opts := apiserver.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run one apiserver until SIGINT or SIGTERM",
		Long: `Run one Kubernetes-compatible apiserver in front of etcd. Apiservers are
stateless: several run side by side on the same etcd cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if err := run(ctx, opts); err != nil {
				return fmt.Errorf("apiserver %s: %w", opts.Name, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", opts.Name, "name of this apiserver in logs, metrics and step events")
	f.StringVar(&opts.Listen, "listen", opts.Listen, "host:port to serve the API on")
	f.StringSliceVar(&opts.EtcdServers, "etcd-servers", opts.EtcdServers, "comma-separated client URLs of the etcd members")
	f.DurationVar(&opts.EtcdDialTimeout, "etcd-dial-timeout", opts.EtcdDialTimeout, "bound on the first connection to etcd")
	f.Int64Var(&opts.MaxRequestBytes, "max-request-bytes", opts.MaxRequestBytes, "largest request body accepted; larger ones get 413 before reaching etcd")
	f.IntVar(&opts.WatchCacheSize, "watch-cache-size", opts.WatchCacheSize, "recent events each resource's watch cache keeps")
	f.DurationVar(&opts.BookmarkInterval, "bookmark-interval", opts.BookmarkInterval, "how often watchers that asked for bookmarks get one")
	f.StringVar(&opts.TraceFile, "trace-file", "", "append step events (rs.received, rs.persisted, pod.persisted) as JSON lines to this file")
	f.DurationVar(&opts.WatchFlushInterval, "watch-flush-interval", opts.WatchFlushInterval, "how often a busy watch stream is flushed at most; idle streams flush at once")
	return cmd
}
