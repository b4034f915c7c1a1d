package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

func newEtcdRecoverCmd() *cobra.Command {
	var endpoints []string
	var tlsInfo transport.TLSInfo
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Bring an etcd whose space quota filled (NOSPACE) back to accepting writes",
		Long: `Recover an etcd cluster whose space quota filled (its NOSPACE alarm is
raised and every write is refused with "etcdserver: mvcc: database space
exceeded", which the apiservers answer as 507): compact the whole history
up to the current revision, defragment each member in turn, then disarm
the NOSPACE alarms. Objects are untouched (compaction drops superseded
versions only); watches resuming from before the compaction get 410 and
relist. Each member's database size and size in use are printed before
and after. When the objects themselves fill the quota (in use after
recovery close to --quota-backend-bytes), the alarm comes back with the next
write: raise the members' quota or delete objects.

A kstep cluster's etcd (unless --insecure) takes only certificates of its
own CA: pass kstep's operator certificate with --cacert, --cert and --key
(the ETCDCTL_CACERT, ETCDCTL_CERT and ETCDCTL_KEY kstep up prints).

Exit status: 0 recovered, 1 a step failed (named), 2 bad flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(endpoints) == 0 {
				return usageError{fmt.Errorf("--endpoints is required (the etcd members' client URLs)")}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			cfg := clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
			if !tlsInfo.Empty() || tlsInfo.TrustedCAFile != "" {
				if (tlsInfo.CertFile == "") != (tlsInfo.KeyFile == "") {
					return usageError{fmt.Errorf("--cert and --key go together")}
				}
				tlsCfg, err := tlsInfo.ClientConfig()
				if err != nil {
					return fmt.Errorf("etcd client TLS: %w", err)
				}
				cfg.TLS = tlsCfg
			}
			cli, err := clientv3.New(cfg)
			if err != nil {
				return fmt.Errorf("etcd client: %w", err)
			}
			defer cli.Close()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			r, err := etcdadmin.Recover(ctx, cli, 0, log)
			out := cmd.OutOrStdout()
			print := func(when string, ms []etcdadmin.MemberSpace) {
				for _, m := range ms {
					fmt.Fprintf(out, "%-6s %-28s db %8.1f MiB  in use %8.1f MiB  fragmented %3.0f%%  NOSPACE %v\n", when, m.Endpoint,
						float64(m.DBSize)/(1<<20), float64(m.DBSizeInUse)/(1<<20), 100*m.Fragmentation(), m.NoSpace)
				}
			}
			print("before", r.Before)
			if err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			print("after", r.After)
			fmt.Fprintf(out, "compacted to revision %d, %d NOSPACE alarm(s) disarmed\n", r.CompactedTo, r.Disarmed)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&endpoints, "endpoints", nil, "the etcd members' client URLs (comma-separated)")
	f.StringVar(&tlsInfo.TrustedCAFile, "cacert", "", "the CA of the members' certificates (a kstep cluster's: ETCDCTL_CACERT, as kstep up prints it)")
	f.StringVar(&tlsInfo.CertFile, "cert", "", "client certificate (a kstep cluster's etcd admin: ETCDCTL_CERT)")
	f.StringVar(&tlsInfo.KeyFile, "key", "", "client key (ETCDCTL_KEY)")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long (defragmenting a large member takes a while)")
	return cmd
}
