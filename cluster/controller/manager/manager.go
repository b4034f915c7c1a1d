package manager

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/eventsink"
	"github.com/kstep-dev/kstep/cluster/leader"
	"github.com/kstep-dev/kstep/cluster/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config configures a controller-manager.
type Config struct {
	// REST is how to reach the apiserver.
	REST *rest.Config
	// Identity is this process's name in leader election and events.
	Identity string
	// LeaderElect turns leader election on; off, this process always acts
	// (one controller-manager only).
	LeaderElect bool
	Leader      leader.Config
	// Controllers to run: names from the registry, "*" for all, "-name" to
	// leave one out.
	Controllers []string
	Options     controller.Options
	// RootCAFile is the CA bundle the root CA publisher puts in every
	// namespace; empty: the CA that REST trusts.
	RootCAFile string
	Tracer     *trace.Tracer
	Log        *slog.Logger
}

// Names lists the registered controllers.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// enabled resolves the Controllers list against the registry.
func enabled(list []string) ([]string, error) {
	if len(list) == 0 {
		list = []string{"*"}
	}
	on := map[string]bool{}
	for _, item := range list {
		switch {
		case item == "*":
			for n := range registry {
				on[n] = true
			}
		case strings.HasPrefix(item, "-"):
			if _, ok := registry[item[1:]]; !ok {
				return nil, fmt.Errorf("unknown controller %q (known: %s)", item[1:], strings.Join(Names(), ", "))
			}
			delete(on, item[1:])
		default:
			if _, ok := registry[item]; !ok {
				return nil, fmt.Errorf("unknown controller %q (known: %s)", item, strings.Join(Names(), ", "))
			}
			on[item] = true
		}
	}
	var out []string
	for n := range on {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Run runs the controller-manager until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	names, err := enabled(cfg.Controllers)
	if err != nil {
		return err
	}
	if err := controller.ValidateEndpointsStamp(cfg.Options.EndpointsStamp); err != nil {
		return err
	}
	if n := cfg.Options.MaxEndpointsPerSlice; n < 0 || n > 1000 {
		return fmt.Errorf("max endpoints per slice %d: want 1 to 1000 (an EndpointSlice holds at most 1000)", n)
	}
	// Given to the EndpointSlice controller, the stamp needs it running,
	// or step ⑧ would silently go unstamped.
	if cfg.Options.StampsEndpointSlices() && !slices.Contains(names, "endpointslice") {
		return fmt.Errorf("endpoints stamp %q needs the endpointslice controller, which is not enabled", cfg.Options.EndpointsStamp)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	rc := rest.CopyConfig(cfg.REST)
	rc.UserAgent = "kstep-controller-manager/" + cfg.Identity
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("controller-manager client: %w", err)
	}
	rootCA, err := rootCA(cfg)
	if err != nil {
		return err
	}
	lead := func(ctx context.Context) { runControllers(ctx, client, cfg, names, rootCA) }
	if !cfg.LeaderElect {
		lead(ctx)
		return nil
	}
	return leader.Run(ctx, client, cfg.Leader, cfg.Log, lead, nil)
}

// runControllers runs one term: fresh informers, every controller, and a
// full stop when ctx ends.
func runControllers(ctx context.Context, client kubernetes.Interface, cfg Config, names []string, rootCA []byte) {
	start := time.Now()
	factory := informers.NewSharedInformerFactory(client, 0)
	recorders := eventsink.Start(ctx, client, eventsink.DefaultOptions(), cfg.Log)
	defer recorders.Stop()
	cc := &controller.Context{
		Client:    client,
		Informers: factory,
		Recorder:  recorders.Recorder(corev1.EventSource{Component: "kstep-controller-manager", Host: cfg.Identity}),
		Tracer:    cfg.Tracer,
		Log:       cfg.Log,
		Now:       time.Now,
		Options:   cfg.Options,
		RootCA:    rootCA,
	}
	var ctrls []controller.Controller
	for _, n := range names {
		ctrls = append(ctrls, registry[n](cc))
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, c := range ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx)
		}()
	}
	cfg.Log.Info("controllers started", "controllers", names, "after", time.Since(start))
	<-ctx.Done()
	wg.Wait()
	factory.Shutdown()
	cfg.Log.Info("controllers stopped")
}

// rootCA is the CA bundle of RootCAFile, else the one the REST config
// trusts (its CAData or CAFile), else none.
func rootCA(cfg Config) ([]byte, error) {
	file := cfg.RootCAFile
	if file == "" {
		if len(cfg.REST.TLSClientConfig.CAData) > 0 {
			return cfg.REST.TLSClientConfig.CAData, nil
		}
		file = cfg.REST.TLSClientConfig.CAFile
	}
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("root CA: %w", err)
	}
	return b, nil
}
