package main

import (
	"github.com/kstep-dev/kstep/cluster/netfault"

	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/etcd"
)

func newEtcdCmd() *cobra.Command {
	cfg := etcd.DefaultConfig()
	// etcd's own flags take milliseconds.
	heartbeatMs := uint(cfg.HeartbeatInterval / time.Millisecond)
	electionMs := uint(cfg.ElectionTimeout / time.Millisecond)

	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Run one etcd member until SIGINT or SIGTERM",
		Long: `Run one etcd member (go.etcd.io/etcd/server/v3/embed). Flags carry etcd's
own names and meanings. The member serves until SIGINT or SIGTERM, then
closes cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.HeartbeatInterval = time.Duration(heartbeatMs) * time.Millisecond
			cfg.ElectionTimeout = time.Duration(electionMs) * time.Millisecond
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			m, err := etcd.Start(ctx, cfg)
			if err != nil {
				if ctx.Err() != nil {
					return nil // stopped while waiting for peers
				}
				return fmt.Errorf("etcd: %w", err)
			}
			// etcd logs at warn by default; say once that the member serves.
			fmt.Fprintf(cmd.ErrOrStderr(), "kstep etcd: member %s ready, serving clients on %s\n",
				m.Name(), strings.Join(m.ClientURLs(), ","))
			if err := m.Wait(ctx); err != nil {
				return fmt.Errorf("etcd: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Name, "name", cfg.Name, "human-readable name for this member")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "path to the data directory")
	f.StringSliceVar(&cfg.ListenClientURLs, "listen-client-urls", cfg.ListenClientURLs, "list of URLs to listen on for client traffic")
	f.StringSliceVar(&cfg.AdvertiseClientURLs, "advertise-client-urls", cfg.AdvertiseClientURLs, "list of this member's client URLs to advertise to the rest of the cluster")
	f.StringSliceVar(&cfg.ListenPeerURLs, "listen-peer-urls", cfg.ListenPeerURLs, "list of URLs to listen on for peer traffic")
	f.StringSliceVar(&cfg.AdvertisePeerURLs, "initial-advertise-peer-urls", cfg.AdvertisePeerURLs, "list of this member's peer URLs to advertise to the rest of the cluster")
	f.StringVar(&cfg.InitialCluster, "initial-cluster", cfg.InitialCluster, "initial cluster configuration for bootstrapping: name=peerURL,...")
	f.StringVar(&cfg.InitialClusterState, "initial-cluster-state", cfg.InitialClusterState, `initial cluster state ("new" or "existing")`)
	f.StringVar(&cfg.InitialClusterToken, "initial-cluster-token", cfg.InitialClusterToken, "initial cluster token for the etcd cluster during bootstrap")
	f.UintVar(&heartbeatMs, "heartbeat-interval", heartbeatMs, "time (in milliseconds) of a heartbeat interval")
	f.UintVar(&electionMs, "election-timeout", electionMs, "time (in milliseconds) for an election to timeout")
	f.Uint64Var(&cfg.SnapshotCount, "snapshot-count", cfg.SnapshotCount, "number of committed transactions to trigger a snapshot to disk")
	f.Int64Var(&cfg.QuotaBackendBytes, "quota-backend-bytes", cfg.QuotaBackendBytes, "raise alarms when backend size exceeds the given quota (0 defaults to low space quota)")
	f.StringVar(&cfg.AutoCompactionMode, "auto-compaction-mode", cfg.AutoCompactionMode, `interpret auto-compaction-retention as "periodic" (duration) or "revision" (count)`)
	f.StringVar(&cfg.AutoCompactionRetention, "auto-compaction-retention", cfg.AutoCompactionRetention, `auto compaction retention for mvcc key value store; "0" disables it`)
	f.UintVar(&cfg.MaxRequestBytes, "max-request-bytes", cfg.MaxRequestBytes, "maximum client request size in bytes the server will accept")
	f.DurationVar(&cfg.WatchProgressNotifyInterval, "watch-progress-notify-interval", cfg.WatchProgressNotifyInterval, "duration of periodic watch progress notifications (0 disables them)")
	f.StringVar(&cfg.PeerProxyListen, "peer-proxy-listen", "", "run the "+netfault.LinkEtcdPeer+" link proxy on this address (advertise it in --initial-advertise-peer-urls) in front of --listen-peer-urls, controlled at "+netfault.ControlPath+" on the client URLs: how kstep partitions, delays or loses a member's peer traffic")
	f.StringVar(&cfg.ClientProxyListen, "client-proxy-listen", "", "run the "+netfault.LinkEtcdClient+" link proxy on this address in front of --listen-client-urls (point the apiservers at it), controlled at "+netfault.ControlPath+" on the client URLs: how kstep faults apiserver → etcd")
	f.StringSliceVar(&cfg.ListenMetricsURLs, "listen-metrics-urls", nil, "list of plain URLs to serve /metrics and /health on (no key access)")
	f.StringVar(&cfg.ClientTLS.CertFile, "cert-file", "", "path to the client server TLS cert file (https client URLs)")
	f.StringVar(&cfg.ClientTLS.KeyFile, "key-file", "", "path to the client server TLS key file")
	f.StringVar(&cfg.ClientTLS.TrustedCAFile, "trusted-ca-file", "", "path to the CA that signs the clients' certificates")
	f.BoolVar(&cfg.ClientTLS.ClientCertAuth, "client-cert-auth", false, "require a client certificate signed by --trusted-ca-file on the client URLs")
	f.StringVar(&cfg.PeerTLS.CertFile, "peer-cert-file", "", "path to the peer server TLS cert file, also presented to the peers this member dials (https peer URLs)")
	f.StringVar(&cfg.PeerTLS.KeyFile, "peer-key-file", "", "path to the peer server TLS key file")
	f.StringVar(&cfg.PeerTLS.TrustedCAFile, "peer-trusted-ca-file", "", "path to the CA that signs the peers' certificates")
	f.BoolVar(&cfg.PeerTLS.ClientCertAuth, "peer-client-cert-auth", false, "require a peer certificate signed by --peer-trusted-ca-file on the peer URLs")
	f.StringVar(&cfg.LinkControlCN, "link-control-cn", "", "the client certificate CommonName the link control ("+netfault.ControlPath+") answers on TLS client URLs; every other client is refused")
	f.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error, panic, or fatal")
	f.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve Go's /debug/pprof on the client URLs")
	cmd.AddCommand(newEtcdRecoverCmd())
	return cmd
}
