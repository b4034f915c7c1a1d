package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
	"github.com/kstep-dev/kstep/cluster/kubelet/prober"
	"github.com/kstep-dev/kstep/cluster/nodelabels"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// Config is one kubelet: the node it registers, the runtime it drives and
// its timings. The zero values of the timings take the defaults below.
type Config struct {
	NodeName string
	Client   kubernetes.Interface
	// Runtime is the CRI client: cri.Dial for containerd, or
	// cri.New(cri.InProcess(sim, sim)) for a hollow node.
	Runtime *cri.Client
	// Network runs HTTP and TCP probes: nil for the real network
	// (prober.NewNet); a hollow node passes its simruntime, which answers
	// in process.
	Network prober.Network
	// Tracer stamps steps ⑥–⑧. Nil records nothing.
	Tracer *trace.Tracer
	// Recorder writes core/v1 Events (Pulling, Started, BackOff, ...). Nil
	// writes none.
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Clock drives backoff and probes; tests inject a fake.
	Clock clock.WithTicker

	// Node registration.
	Capacity      corev1.ResourceList // cpu, memory, pods
	Labels        map[string]string
	Taints        []corev1.Taint
	NodeIP        string       // InternalIP and the pods' hostIP
	PodCIDR       netip.Prefix // spec.podCIDR; optional
	Version       string       // nodeInfo.kubeletVersion
	Hollow        bool         // nodeInfo and host reads are synthesized
	LeaseDuration int32        // seconds; upstream 40
	// ServerPort is where this node's kubelet server listens, published in
	// status.daemonEndpoints.kubeletEndpoint (default 10250). Nodes sharing
	// a host (a hollow-nodes process) share one server, IP and port.
	ServerPort int32
	// LogReader opens a container's log file (the CRI log path) for the
	// kubelet server: os.Open by default; a hollow node's simruntime
	// answers with a simulated log.
	LogReader func(path string) (io.ReadCloser, error)

	// Timings.
	LeaseRenewInterval    time.Duration // default 2 s
	StatusUpdateFrequency time.Duration // default 10 s
	RelistPeriod          time.Duration // default 1 s
	BackoffInitial        time.Duration // crash-loop and image-pull backoff; default 10 s
	BackoffMax            time.Duration // default 5 min
	SyncRetryInitial      time.Duration // a failed sync's first retry; default 500 ms
	SyncRetryMax          time.Duration // default 10 s
	StatusWriters         int           // concurrent pods/status writers; default 2
	// ProvisionalStatusDelay is how long the "being created" status waits
	// for the sync that set it to set its outcome (statusWriter); default
	// 100 ms, a third of a real node's RunPodSandbox here.
	ProvisionalStatusDelay time.Duration

	// Real-node details passed to the runtime.
	PodLogsDir     string   // default /var/log/pods
	RootDir        string   // emptyDir volumes live under it; default /var/lib/kstep/kubelet
	CgroupParent   string   // pods' cgroup parent (cgroupfs); empty: the runtime decides
	ClusterDNS     []string // nameservers for dnsPolicy ClusterFirst
	ClusterDomain  string   // default cluster.local
	RuntimeHandler string   // RunPodSandbox's runtime handler; empty: the default

	// FailpointRestartContainersAfter, testing only: this long after the
	// first container runs, every running container is stopped once, so the kubelet
	// restarts it (failpoint.go).
	FailpointRestartContainersAfter time.Duration
}

// Defaults fills zero timings and paths.
func (c *Config) Defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.LeaseRenewInterval, 2*time.Second)
	def(&c.StatusUpdateFrequency, 10*time.Second)
	def(&c.RelistPeriod, time.Second)
	def(&c.BackoffInitial, 10*time.Second)
	def(&c.BackoffMax, 5*time.Minute)
	def(&c.SyncRetryInitial, 500*time.Millisecond)
	def(&c.SyncRetryMax, 10*time.Second)
	def(&c.ProvisionalStatusDelay, 100*time.Millisecond)
	if c.StatusWriters <= 0 {
		c.StatusWriters = 2
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 40
	}
	if c.ServerPort <= 0 {
		c.ServerPort = 10250
	}
	if c.LogReader == nil {
		c.LogReader = func(path string) (io.ReadCloser, error) { return os.Open(path) }
	}
	if c.PodLogsDir == "" {
		c.PodLogsDir = "/var/log/pods"
	}
	if c.RootDir == "" {
		c.RootDir = "/var/lib/kstep/kubelet"
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "v0.0.0-kstep"
	}
	if c.Capacity == nil {
		c.Capacity = corev1.ResourceList{}
	}
	if _, ok := c.Capacity[corev1.ResourcePods]; !ok {
		c.Capacity[corev1.ResourcePods] = *resource.NewQuantity(110, resource.DecimalSI)
	}
}

// Kubelet is one node's agent. Run it once.
type Kubelet struct {
	cfg      Config
	client   kubernetes.Interface
	runtime  *cri.Client
	log      *slog.Logger
	clock    clock.WithTicker
	tracer   *trace.Tracer
	recorder record.EventRecorder

	podInformer cache.SharedIndexInformer
	pods        corelisters.PodLister
	probes      *prober.Manager
	status      *statusWriter
	crashLoop   *Backoff // per pod container
	pullBackoff *Backoff // per pod image
	images      *imagePuller

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	// observed holds the UIDs stamped pod.observed.kubelet.
	synced atomic.Bool // the pod informer has synced: orphans may be judged

	started     time.Time
	runtimeName atomic.Pointer[string] // "containerd", "kstep-sim": the containerID scheme
	registered  atomic.Bool
	node        nodeState
	ctx         context.Context
}

// New checks a config and builds a kubelet; Run starts it.
func New(cfg Config) (*Kubelet, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("kubelet: node name is required")
	}
	if cfg.Client == nil || cfg.Runtime == nil {
		return nil, errors.New("kubelet: a client and a runtime are required")
	}
	for key := range cfg.Labels {
		if !nodelabels.KubeletMaySet(key) {
			// NodeRestriction refuses the Node with it: registration could
			// never succeed. Upstream's kubelet refuses to start too.
			return nil, fmt.Errorf("kubelet: node label %q: a kubelet may not set labels in node-restriction.kubernetes.io or, of kubernetes.io and k8s.io, any but its own; an admin sets it (kubectl label node)", key)
		}
	}
	cfg.Defaults()
	if cfg.Network == nil {
		cfg.Network = prober.NewNet()
	}
	k := &Kubelet{
		cfg: cfg, client: cfg.Client, runtime: cfg.Runtime, clock: cfg.Clock,
		log: cfg.Log.With("node", cfg.NodeName), tracer: cfg.Tracer, recorder: cfg.Recorder,
		crashLoop:   NewBackoff(cfg.BackoffInitial, cfg.BackoffMax, cfg.Clock),
		pullBackoff: NewBackoff(cfg.BackoffInitial, cfg.BackoffMax, cfg.Clock),
		workers:     map[types.UID]*podWorker{}, started: cfg.Clock.Now(),
	}
	k.images = newImagePuller(k)
	return k, nil
}

// Registered reports whether the node object exists: what /healthz of a
// kubelet process answers.
func (k *Kubelet) Registered() bool { return k.registered.Load() }

// NodeName is the node this kubelet runs.
func (k *Kubelet) NodeName() string { return k.cfg.NodeName }

// Run registers the node, keeps its Lease and status, and runs its pods
// until ctx ends. Pods and containers are left running when it returns: a
// kubelet that stops is not a node that drains.
func (k *Kubelet) Run(ctx context.Context) error {
	k.ctx = ctx
	k.probes = prober.NewManager(ctx, k.cfg.Network, k.execProbe, k.clock, k.podChanged)
	k.probes.SetRecorder(k.recorder)
	k.checkRuntime(ctx)
	if err := k.register(ctx); err != nil {
		return err
	}
	k.registered.Store(true)
	k.log.Info("node registered", "runtime", k.runtimeScheme())

	var wg sync.WaitGroup
	wg.Go(func() { k.runLease(ctx) })
	wg.Go(func() { k.runNodeStatus(ctx) })

	k.podInformer = newPodInformer(k.client, k.cfg.NodeName)
	k.pods = corelisters.NewPodLister(k.podInformer.GetIndexer())
	k.status = newStatusWriter(k)
	if _, err := k.podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k.podEvent(o, true) },
		UpdateFunc: func(_, o any) { k.podEvent(o, false) },
		DeleteFunc: func(o any) { k.podEvent(o, false) },
	}); err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	wg.Go(func() { k.podInformer.RunWithContext(ctx) })
	for i := 0; i < k.cfg.StatusWriters; i++ {
		wg.Go(func() { k.status.run(ctx) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), k.podInformer.HasSynced) {
		k.status.shutdown()
		wg.Wait()
		return ctx.Err()
	}
	k.synced.Store(true)
	wg.Go(func() { k.runRelist(ctx) })
	if d := k.cfg.FailpointRestartContainersAfter; d > 0 {
		wg.Go(func() { k.failpointRestartContainers(ctx, d) })
	}
	<-ctx.Done()
	k.status.shutdown()
	wg.Wait()
	k.waitWorkers()
	return nil
}

// runtimeScheme is the runtime's name, the scheme of container IDs in pod
// status ("containerd://<id>").
func (k *Kubelet) runtimeScheme() string {
	if p := k.runtimeName.Load(); p != nil {
		return *p
	}
	return "cri"
}
