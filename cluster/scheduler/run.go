package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiclient"
	"github.com/kstep-dev/kstep/cluster/leader"
	"github.com/kstep-dev/kstep/cluster/opsserver"
	"github.com/kstep-dev/kstep/cluster/scheduler/config"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// LeaseName is the scheduler's Lease in kube-system.
const LeaseName = "kstep-scheduler"

// Options are `kstep scheduler`'s flags.
type Options struct {
	// Kubeconfig is the path of the kubeconfig to reach the apiserver.
	Kubeconfig string
	// Identity names this scheduler in the Lease and logs (hostname_pid).
	Identity string
	// ConfigFile is a KubeSchedulerConfiguration YAML; empty = defaults.
	ConfigFile string
	// TraceFile receives step events (JSONL); empty = none.
	TraceFile string
	// Parallelism overrides the configuration's when positive.
	Parallelism int
	// LeaderElect campaigns for the Lease and schedules only while holding
	// it.
	LeaderElect   bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// MetricsListen serves /metrics, /healthz and /debug/pprof; empty = off.
	MetricsListen string
	// MetricsTLS makes it a secure port (cluster/opsserver).
	MetricsTLS opsserver.TLS
	// QPS and Burst of the client: kstep aims at ≥ 1,000 bindings/s.
	QPS   float32
	Burst int
	// BindDelay is a failpoint, for testing only: every binding waits this
	// long before its call (Config.BindDelay).
	BindDelay time.Duration
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s_%d", host, os.Getpid())
	le := leader.Defaults(LeaseName, id)
	return Options{
		Identity:      id,
		LeaderElect:   true,
		LeaseDuration: le.LeaseDuration,
		RenewDeadline: le.RenewDeadline,
		RetryPeriod:   le.RetryPeriod,
		QPS:           5000,
		Burst:         10000,
	}
}

// LeaderConfig is the election these options describe.
func (o Options) LeaderConfig() leader.Config {
	c := leader.Defaults(LeaseName, o.Identity)
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = o.LeaseDuration, o.RenewDeadline, o.RetryPeriod
	return c
}

// Run is `kstep scheduler`: connect, load the configuration, serve
// metrics, and schedule — under leader election unless disabled — until
// ctx ends.
func Run(ctx context.Context, opts Options) error {
	log := slog.Default().With("actor", "scheduler", "identity", opts.Identity)
	rc, err := apiclient.Config(ctx, opts.Kubeconfig, log)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = opts.QPS, opts.Burst
	rc.UserAgent = "kstep-scheduler/" + opts.Identity
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	cc := config.Default()
	if opts.ConfigFile != "" {
		if cc, err = config.Load(opts.ConfigFile); err != nil {
			return err
		}
	}
	tracer, err := trace.Open(opts.TraceFile, opts.Identity)
	if err != nil {
		return err
	}
	defer func() {
		if d := tracer.Dropped(); d > 0 {
			log.Warn("trace events dropped: this run's step trace is incomplete", "dropped", d)
		}
		_ = tracer.Close()
	}()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := NewMetrics(reg)
	ops := opsserver.Config{Addr: opts.MetricsListen, TLS: opts.MetricsTLS, Reviews: client.AuthorizationV1(),
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), Log: log}
	if err := opsserver.Serve(ctx, ops); err != nil {
		return err
	}
	cfg := Config{
		Client: client, Configuration: cc, Parallelism: opts.Parallelism,
		Tracer: tracer, Metrics: metrics, Log: log, BindDelay: opts.BindDelay,
	}
	var le *leader.Config
	if opts.LeaderElect {
		c := opts.LeaderConfig()
		le = &c
	}
	return RunElected(ctx, cfg, le)
}

// RunElected schedules with cfg whenever this process leads (le nil: at
// once, without an election) until ctx ends. Each term builds a fresh
// Scheduler — new informers, cache and queue — so nothing of a previous
// term's view survives; when a term ends the Scheduler stops completely
// before the next campaign.
func RunElected(ctx context.Context, cfg Config, le *leader.Config) error {
	if _, err := New(cfg); err != nil { // a bad configuration fails before campaigning
		return err
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	lead := func(ctx context.Context) {
		cfg.Metrics.setLeader(true)
		defer cfg.Metrics.setLeader(false)
		for ctx.Err() == nil {
			s, err := New(cfg)
			if err == nil {
				err = s.Run(ctx)
			}
			if err != nil && ctx.Err() == nil {
				log.Error("scheduler stopped; restarting", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}
	if le == nil {
		lead(ctx)
		return nil
	}
	return leader.Run(ctx, cfg.Client, *le, log, lead, func(id string) { log.Info("new leader observed", "leader", id) })
}
