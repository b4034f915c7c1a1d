package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kstep-dev/kstep/cluster/eventsink"
	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/config"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins"
	"github.com/kstep-dev/kstep/cluster/scheduler/queue"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// Defaults for Config.
const (
	DefaultAssumeTTL       = 30 * time.Second
	DefaultBindConcurrency = 16
	cleanupPeriod          = time.Second
)

// Config is what one Scheduler — one term of leadership — is built from.
type Config struct {
	// Client reaches the apiserver: informers, bindings, events.
	Client kubernetes.Interface
	// Configuration is the parsed --config; nil is config.Default().
	Configuration *config.Configuration
	// Registry of plugins; nil is plugins.NewRegistry().
	Registry framework.Registry
	// Parallelism overrides the configuration's when positive.
	Parallelism int
	// Tracer stamps pod.observed.scheduler and pod.scheduled (the binding
	// apiserver stamps pod.bound); nil records nothing.
	Tracer *trace.Tracer
	// Metrics records attempts, latencies and queue lengths; nil records
	// nothing.
	Metrics *Metrics
	// Recorder writes Events; nil makes Run create one writing to Client.
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Clock is injected for tests; nil is the real clock.
	Clock clock.WithTicker
	// Seed makes tie-breaking between equal nodes reproducible; 0 seeds
	// from the clock.
	Seed uint64
	// AssumeTTL is how long an assumed pod whose binding returned waits
	// for the informer's confirmation before it is forgotten.
	AssumeTTL time.Duration
	// UnschedulableTimeout: a pod in the unschedulable pool this long is
	// retried without an event.
	UnschedulableTimeout time.Duration
	// BindConcurrency bounds binding calls in flight.
	BindConcurrency int
	// BindDelay is a failpoint, for testing only: each binding waits this
	// long before its call, so a benchmark can prove that `kstep compare`
	// flags a step that got slower (⑤ binding persisted).
	BindDelay time.Duration
}

// Scheduler is kstep's scheduler for one term: informers feed the cache
// and the queue; one goroutine runs the scheduling cycle; bindings run
// asynchronously, bounded.
type Scheduler struct {
	client   kubernetes.Interface
	profiles map[string]*framework.Framework
	queue    *queue.PriorityQueue
	cache    *cache.Cache
	snapshot *cache.Snapshot
	algo     *algorithm
	clock    clock.WithTicker
	tracer   *trace.Tracer
	// bindDelay is Config.BindDelay (a failpoint).
	bindDelay time.Duration
	metrics   *Metrics
	recorder  record.EventRecorder
	log       *slog.Logger
	exec      executor
	// workloads are what plugins read of Services and pod owners; Run
	// fills them once their informers synced.
	workloads *framework.WorkloadListers
	// informers is the term's shared factory: the node informer and the
	// plugins' listers (Handle.SharedInformerFactory); nil without a
	// client.
	informers informers.SharedInformerFactory
}

// New builds a Scheduler; nothing runs until Run.
func New(cfg Config) (*Scheduler, error) {
	return newScheduler(cfg, nil)
}

func newScheduler(cfg Config, exec executor) (*Scheduler, error) {
	cc := cfg.Configuration
	if cc == nil {
		cc = config.Default()
	}
	if err := cc.Validate(); err != nil {
		return nil, err
	}
	registry := cfg.Registry
	if registry == nil {
		registry = plugins.NewRegistry()
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	parallelism := int(cc.Parallelism)
	if cfg.Parallelism > 0 {
		parallelism = cfg.Parallelism
	}
	ttl := cfg.AssumeTTL
	if ttl == 0 {
		ttl = DefaultAssumeTTL
	}
	unschedTimeout := cfg.UnschedulableTimeout
	if unschedTimeout == 0 {
		unschedTimeout = queue.DefaultUnschedulableTimeout
	}
	if exec == nil {
		n := cfg.BindConcurrency
		if n <= 0 {
			n = DefaultBindConcurrency
		}
		exec = newBoundedExecutor(n)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(clk.Now().UnixNano())
	}
	s := &Scheduler{
		client:    cfg.Client,
		profiles:  map[string]*framework.Framework{},
		cache:     cache.New(ttl, clk),
		snapshot:  cache.NewEmptySnapshot(),
		clock:     clk,
		tracer:    cfg.Tracer,
		bindDelay: cfg.BindDelay,
		metrics:   cfg.Metrics,
		recorder:  cfg.Recorder,
		log:       log,
		exec:      exec,
		workloads: &framework.WorkloadListers{},
	}
	par := framework.NewParallelizer(parallelism)
	var pct int32
	if cc.PercentageOfNodesToScore != nil {
		pct = *cc.PercentageOfNodesToScore
	}
	s.algo = &algorithm{snapshot: s.snapshot, parallel: par, percentage: pct, rand: rand.New(rand.NewPCG(seed, seed>>1|1))}
	s.queue = queue.New(clk,
		queue.WithBackoff(time.Duration(cc.PodInitialBackoffSeconds)*time.Second, time.Duration(cc.PodMaxBackoffSeconds)*time.Second),
		queue.WithUnschedulableTimeout(unschedTimeout),
		queue.WithPodMayFitAfter(func(p *queue.QueuedPodInfo, ev framework.ClusterEvent) bool {
			fwk := s.profiles[p.Pod.Spec.SchedulerName]
			return fwk == nil || fwk.PodMayFitAfter(p.UnschedulablePlugins, ev)
		}),
	)
	if cfg.Client != nil {
		s.informers = informers.NewSharedInformerFactory(cfg.Client, 0)
	}
	var pluginMetrics framework.MetricsRecorder
	if cfg.Metrics != nil {
		pluginMetrics = cfg.Metrics
	}
	for _, p := range cc.Profiles {
		fwk, err := framework.New(registry, plugins.DefaultPlugins(), p, framework.Options{
			Client: cfg.Client, Snapshot: s.snapshot, Parallelizer: par, PercentageOfNodesToScore: cc.PercentageOfNodesToScore,
			Informers: s.informers, Nominator: s.queue, Metrics: pluginMetrics, Workloads: s.workloads,
		})
		if err != nil {
			return nil, err
		}
		s.profiles[p.SchedulerName] = fwk
	}
	return s, nil
}

// Profiles returns the frameworks by schedulerName.
func (s *Scheduler) Profiles() map[string]*framework.Framework { return s.profiles }

// Queue is the scheduling queue (for metrics and tests).
func (s *Scheduler) Queue() *queue.PriorityQueue { return s.queue }

// Cache is the scheduler's cache (for metrics and tests).
func (s *Scheduler) Cache() *cache.Cache { return s.cache }

// pendingSelector selects the pods this scheduler must place: unbound,
// not finished, and — with one profile — named for it.
func (s *Scheduler) pendingSelector() string {
	sel := []string{"spec.nodeName="}
	if len(s.profiles) == 1 {
		for name := range s.profiles {
			sel = append(sel, "spec.schedulerName="+name)
		}
	}
	return strings.Join(append(sel, "status.phase!=Succeeded", "status.phase!=Failed"), ",")
}

// assignedSelector selects the pods that use node resources.
const assignedSelector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"

// Run schedules until ctx ends: it builds fresh informers, waits for them
// to sync, and runs the scheduling loop. When ctx ends everything stops at
// once — no binding starts after — and Run returns once every goroutine it
// started has.
func (s *Scheduler) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.client == nil {
		return fmt.Errorf("scheduler: no client")
	}
	if s.recorder == nil {
		r := eventsink.Start(ctx, s.client, eventsink.DefaultOptions(), nil)
		defer r.Stop()
		s.recorder = r.Recorder(corev1.EventSource{Component: corev1.DefaultSchedulerName})
	}
	for _, fwk := range s.profiles {
		fwk.SetEventRecorder(s.recorder)
	}
	nodesF := s.informers
	pendingF := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = s.pendingSelector()
	}))
	assignedF := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = assignedSelector
	}))
	nodes := nodesF.Core().V1().Nodes().Informer()
	pending := pendingF.Core().V1().Pods().Informer()
	assigned := assignedF.Core().V1().Pods().Informer()
	if err := s.addEventHandlers(nodes, pending, assigned); err != nil {
		return err
	}
	// Services and pod owners, for the default topology spread
	// constraints, from the shared factory the plugins' other listers
	// come from. StatefulSets only where the apiserver serves them: an
	// informer of an unserved kind never syncs.
	wl := framework.WorkloadListers{
		Services:               nodesF.Core().V1().Services().Lister(),
		ReplicationControllers: nodesF.Core().V1().ReplicationControllers().Lister(),
		ReplicaSets:            nodesF.Apps().V1().ReplicaSets().Lister(),
	}
	if served(s.client, "apps/v1", "statefulsets") {
		wl.StatefulSets = nodesF.Apps().V1().StatefulSets().Lister()
	}
	for _, f := range []informers.SharedInformerFactory{nodesF, assignedF, pendingF} {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), nodes.HasSynced, assigned.HasSynced, pending.HasSynced) {
		return nil // the term ended before the caches filled
	}
	for typ, ok := range nodesF.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return nil // the term ended before the caches filled
			}
			return fmt.Errorf("scheduler: the %v informer a plugin needs did not sync", typ)
		}
	}
	// Before the first cycle: the plugins read it only in cycles.
	*s.workloads = wl
	s.metrics.setCurrent(s)
	defer s.metrics.setCurrent(nil)
	var wg sync.WaitGroup
	wg.Go(func() { s.queue.Run(ctx) })
	wg.Go(func() { s.cleanupAssumed(ctx) })
	nn, np, _ := s.cache.Counts()
	s.log.Info("scheduling", "nodes", nn, "pods", np, "profiles", len(s.profiles))
	for {
		p := s.queue.Pop()
		if p == nil {
			break
		}
		s.scheduleOne(ctx, p)
	}
	cancel()
	wg.Wait()
	s.exec.Wait()
	return nil
}

// served reports whether the apiserver serves resource in groupVersion.
func served(client kubernetes.Interface, groupVersion, resource string) bool {
	list, err := client.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true
		}
	}
	return false
}

// cleanupAssumed forgets assumed pods the informer never confirmed.
func (s *Scheduler) cleanupAssumed(ctx context.Context) {
	t := s.clock.NewTicker(cleanupPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, p := range s.cache.CleanupExpired() {
				s.log.Warn("assumed pod expired without confirmation", "pod", p.Namespace+"/"+p.Name, "node", p.Spec.NodeName)
			}
		}
	}
}

// executor runs binding work off the scheduling goroutine.
type executor interface {
	Go(task func())
	Wait()
}

// boundedExecutor runs each task in its own goroutine, at most n at once.
type boundedExecutor struct {
	sem chan struct{}
	wg  sync.WaitGroup
}

func newBoundedExecutor(n int) *boundedExecutor {
	return &boundedExecutor{sem: make(chan struct{}, max(n, 1))}
}

func (e *boundedExecutor) Go(task func()) {
	e.wg.Go(func() {
		e.sem <- struct{}{}
		defer func() { <-e.sem }()
		task()
	})
}

func (e *boundedExecutor) Wait() { e.wg.Wait() }
