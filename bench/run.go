package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/cluster/apiclient"
	"github.com/kstep-dev/kstep/cluster/eventsink"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/preflight"
	"github.com/kstep-dev/kstep/results"
)

// Options say where and how a run happens.
type Options struct {
	// FindMax, when set, makes the run a capacity search (findmax.go)
	// instead of the profile's one job.
	FindMax *FindMax
	// Binary is the kstep binary the actors run; "" is the running one.
	Binary string
	// OutDir is the run directory; it must not exist or be empty.
	OutDir string
	// Provider is the cluster provider: process (also ""), docker, auto
	// (provider.Resolve), or external: the cluster of Kubeconfig (its
	// context Context, "" the current one), which kstep does not run.
	Provider            string
	Kubeconfig, Context string
	// Progress, when non-nil, gets the load generator's progress bars.
	Progress io.Writer
	// Log gets one line per phase.
	Log io.Writer
	// Version is the kstep build, recorded in run.json.
	Version string
	// OnRun, when set, is called by RunSet after each run is written (to
	// push its figures while the next one runs).
	OnRun func(dir string, r *results.Run)
}

// Run brings a cluster up, runs the profile's job, tears the cluster down and
// writes the run directory. The returned run is written even when the run is
// invalid; the error is for runs that produced nothing to report.
func Run(ctx context.Context, prof *Profile, opts Options) (*results.Run, error) {
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	if opts.FindMax != nil {
		if err := opts.FindMax.Validate(); err != nil {
			return nil, err
		}
	}
	name, err := provider.Resolve(ctx, opts.Provider, opts.Log)
	if err != nil {
		return nil, err
	}
	opts.Provider = name
	if opts.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		opts.Binary = exe
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "bench: "+format+"\n", a...)
		}
	}
	out, err := filepath.Abs(opts.OutDir)
	if err != nil {
		return nil, err
	}
	traces := filepath.Join(out, "traces")
	state := filepath.Join(out, "cluster")
	for _, d := range []string{traces, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("run dir: %w", err)
		}
	}
	started := time.Now()
	run := &results.Run{
		Schema: results.Schema, ID: filepath.Base(out), Provider: opts.Provider, Runtime: "hollow", Profile: prof.Name,
		Version: opts.Version, Valid: true, StartedAt: started.UTC().Format(time.RFC3339), EndpointsStamp: prof.EndpointsStamp,
		// A capacity search judges its steps from outside.
		OutsideView: opts.Provider == provider.External || prof.OutsideView || opts.FindMax != nil,
	}
	invalid := func(format string, a ...any) {
		run.Valid = false
		run.Invalid = append(run.Invalid, fmt.Sprintf(format, a...))
	}

	external := opts.Provider == provider.External
	// The label value of everything this run creates: unique across runs
	// (a set's runs are all run-NN) to the second.
	label := provider.RunLabelValue(started.UTC().Format("20060102t150405") + "-" + run.ID)
	cfg, p, err := newCluster(ctx, prof, opts, state, traces, label, run, logf)
	if err != nil {
		return nil, err
	}
	if external {
		run.Cluster.External.Label = provider.RunLabel + "=" + label
		logf("cluster of %s (external provider: kstep starts nothing); the run's objects carry %s", opts.Kubeconfig, run.Cluster.External.Label)
	} else {
		logf("cluster up (%s, %s provider) in %s", cfg.Topology, p.Name(), state)
	}
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err = p.Up(upCtx)
	cancel()
	down := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Down(dctx); err != nil {
			logf("down: %v", err)
		}
	}
	if err != nil {
		down()
		return nil, fmt.Errorf("cluster up: %w", err)
	}

	// The load fails over between the apiservers like every actor; the
	// job's token bucket is the only limit.
	rc, err := apiclient.Config(ctx, p.Kubeconfig(), nil)
	if err != nil {
		down()
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		down()
		return nil, err
	}

	var nodeKinds map[string]string
	if external {
		if nodeKinds, err = externalCluster(ctx, cs, rc.Host, p.Kubeconfig(), opts, prof, run, logf); err != nil {
			var perm *preflight.PermissionError
			if errors.As(err, &perm) {
				// Nothing was created, and the credentials may not
				// list what cleaning would look for.
				_ = p.Purge()
			} else {
				down()
			}
			return nil, err
		}
	} else {
		nodesLog := filepath.Join(state, "logs", "hollow-nodes.log")
		logf("waiting for %d nodes Ready", cfg.Nodes())
		if err := waitNodes(ctx, cs, cfg.Nodes(), 3*time.Minute); err != nil {
			down()
			return nil, fmt.Errorf("%w (log: %s)", err, nodesLog)
		}
	}

	ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
	etcdBefore, err := scrapeEtcd(ectx, p.Actors())
	cancel()
	if err != nil {
		logf("etcd figures will count from the members' start: %v", err)
	}
	watchStart := time.Now()
	stopDisruptions, seenDisruptions, err := watchDisruptions(ctx, cs, watchStart)
	if err != nil {
		logf("no disruption watch: %v", err)
		stopDisruptions = func() []results.Disruption { return nil }
		seenDisruptions = stopDisruptions
	}
	if opts.FindMax != nil {
		f := opts.FindMax
		logf("find-max: %s × %d from %.1f pods/s, ×%.2f a step (%v or %d pods each), bisection to %.0f %%; SLO %s",
			prof.Job.Object.Kind, prof.Job.Object.Replicas, f.StartPodsPerS, f.Factor, f.StepDuration, f.StepPods, 100*f.Precision, f.SLO.text())
	} else {
		logf("load: %d %s × %d replicas at %.0f qps (burst %d)", prof.Job.Count, prof.Job.Object.Kind, prof.Job.Object.Replicas, prof.Job.QPS, prof.Job.Burst)
	}
	// On an external cluster everything the job creates carries the run's
	// label: what the provider removes at Down, and kstep clean after a
	// run that was killed (a cluster kstep runs goes whole at Down, and
	// its objects stay as they were). On a cluster whose components stamp
	// nothing, the load generator's watches stamp what they see from
	// outside.
	var labels map[string]string
	if external {
		labels = map[string]string{provider.RunLabel: label}
	}
	// The load's window of every actor's CPU: the accounts read when the
	// load begins and when it ends (the actors' start-up and teardown are
	// not the pods' cost).
	usageBefore := p.Usage(ctx)
	loadStart := time.Now()
	var res *loadgen.Result
	var lerr error
	if opts.FindMax != nil {
		var fm *results.FindMax
		fm, res, lerr = findMax(ctx, *opts.FindMax, prof.Job, cs, traces, loadgen.Options{Client: cs, Progress: opts.Progress, Labels: labels},
			seenDisruptions, watchStart, logf)
		run.FindMax = fm
		for _, st := range fm.Steps {
			run.LoadPods += st.Ready
		}
		if lerr != nil {
			invalid("find-max: %v", lerr)
		}
	} else {
		res, lerr = loadgen.Run(ctx, &prof.Job, loadgen.Options{Client: cs, TraceFile: filepath.Join(traces, loadgen.Actor+".jsonl"), Progress: opts.Progress,
			Labels: labels, Outside: run.OutsideView})
		if lerr != nil {
			invalid("load job: %v", lerr)
		}
	}
	loadS := time.Since(loadStart).Seconds()
	// The actors write their Events off the pods' path, up to MaxHold
	// after the step they describe (cluster/eventsink): the window of CPU
	// and of writes closes once the last of them is written, so the pods'
	// cost counts them (and a moment of idle cluster, which only adds).
	select {
	case <-ctx.Done():
	case <-time.After(eventSettle):
	}
	usageAfter := p.Usage(ctx)
	run.Disruptions = stopDisruptions()
	run.Disrupted = len(run.Disruptions) > 0
	for _, d := range run.Disruptions {
		logf("disruption at +%.1fs: %s %s", d.AtS, d.Kind, d.Detail)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if after, err := scrapeEtcd(sctx, p.Actors()); err != nil && len(after) == 0 {
		logf("no etcd table: %v", err)
	} else {
		if err != nil {
			logf("etcd table incomplete: %v", err)
		}
		run.Etcd = etcdStats(etcdBefore, after)
	}
	if servers, err := scrapeAPIServers(sctx, p.Kubeconfig()); err != nil {
		logf("no API latency table: %v", err)
	} else {
		run.API = apiLatency(servers)
		run.EtcdRequests = etcdLatency(servers)
	}
	cancel()
	// The Kubernetes Events, while the cluster is still up.
	ectx, cancel = context.WithTimeout(ctx, 30*time.Second)
	kubeEvents, err := listKubeEvents(ectx, cs, prof.Job.Namespaces)
	cancel()
	if err != nil {
		logf("%s incomplete: %v", KubeEventsFile, err)
	}
	actors := p.Actors()
	logf("tearing down")
	down()
	run.DurationS = time.Since(started).Seconds()
	if u := p.Usage(ctx); len(u) > 0 {
		run.Actors = actorUsage(u, usageBefore, usageAfter)
		if len(usageAfter) > 0 {
			run.LoadS = loadS
		}
	}

	events, sums, sources, err := ReadTraces(traces)
	if err != nil {
		return nil, err
	}
	apiOf, hollow := observers(actors, sources)
	var objects []types.UID
	var pods []loadgen.PodOwner
	if res != nil {
		for _, w := range res.Writes {
			if w.Op == "create" && w.Kind != loadgen.KindService {
				objects = append(objects, w.UID)
			}
		}
		pods = res.Pods
		if err := writeJSONL(filepath.Join(out, "writes.jsonl"), res.Writes); err != nil {
			return nil, err
		}
		if err := writeJSONL(filepath.Join(out, "pods.jsonl"), pods); err != nil {
			return nil, err
		}
		if res.Ready < res.Expected {
			invalid("%d of %d pods seen Ready", res.Ready, res.Expected)
		}
	}
	latencyProfile := prof.Cluster.LatencyProfile
	if external {
		latencyProfile = "the cluster's own" // kstep does not run its nodes
	}
	var warm WarmUp
	if opts.FindMax == nil {
		warm = prof.WarmUpOf()
	}
	Analyze(Input{Events: events, Objects: objects, Pods: pods, Replicas: int(prof.Job.Object.Replicas),
		APIServerOf: apiOf, HollowActors: hollow, LatencyProfile: latencyProfile, EndpointsStamp: prof.EndpointsStamp,
		Outside: run.OutsideView, External: external, NodeKinds: nodeKinds, WarmUp: warm}, run)

	accountDrops(run, sums)

	if err := results.WriteEvents(filepath.Join(out, "events.jsonl.gz"), events); err != nil {
		return nil, err
	}
	if err := writeKubeEvents(filepath.Join(out, KubeEventsFile), kubeEvents); err != nil {
		return nil, err
	}
	if err := results.WriteRun(out, run); err != nil {
		return nil, err
	}
	return run, nil
}

// externalCluster records the cluster the external provider reached (its
// server, version, nodes and their kinds) in run, checks that the
// credentials may do all the run does (a *preflight.PermissionError if not), and
// waits for a Ready node. It returns each node's pod population.
func externalCluster(ctx context.Context, cs kubernetes.Interface, server, kubeconfig string, opts Options, prof *Profile, run *results.Run, logf func(string, ...any)) (map[string]string, error) {
	e := run.Cluster.External
	e.Server = server
	if v, err := cs.Discovery().ServerVersion(); err == nil {
		e.Version = v.GitVersion
	} else {
		return nil, fmt.Errorf("cluster version: %w", err)
	}
	if e.Context == "" {
		// The kubeconfig's current context, as the provider chose it.
		if raw, err := clientcmd.LoadFromFile(kubeconfig); err == nil {
			e.Context = raw.CurrentContext
		}
	}
	who := opts.Kubeconfig + " (context " + e.Context + ")"
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	err := preflight.Check(pctx, cs, who, preflight.Needs(&prof.Job))
	cancel()
	if err != nil {
		return nil, err
	}
	logf("preflight: the credentials may do all the run needs (%d SelfSubjectAccessReviews)", len(preflight.Needs(&prof.Job)))
	if err := waitNodes(ctx, cs, 1, 3*time.Minute); err != nil {
		return nil, err
	}
	pop, err := inspect(ctx, cs, e)
	if err != nil {
		return nil, err
	}
	var kinds []string
	for _, k := range []string{KindReal, KindHollowKstep, KindFakeKwok} {
		if n := e.Kinds[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	run.Cluster.NodeKind = strings.Join(kinds, " + ")
	switch {
	case e.Kinds[KindReal] == 0:
		run.Runtime = "hollow"
	case e.Kinds[KindReal] == e.Nodes:
		run.Runtime = "real"
	default:
		run.Runtime = "real+hollow"
	}
	logf("cluster %s, %s: %d nodes (%d Ready): %s", server, e.Version, e.Nodes, e.Ready, run.Cluster.NodeKind)
	return pop, nil
}

func waitNodes(ctx context.Context, cs kubernetes.Interface, want int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready := 0
	for {
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			ready = 0
			for _, n := range l.Items {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			if ready >= want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes Ready after %v", ready, want, timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ReadTraces merges every <actor>.jsonl in dir, sorted by time, and returns
// each sink's closing summary by actor (the file's name; an actor whose sink
// has none maps to nil) and, for each name events carry in their actor
// field, the file's actor (a kubelet stamps as kubelet-<node> into
// node-<i>.jsonl).
func ReadTraces(dir string) ([]trace.Event, map[string]*trace.Summary, map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, nil, err
	}
	var all []trace.Event
	sums := map[string]*trace.Summary{}
	sources := map[string]string{}
	for _, f := range files {
		evs, sum, err := trace.ReadFile(f)
		if err != nil {
			return nil, nil, nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		for i := range evs {
			if _, ok := sources[evs[i].Actor]; !ok {
				sources[evs[i].Actor] = name
			}
		}
		all = append(all, evs...)
		sums[name] = sum
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].TS < all[j].TS })
	return all, sums, sources, nil
}

// observers maps each stamping actor to the apiserver it talks to (as the
// plan assigned it; the load generator uses the admin kubeconfig, whose
// current context is the first apiserver) and lists the actors that run
// hollow nodes.
func observers(actors []provider.Actor, sources map[string]string) (apiOf map[string]string, hollow map[string]bool) {
	byName := map[string]provider.Actor{}
	first := ""
	for _, a := range actors {
		byName[a.Name] = a
		if a.Role == provider.RoleAPIServer && first == "" {
			first = a.Name
		}
	}
	apiOf, hollow = map[string]string{}, map[string]bool{}
	for stamper, file := range sources {
		a := byName[file]
		if a.APIServer != "" {
			apiOf[stamper] = a.APIServer
		}
		if a.Role == provider.RoleHollowNodes {
			hollow[stamper] = true
		}
	}
	if first != "" {
		apiOf[loadgen.Actor] = first
	}
	return apiOf, hollow
}

// actorUsage orders the provider's accounts (u, after Down) by actor name,
// with each actor's CPU over the load: its account at the load's end less
// its account at the load's start.
func actorUsage(u, before, after map[string]provider.Usage) []results.ActorUsage {
	out := make([]results.ActorUsage, 0, len(u))
	for _, name := range slices.Sorted(maps.Keys(u)) {
		a := results.ActorUsage{Actor: name, CPUSeconds: u[name].CPUSeconds, PeakRSSMB: float64(u[name].PeakRSSBytes) / (1 << 20)}
		if end, ok := after[name]; ok {
			a.LoadCPUSeconds = max(0, end.CPUSeconds-before[name].CPUSeconds)
		}
		out = append(out, a)
	}
	return out
}

// accountDrops fills the run's drop counts from the sinks' closing
// summaries. A drop, or a sink nobody closed (so nothing proves it lost
// nothing), makes the run invalid.
func accountDrops(run *results.Run, sums map[string]*trace.Summary) {
	run.Drops = map[string]uint64{}
	run.DropsUnknown = nil
	for _, actor := range slices.Sorted(maps.Keys(sums)) {
		s := sums[actor]
		if s == nil {
			run.DropsUnknown = append(run.DropsUnknown, actor)
			run.Valid = false
			run.Invalid = append(run.Invalid, fmt.Sprintf("actor %s did not close its trace sink (killed?): its drops are unknown", actor))
			continue
		}
		run.Drops[actor] = s.Dropped
		if s.Dropped > 0 {
			run.Valid = false
			run.Invalid = append(run.Invalid, fmt.Sprintf("actor %s dropped %d trace events", actor, s.Dropped))
		}
	}
}

func writeJSONL[T any](path string, items []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return f.Close()
}

// eventSettle is how long after the load the run waits before it reads the
// actors' CPU and the apiservers' write counts: twice the longest an
// actor's event sink holds an Event.
var eventSettle = 2 * eventsink.DefaultOptions().MaxHold
