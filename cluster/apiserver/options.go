package apiserver

import (
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
)

// Options configures one apiserver process. The zero value is not usable;
// start from DefaultOptions.
type Options struct {
	// Name identifies this apiserver in logs, metrics and step events.
	Name string
	// Listen is the host:port the HTTP server binds.
	Listen string
	// LinkListen, when set, runs the netfault.LinkAPIServer link proxy on this
	// host:port in front of Listen (point the actors at it), controlled at
	// netfault.ControlPath (admin only, through RBAC): how kstep faults
	// actor → apiserver.
	LinkListen string
	// Failpoints, testing only, serves failpoint.Path (failpoints.go).
	Failpoints bool
	// EtcdServers are the client URLs of the etcd members.
	EtcdServers []string
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile make the apiserver's etcd
	// connections TLS (upstream's --etcd-cafile, --etcd-certfile,
	// --etcd-keyfile): the CA that signed the members' certificates, and
	// the apiserver's client certificate. Empty: plain.
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// EtcdDialTimeout bounds the first connection to etcd.
	EtcdDialTimeout time.Duration
	// EtcdRetry bounds one etcd request (Attempt) and all the attempts of
	// one operation (Budget): a write unanswered within Attempt is sent
	// again, and one unanswered within Budget gets 504 with a Retry-After
	// (storage.Retry says when a retried write counts as applied).
	EtcdRetry storage.Retry
	// EtcdWritesToLeader sends each write's first attempt to the etcd
	// member that leads (storage.Store.RouteWritesToLeader) instead of
	// any member: a follower forwards it and answers two hops later.
	EtcdWritesToLeader bool
	// MaxRequestBytes is the largest request body accepted; larger bodies get
	// 413 before anything reaches etcd. etcd refuses requests over 1.5 MiB by
	// default, so the apiserver refuses them first.
	MaxRequestBytes int64
	// WatchCacheSize is the number of recent events each resource's watch
	// cache keeps for watches that resume from an older resourceVersion.
	WatchCacheSize int
	// WatchCacheBytes bounds the stored size of those events too, per
	// resource: updates of 1 MiB objects pin at most this much.
	WatchCacheBytes int64
	// WatchCacheDecodedEvents is how many of those events, the newest, keep
	// the versions they replaced decoded and encoded; older versions are
	// kept as etcd stored them and decoded again by the rare watch that
	// resumes from so far back (storage.Entry).
	WatchCacheDecodedEvents int
	// WatchCacheDecodedBytes bounds those events by the stored size of
	// the versions they carry too: updates of a large object keep no more
	// than this much (stored) decoded, per resource.
	WatchCacheDecodedBytes int64
	// WatchCacheDictBytes is how many bytes of a resource's first
	// compacted versions make its compression dictionary: older versions
	// are then held S2-compressed with it (storage.CacherConfig.DictBytes);
	// negative: held as they are.
	WatchCacheDictBytes int
	// WatchStallTimeout: a watch whose client has not taken what was
	// written to it for this long is closed (the client resumes or
	// relists), and its queue is freed. 0: never.
	WatchStallTimeout time.Duration
	// MinRequestTimeout: a watch that gives no timeoutSeconds ends,
	// cleanly, after a random time in [MinRequestTimeout,
	// 2*MinRequestTimeout), as upstream's --min-request-timeout has it, so
	// that clients reconnect (and rebalance across apiservers) gradually.
	// 0: such a watch has no end of its own.
	MinRequestTimeout time.Duration
	// BookmarkInterval is how often watchers that asked for bookmarks get one.
	BookmarkInterval time.Duration
	// TraceFile, when set, receives this apiserver's step events
	// (rs.received, rs.persisted, pod.persisted) as JSON lines.
	TraceFile string
	// WatchFlushInterval bounds how long a watch stream with a backlog
	// goes unflushed: events already queued are written without a flush,
	// many per syscall, for at most this long. A stream with nothing more
	// queued is flushed at once, so an idle stream never waits; 0 flushes
	// every event.
	WatchFlushInterval time.Duration

	// TLSCertFile and TLSKeyFile, when set, make the apiserver serve HTTPS
	// with this certificate. Without them it serves plain HTTP.
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile is the CA whose client certificates authenticate users
	// (CommonName the user, Organizations the groups); it needs TLS.
	ClientCAFile string
	// TokenAuthFile is a static token file: CSV lines of
	// token,user,uid,"group1,group2".
	TokenAuthFile string
	// KubeletClientCertFile and KubeletClientKeyFile are the apiserver's
	// client certificate toward the kubelets (user
	// pki.APIServerKubeletClientUser, bound to system:kubelet-api-admin),
	// and KubeletCAFile the CA their
	// serving certificates are verified against, with the node's name as
	// the TLS server name. All three or none: without them pods/log,
	// exec, attach, portforward, nodes/proxy and metrics.k8s.io answer
	// 503 (kubelet.go).
	KubeletClientCertFile string
	KubeletClientKeyFile  string
	KubeletCAFile         string
	// AuthorizationModes are the authorizers, asked in order: AlwaysAllow,
	// Node, RBAC. With no client CA and no token file every caller is the
	// admin, whatever the modes say: authentication is opt-in.
	AuthorizationModes []string

	// DefaultNotReadyTolerationSeconds and DefaultUnreachableTolerationSeconds
	// are the tolerationSeconds of the NoExecute not-ready and unreachable
	// tolerations every new pod gets (upstream: 300). kstep's default matches
	// the controller-manager's fast eviction (--pod-eviction-timeout, 10 s).
	// Negative: no such toleration is added.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
	// MaxRequestsInflight and MaxMutatingRequestsInflight bound the user
	// requests (non-watch) served at once; over them a request gets 429.
	// System actors and node Leases have their own lane of the two summed
	// (inflight.go). 0 disables the limit.
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// AuditLogPath, when set, receives one audit.k8s.io/v1 Event per
	// resource request as JSON lines; AuditLevel is None, Metadata or
	// Request.
	AuditLogPath string
	AuditLevel   string
	// ReadHeaderTimeout bounds how long a client may take to send its
	// request headers (slowloris); BodyReadTimeout its request body.
	ReadHeaderTimeout time.Duration
	BodyReadTimeout   time.Duration
	// MaxHeaderBytes bounds a request's line and headers (a label selector
	// travels in the URL): larger ones get a 431 Status, over HTTP/1.1 and
	// HTTP/2 alike (headers.go).
	MaxHeaderBytes int

	// AdvertiseAddress and AdvertisePort are where the other actors reach
	// this apiserver, as the default/kubernetes Service's endpoints list it
	// (kubernetes_service.go). Empty/0: the address Listen binds (the host's
	// first non-loopback IPv4 address when that is every address) and the
	// port of LinkListen when set, else of Listen.
	AdvertiseAddress string
	AdvertisePort    int32
	// EndpointReconcilerType is "lease" (upstream's default: every
	// apiserver holds an etcd lease of EndpointLeaseTTL and the endpoints
	// list the live ones) or "none" (the endpoints are not written).
	EndpointReconcilerType string
	EndpointLeaseTTL       time.Duration
	// EtcdCompactionInterval is how often etcd is compacted to the revision
	// of one interval earlier (upstream's compactor, every apiserver
	// running it, one of them compacting each interval: storage.Compact).
	// The watch caches keep their own ring; etcd keeps one interval of
	// history for watches that resume and lists at a past revision. 0:
	// never (the chaos engine holds compaction for its history checks).
	EtcdCompactionInterval time.Duration
	// EtcdDefragThreshold: after a compaction it did, the apiserver
	// defragments each member whose file is more than this share unused
	// and at least EtcdDefragMinBytes large (0: never).
	EtcdDefragThreshold float64
	EtcdDefragMinBytes  int64
	// StorageMediaType is how objects are written to etcd:
	// application/vnd.kubernetes.protobuf (upstream's default and ours;
	// empty means it) or application/json (readable with etcdctl). Reads
	// take either, so a cluster can switch with a restart.
	StorageMediaType string
}

// authenticates reports whether callers must prove who they are.
func (o *Options) authenticates() bool { return o.ClientCAFile != "" || o.TokenAuthFile != "" }

// DefaultOptions returns the options a single-host cluster runs with.
func DefaultOptions() Options {
	return Options{
		Name:                    "apiserver-0",
		Listen:                  "127.0.0.1:6443",
		EtcdServers:             []string{"http://127.0.0.1:2379"},
		EtcdDialTimeout:         5 * time.Second,
		EtcdRetry:               storage.DefaultRetry,
		EtcdWritesToLeader:      true,
		MaxRequestBytes:         3 << 19, // 1.5 MiB
		StorageMediaType:        protobufType,
		WatchCacheSize:          16384,
		WatchCacheBytes:         storage.DefaultCapacityBytes,
		WatchCacheDecodedEvents: storage.DefaultDecodedEvents,
		WatchCacheDecodedBytes:  storage.DefaultDecodedBytes,
		WatchCacheDictBytes:     storage.DefaultDictBytes,
		// upstream closes a watcher that cannot take an event at once after
		// a short budget; a whole write stalled this long is a client that
		// stopped reading.
		WatchStallTimeout: 10 * time.Second,
		// upstream's --min-request-timeout.
		MinRequestTimeout: 1800 * time.Second,
		BookmarkInterval:  5 * time.Second,
		// Measured with make bench-api (BenchmarkWatchFanout).
		WatchFlushInterval: 10 * time.Millisecond,
		AuthorizationModes: []string{ModeAlwaysAllow},
		// kstep's eviction timing; upstream's DefaultTolerationSeconds is 300.
		DefaultNotReadyTolerationSeconds:    10,
		DefaultUnreachableTolerationSeconds: 10,
		// upstream's defaults.
		MaxRequestsInflight:         400,
		MaxMutatingRequestsInflight: 200,
		AuditLevel:                  "Metadata",
		ReadHeaderTimeout:           10 * time.Second,
		BodyReadTimeout:             30 * time.Second,
		MaxHeaderBytes:              128 << 10,
		EndpointReconcilerType:      ReconcilerLease,
		// upstream's master lease TTL.
		EndpointLeaseTTL: 15 * time.Second,
		// upstream's --etcd-compaction-interval.
		EtcdCompactionInterval: 5 * time.Minute,
		EtcdDefragThreshold:    0.5,
		EtcdDefragMinBytes:     64 << 20,
	}
}
