package apiserver

import (
	"github.com/kstep-dev/kstep/cluster/failpoint"
	"github.com/kstep-dev/kstep/cluster/netfault"
	"sync/atomic"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/openapi"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Server is one apiserver: stateless, the only etcd client of the cluster.
type Server struct {
	// fields are the field managers of managed fields and server-side
	// apply (managedfields.go).
	fields fieldManagers
	opts   Options
	log    *slog.Logger
	store  *storage.Store
	chain  Chain
	now    func() time.Time

	resources map[schema.GroupVersionResource]*resource
	groups    []schema.GroupVersion // served group versions, discovery order
	cachers   map[string]*storage.Cacher

	tracer   *trace.Tracer
	openapi  http.Handler
	registry *prometheus.Registry
	metrics  *metrics
	mux      *http.ServeMux
	// handler is mux behind authentication.
	handler http.Handler
	// tlsConfig, when set, makes Serve speak HTTPS.
	tlsConfig *tls.Config
	// policyReady is closed once the bootstrap RBAC policy is in the
	// caches (at once without RBAC); Ready waits for it.
	policyReady chan struct{}
	// priorityReady is closed once the system PriorityClasses are in the
	// cache (priority.go); Ready waits for it.
	priorityReady chan struct{}
	// quota, audit and limiter: ResourceQuota on every create
	// (admission.go), the audit log (audit.go), max-in-flight (inflight.go).
	quota *quotaGate
	audit *auditLog
	// failpoints, testing only: nil unless Options.Failpoints.
	failpoints *failpoints
	limiter    *inflight
	// links are the link proxies in front of this apiserver
	// (Options.LinkListen), controlled at netfault.ControlPath.
	links netfault.Links
	// kubelets reaches the nodes' kubelet servers (kubelet.go); nil
	// without --kubelet-client-certificate.
	kubelets *kubeletClient
	// nsMarked is the revision at which this apiserver last marked a
	// namespace Terminating (namespaceWritable waits for the cache to
	// have it).
	nsMarked atomic.Int64

	// inflight tracks open watches so shutdown can end them.
	wg sync.WaitGroup
}

// New builds a server on an etcd client. It does not start serving.
func New(opts Options, cli *clientv3.Client, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	switch opts.EndpointReconcilerType {
	case "":
		opts.EndpointReconcilerType = ReconcilerLease
	case ReconcilerLease, ReconcilerNone:
	default:
		return nil, fmt.Errorf("endpoint reconciler type %q: want %s or %s", opts.EndpointReconcilerType, ReconcilerLease, ReconcilerNone)
	}
	if opts.EndpointLeaseTTL <= 0 {
		opts.EndpointLeaseTTL = DefaultOptions().EndpointLeaseTTL
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{
		opts:      opts,
		log:       log.With("apiserver", opts.Name),
		store:     newStore(cli, reg, opts.EtcdRetry),
		chain:     DefaultChain(),
		now:       time.Now,
		resources: map[schema.GroupVersionResource]*resource{},
		cachers:   map[string]*storage.Cacher{},
		registry:  reg,
		metrics:   newMetrics(reg),

		priorityReady: make(chan struct{}),
	}
	// Opened here, not in Run, so an apiserver embedded in a test traces
	// too (Run closes it), and before the watch caches, which stamp only
	// when there is a tracer.
	var err error
	if s.tracer, err = trace.Open(opts.TraceFile, opts.Name); err != nil {
		return nil, err
	}
	cm := storage.NewCacheMetrics(reg)
	var specs []openapi.Resource
	served := resources()
	s.fields = newFieldManagers(served)
	var storeProtobuf bool
	switch opts.StorageMediaType {
	case "", protobufType:
		storeProtobuf = true
	case "application/json":
	default:
		return nil, fmt.Errorf("storage media type %q: want %s or application/json", opts.StorageMediaType, protobufType)
	}
	for _, r := range served {
		r.storeProtobuf = storeProtobuf && storesProtobuf(r)
		s.resources[r.gvr] = r
		gv := r.gvr.GroupVersion()
		if !containsGV(s.groups, gv) {
			s.groups = append(s.groups, gv)
		}
		if r.storage == nil && !r.uncached {
			s.cachers[r.storageName()] = storage.NewCacher(s.store, storage.CacherConfig{
				Resource:         r.gvr.Resource,
				Prefix:           r.prefix(""),
				Codec:            cacheCodec{r: r},
				Capacity:         opts.WatchCacheSize,
				CapacityBytes:    opts.WatchCacheBytes,
				DecodedEvents:    opts.WatchCacheDecodedEvents,
				DecodedBytes:     opts.WatchCacheDecodedBytes,
				DictBytes:        opts.WatchCacheDictBytes,
				IndexField:       r.indexField,
				ProgressInterval: opts.BookmarkInterval / 2,
				Log:              s.log,
				Metrics:          cm,
				Observe:          s.cacheStamps(r),
			})
		}
		specs = append(specs, openapiResource(r))
	}
	spec, err := openapi.New(specs)
	if err != nil {
		_ = s.tracer.Close()
		return nil, fmt.Errorf("openapi: %w", err)
	}
	s.openapi = spec
	s.groups = append(s.groups, metricsGV)
	for _, gv := range []schema.GroupVersion{authenticationv1.SchemeGroupVersion, authorizationv1.SchemeGroupVersion} {
		if !containsGV(s.groups, gv) {
			s.groups = append(s.groups, gv)
		}
	}
	if s.kubelets, err = newKubeletClient(opts); err != nil {
		_ = s.tracer.Close()
		return nil, err
	}
	s.mux = s.routes()
	if err := s.configureSecurity(opts); err != nil {
		_ = s.tracer.Close()
		return nil, err
	}
	s.addAdmission()
	if s.audit, err = openAudit(opts.AuditLogPath, opts.AuditLevel, reg); err != nil {
		_ = s.tracer.Close()
		return nil, err
	}
	s.limiter = newInflight(opts, reg)
	s.handler = s.authenticate(s.audit.audit(opts.MaxRequestBytes, s.authorizeRequest(s.limiter.limit(s.mux))))
	if opts.MaxHeaderBytes > 0 {
		s.handler = limitHeaders(opts.MaxHeaderBytes, s.handler)
	}
	return s, nil
}

func containsGV(gvs []schema.GroupVersion, gv schema.GroupVersion) bool {
	for _, g := range gvs {
		if g == gv {
			return true
		}
	}
	return false
}

// cacher is r's watch cache, nil for an uncached resource.
func (s *Server) cacher(r *resource) *storage.Cacher { return s.cachers[r.storageName()] }

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.serveHealth)
	mux.HandleFunc("/livez", s.serveHealth)
	mux.HandleFunc("/readyz", s.serveReady)
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/version", s.serveVersion)
	mux.Handle(netfault.ControlPath, &s.links)
	mux.Handle(netfault.ControlPath+"/", &s.links)
	if s.opts.Failpoints {
		s.failpoints = &failpoints{drop: map[string]dropArm{}}
		mux.HandleFunc(failpoint.Path, s.serveFailpoints)
		mux.HandleFunc(failpoint.Path+"/", s.serveFailpoints)
	}
	mux.Handle("/openapi/", s.openapi)
	mux.HandleFunc("/api", s.serveDiscovery)
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/apis", s.serveDiscovery)
	mux.HandleFunc("/apis/", s.serveAPI)
	return mux
}

// ServeHTTP serves the whole API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Start primes the watch caches and creates the namespaces and the
// PriorityClasses every cluster has. It returns once the caches are filling; Ready reports when they are.
func (s *Server) Start(ctx context.Context) {
	if s.opts.EtcdWritesToLeader {
		// Run built the same configuration once already: an error here
		// is a certificate file gone since.
		if cfg, err := etcdClientConfig(s.opts); err != nil {
			s.log.Error("etcd writes to the leader are off", "err", err)
		} else {
			s.store.RouteWritesToLeader(ctx, cfg)
		}
	}
	for _, c := range s.cachers {
		go c.Run(ctx)
	}
	go s.bootstrap(ctx)
	go func() {
		s.bootstrapPriorityClasses(ctx)
		if ctx.Err() == nil {
			close(s.priorityReady)
		}
	}()
	go s.store.Compact(ctx, storage.Compaction{Interval: s.opts.EtcdCompactionInterval,
		DefragThreshold: s.opts.EtcdDefragThreshold, DefragMinBytes: s.opts.EtcdDefragMinBytes}, s.log)
	if s.opts.authenticates() && contains(s.opts.AuthorizationModes, ModeRBAC) {
		go func() {
			s.bootstrapRBAC(ctx)
			if ctx.Err() == nil {
				close(s.policyReady)
			}
		}()
	}
}

// Ready reports whether etcd answers and every watch cache is primed.
func (s *Server) Ready(ctx context.Context) error {
	for name, c := range s.cachers {
		select {
		case <-c.Ready():
		default:
			return fmt.Errorf("watch cache %s not primed", name)
		}
	}
	select {
	case <-s.policyReady:
	default:
		return errors.New("bootstrap RBAC policy not in place yet")
	}
	select {
	case <-s.priorityReady:
	default:
		return errors.New("system PriorityClasses not in place yet")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := s.store.Revision(ctx); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	err := s.Ready(r.Context())
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		s.serveReadyVerbose(w, r, err)
		return
	}
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "[-]%v\nreadyz check failed\n", err)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// serveReadyVerbose is /readyz?verbose: the readiness check and, shown only
// here, etcd's space. A NOSPACE alarm never fails readiness: every
// apiserver shares the etcd, so it would take them all out of rotation at
// once, reads included, while only writes are refused.
func (s *Server) serveReadyVerbose(w http.ResponseWriter, r *http.Request, readyErr error) {
	var b strings.Builder
	if readyErr != nil {
		fmt.Fprintf(&b, "[-]ready failed: %v\n", readyErr)
	} else {
		b.WriteString("[+]ready ok\n")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	ids, err := s.store.NoSpaceAlarms(ctx)
	cancel()
	switch {
	case err != nil:
		fmt.Fprintf(&b, "[?]etcd-space unknown: %v (informational: readiness unaffected)\n", err)
	case len(ids) > 0:
		fmt.Fprintf(&b, "[-]etcd-space: NOSPACE alarm raised on %d member(s): etcd refuses writes until compacted, defragmented and disarmed (kstep etcd recover) (informational: readiness unaffected)\n", len(ids))
	default:
		b.WriteString("[+]etcd-space ok\n")
	}
	if readyErr != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		b.WriteString("readyz check failed\n")
	} else {
		b.WriteString("readyz check passed\n")
	}
	_, _ = w.Write([]byte(b.String()))
}

func newStore(cli *clientv3.Client, reg prometheus.Registerer, r storage.Retry) *storage.Store {
	st := storage.NewStore(cli, reg)
	st.SetRetry(r)
	return st
}

// etcdClientConfig is how the apiserver connects to etcd: its client over
// every member, and the per-member clients writes to the leader go
// through: over TLS with the apiserver's etcd client certificate when
// the options name one (--etcd-certfile).
func etcdClientConfig(opts Options) (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:            opts.EtcdServers,
		DialTimeout:          opts.EtcdDialTimeout,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		MaxCallSendMsgSize:   int(opts.MaxRequestBytes) + 64<<10,
		Logger:               zap.NewNop(),
	}
	if opts.EtcdCertFile == "" && opts.EtcdKeyFile == "" && opts.EtcdCAFile == "" {
		return cfg, nil
	}
	if (opts.EtcdCertFile == "") != (opts.EtcdKeyFile == "") {
		return cfg, errors.New("--etcd-certfile and --etcd-keyfile go together")
	}
	tlsCfg, err := (transport.TLSInfo{CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile, TrustedCAFile: opts.EtcdCAFile}).ClientConfig()
	if err != nil {
		return cfg, fmt.Errorf("etcd client TLS: %w", err)
	}
	cfg.TLS = tlsCfg
	return cfg, nil
}

// Run connects to etcd and serves until ctx is cancelled.
func Run(ctx context.Context, opts Options) error {
	log := slog.Default()
	cfg, err := etcdClientConfig(opts)
	if err != nil {
		return err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return fmt.Errorf("connect etcd %v: %w", opts.EtcdServers, err)
	}
	defer cli.Close()
	s, err := New(opts, cli, log)
	if err != nil {
		return err
	}
	defer s.tracer.Close() // New opened it
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", opts.Listen, err)
	}
	if opts.LinkListen != "" {
		p, err := netfault.Listen(netfault.LinkAPIServer, opts.LinkListen, loopback(ln.Addr()), netfault.Senders{})
		if err != nil {
			ln.Close()
			return err
		}
		s.links.Add(p)
		defer p.Close()
		if _, port, err := net.SplitHostPort(opts.LinkListen); err == nil && s.opts.AdvertisePort == 0 {
			if n, err := strconv.Atoi(port); err == nil {
				s.opts.AdvertisePort = int32(n)
			}
		}
	}
	return s.Serve(ctx, ln)
}

// loopback is addr with an unspecified host replaced by 127.0.0.1.
func loopback(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// Serve serves on ln until ctx is cancelled.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.Start(ctx)
	self, err := s.advertised(ln.Addr())
	if err != nil {
		return err
	}
	// Its lease is revoked before Serve returns: a stopped apiserver leaves
	// the kubernetes Service's endpoints at once.
	reconciled := make(chan struct{})
	go func() {
		defer close(reconciled)
		s.runEndpointReconciler(ctx, self)
	}()
	defer func() { <-reconciled }()
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		MaxHeaderBytes:    transportHeaderBytes(s.opts.MaxHeaderBytes),
		// No ReadTimeout: it would cut long-running watches. Bodies get their
		// own read deadline in readBody.
		IdleTimeout: 120 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() {
		if s.tlsConfig != nil {
			hs.TLSConfig = s.tlsConfig
			// Over TLS clients speak HTTP/2: one connection carries many
			// watches (a hollow-nodes process's thousand), as upstream's
			// --http2-max-streams-per-connection allows.
			hs.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1000}
			errc <- hs.ServeTLS(ln, "", "") // the certificate is in TLSConfig
			return
		}
		errc <- hs.Serve(ln)
	}()
	s.log.Info("serving", "addr", ln.Addr().String(), "etcd", s.opts.EtcdServers)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancel()
	shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	err = hs.Shutdown(shutdown)
	defer s.audit.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	return err
}

// serveAPI serves everything under /api/ and /apis/: group discovery or a
// resource request.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case selfSubjectAccessReviewPath:
		s.serveSelfSubjectAccessReview(w, r)
		return
	case selfSubjectReviewPath:
		s.serveSelfSubjectReview(w, r)
		return
	case subjectAccessReviewPath:
		s.serveSubjectAccessReview(w, r)
		return
	case selfSubjectRulesReviewPath:
		s.serveSelfSubjectRulesReview(w, r)
		return
	case tokenReviewPath:
		s.serveTokenReview(w, r)
		return
	}
	if ns, ok := localSubjectAccessReviewNamespace(r.URL.Path); ok {
		s.serveLocalSubjectAccessReview(w, r, ns)
		return
	}
	path := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(path, "/")
	if (parts[0] == "api" && len(parts) <= 2) || (parts[0] == "apis" && len(parts) <= 3) {
		s.serveDiscovery(w, r)
		return
	}
	ri, ok := parseRequestInfo(r)
	if !ok {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	s.serveResource(w, r, ri)
}
