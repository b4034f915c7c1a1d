package main

import (
	"github.com/kstep-dev/kstep/cluster/netfault"

	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/failpoint"
	"github.com/kstep-dev/kstep/cluster/pki"
)

func newAPIServerCmd() *cobra.Command { return apiserverCmd(apiserver.Run) }

// apiserverCmd builds the command around run, so tests can see the Options
// the flags produce.
func apiserverCmd(run func(context.Context, apiserver.Options) error) *cobra.Command {
	opts := apiserver.DefaultOptions()
	// In seconds, as upstream's flag.
	minRequestTimeout := int(opts.MinRequestTimeout / time.Second)
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run one apiserver until SIGINT or SIGTERM",
		Long: `Run one Kubernetes-compatible apiserver in front of etcd. Apiservers are
stateless: several run side by side on the same etcd cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if minRequestTimeout < 0 {
				return fmt.Errorf("--min-request-timeout %d: must not be negative", minRequestTimeout)
			}
			opts.MinRequestTimeout = time.Duration(minRequestTimeout) * time.Second
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
	f.StringVar(&opts.LinkListen, "link-listen", "", "run the "+netfault.LinkAPIServer+" link proxy on this host:port in front of --listen (point the actors at it), controlled at "+netfault.ControlPath+": how kstep delays, loses or blackholes actor → apiserver traffic")
	f.BoolVar(&opts.Failpoints, "enable-failpoints", false, "testing only: serve "+failpoint.Path+" (admin only): freeze the watch caches, drop watch events — how the chaos gate's negative controls break what its checkers check")
	_ = f.MarkHidden("enable-failpoints")
	f.StringSliceVar(&opts.EtcdServers, "etcd-servers", opts.EtcdServers, "comma-separated client URLs of the etcd members")
	f.StringVar(&opts.EtcdCAFile, "etcd-cafile", "", "SSL Certificate Authority file used to secure etcd communication")
	f.StringVar(&opts.EtcdCertFile, "etcd-certfile", "", "SSL certification file used to secure etcd communication")
	f.StringVar(&opts.EtcdKeyFile, "etcd-keyfile", "", "SSL key file used to secure etcd communication")
	f.DurationVar(&opts.EtcdDialTimeout, "etcd-dial-timeout", opts.EtcdDialTimeout, "bound on the first connection to etcd")
	f.DurationVar(&opts.EtcdRetry.Attempt, "etcd-attempt-timeout", opts.EtcdRetry.Attempt, "how long one etcd request may go unanswered before it is sent again (a write only where that is safe); twice etcd's election timeout lets a new leader take it")
	f.DurationVar(&opts.EtcdRetry.Budget, "etcd-retry-budget", opts.EtcdRetry.Budget, "how long an operation may wait for etcd over all its attempts before the client gets 504 with a Retry-After")
	f.BoolVar(&opts.EtcdWritesToLeader, "etcd-writes-to-leader", opts.EtcdWritesToLeader, "send each write to the etcd member that leads (found by asking the members when a write or a new Raft term says it may have changed), not to any member, which would forward it to the leader and answer two hops later; false: clientv3's round robin")
	f.StringVar(&opts.StorageMediaType, "storage-media-type", opts.StorageMediaType, "how objects are written to etcd: application/vnd.kubernetes.protobuf (upstream's default) or application/json (readable with etcdctl); either is read")
	f.Int64Var(&opts.MaxRequestBytes, "max-request-bytes", opts.MaxRequestBytes, "largest request body accepted; larger ones get 413 before reaching etcd")
	f.IntVar(&opts.MaxHeaderBytes, "max-header-bytes", opts.MaxHeaderBytes, "largest request line and headers accepted (a label selector travels in the URL); larger ones get a 431 Status on HTTP/1.1 and HTTP/2")
	f.IntVar(&opts.WatchCacheSize, "watch-cache-size", opts.WatchCacheSize, "recent events each resource's watch cache keeps")
	f.Int64Var(&opts.WatchCacheBytes, "watch-cache-bytes", opts.WatchCacheBytes, "bound on the stored size of those events, per resource: the oldest go first")
	f.IntVar(&opts.WatchCacheDecodedEvents, "watch-cache-decoded-events", opts.WatchCacheDecodedEvents, "how many of those events, the newest, keep the versions they replaced decoded; older ones keep only their stored bytes")
	f.Int64Var(&opts.WatchCacheDecodedBytes, "watch-cache-decoded-bytes", opts.WatchCacheDecodedBytes, "bound on the stored size of the versions those decoded events carry, per resource: past it, fewer events keep theirs decoded")
	f.IntVar(&opts.WatchCacheDictBytes, "watch-cache-dict-bytes", opts.WatchCacheDictBytes, "how many bytes of a resource's first compacted versions make its compression dictionary; later ones are held S2-compressed with it; negative: held as they are")
	f.DurationVar(&opts.WatchStallTimeout, "watch-stall-timeout", opts.WatchStallTimeout, "close a watch whose client has not taken what was written to it for this long (it resumes or relists); 0: never")
	f.IntVar(&minRequestTimeout, "min-request-timeout", minRequestTimeout, "a watch without timeoutSeconds ends cleanly after a random time between this many seconds and twice it (upstream's flag and default), so that clients reconnect gradually; 0: never")
	f.DurationVar(&opts.BookmarkInterval, "bookmark-interval", opts.BookmarkInterval, "how often watchers that asked for bookmarks get one")
	f.StringVar(&opts.TraceFile, "trace-file", "", "append step events (rs.received, rs.persisted, pod.persisted) as JSON lines to this file")
	f.DurationVar(&opts.WatchFlushInterval, "watch-flush-interval", opts.WatchFlushInterval, "how long a watch stream with a backlog goes unflushed at most (queued events share a write); a stream with nothing more queued is flushed at once; 0: every event")
	f.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "serve HTTPS with this certificate (PEM); without it the apiserver serves plain HTTP")
	f.StringVar(&opts.TLSKeyFile, "tls-private-key-file", "", "the private key (PEM) of --tls-cert-file")
	f.StringVar(&opts.ClientCAFile, "client-ca-file", "", "authenticate client certificates signed by this CA (CommonName: user, Organization: groups)")
	f.StringVar(&opts.TokenAuthFile, "token-auth-file", "", `authenticate bearer tokens listed in this CSV file: token,user,uid,"group1,group2"`)
	f.StringVar(&opts.KubeletClientCertFile, "kubelet-client-certificate", "", "client certificate (PEM) the apiserver presents to the kubelets for pods/log, exec, attach, portforward, nodes/proxy and metrics.k8s.io (user "+pki.APIServerKubeletClientUser+", bound to system:kubelet-api-admin)")
	f.StringVar(&opts.KubeletClientKeyFile, "kubelet-client-key", "", "the private key (PEM) of --kubelet-client-certificate")
	f.StringVar(&opts.KubeletCAFile, "kubelet-certificate-authority", "", "CA (PEM) that signs the kubelets' serving certificates, verified with the node's name as the TLS server name")
	f.StringSliceVar(&opts.AuthorizationModes, "authorization-mode", opts.AuthorizationModes, "authorizers in order: AlwaysAllow, Node, RBAC (e.g. Node,RBAC); without --client-ca-file or --token-auth-file every caller is the admin")
	f.Int64Var(&opts.DefaultNotReadyTolerationSeconds, "default-not-ready-toleration-seconds", opts.DefaultNotReadyTolerationSeconds, "tolerationSeconds of the not-ready:NoExecute toleration added to every new pod (upstream: 300; kstep matches --pod-eviction-timeout); negative: none")
	f.Int64Var(&opts.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", opts.DefaultUnreachableTolerationSeconds, "tolerationSeconds of the unreachable:NoExecute toleration added to every new pod (upstream: 300; kstep matches --pod-eviction-timeout); negative: none")
	f.IntVar(&opts.MaxRequestsInflight, "max-requests-inflight", opts.MaxRequestsInflight, "user read-only requests served at once; over it 429 (0: no limit). System actors and node Leases have a lane of their own")
	f.IntVar(&opts.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", opts.MaxMutatingRequestsInflight, "user mutating requests served at once; over it 429 (0: no limit)")
	f.StringVar(&opts.AuditLogPath, "audit-log-path", "", "append one audit.k8s.io/v1 Event per resource request to this file as JSON lines")
	f.StringVar(&opts.AuditLevel, "audit-policy-level", opts.AuditLevel, "what the audit log records of every request: None, Metadata or Request (Metadata plus the JSON request body)")
	f.DurationVar(&opts.ReadHeaderTimeout, "read-header-timeout", opts.ReadHeaderTimeout, "how long a client may take to send its request headers")
	f.DurationVar(&opts.BodyReadTimeout, "body-read-timeout", opts.BodyReadTimeout, "how long a client may take to send its request body")
	f.Float64Var(&opts.EtcdDefragThreshold, "etcd-defrag-threshold", opts.EtcdDefragThreshold, "after a compaction it did, defragment each etcd member whose file is more than this share unused (0: never), one member at a time")
	f.Int64Var(&opts.EtcdDefragMinBytes, "etcd-defrag-min-bytes", opts.EtcdDefragMinBytes, "defragment only members whose file is at least this large")
	f.DurationVar(&opts.EtcdCompactionInterval, "etcd-compaction-interval", opts.EtcdCompactionInterval, "how often etcd is compacted to the revision of one interval earlier (one apiserver compacts each interval); 0: never")
	f.StringVar(&opts.AdvertiseAddress, "advertise-address", "", "IPv4 address the default/kubernetes Service's endpoints list for this apiserver (default: the address --listen binds, or the host's first non-loopback IPv4 address when that is every address)")
	f.Int32Var(&opts.AdvertisePort, "advertise-port", 0, "port the default/kubernetes Service's endpoints list for this apiserver (default: --link-listen's port when set, else --listen's)")
	f.StringVar(&opts.EndpointReconcilerType, "endpoint-reconciler-type", opts.EndpointReconcilerType, "how the default/kubernetes Service's endpoints are kept: lease (each apiserver holds an etcd lease of --endpoint-lease-ttl; the endpoints list the live ones) or none")
	f.DurationVar(&opts.EndpointLeaseTTL, "endpoint-lease-ttl", opts.EndpointLeaseTTL, "TTL of each apiserver's endpoint lease: a killed apiserver leaves the kubernetes Service's endpoints within it")
	return cmd
}
