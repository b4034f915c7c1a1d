package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/failpoint"
	"github.com/kstep-dev/kstep/cluster/kubelet/hollowctl"
	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
)

// Schema is the version of chaos.json.
const Schema = "kstep.dev/chaos/v1"

// Options are where a run goes and what it runs.
type Options struct {
	Scenario *Scenario
	Gate     *Gate
	// OutDir is the run directory: chaos.json, chaos.md, chaos.html,
	// traces/, cluster/ (the state dir with every actor's log).
	OutDir string
	// Binary is the kstep binary the actors run ("" = this executable).
	Binary string
	// Provider is where the cluster runs: process, docker or auto (the
	// same rule as bench: docker when a daemon answers; it says which it
	// chose on Log). "" is process.
	Provider string
	// Log gets progress lines; nil is silent.
	Log io.Writer
	// Kubeconfig and Context are the cluster of Provider external (kstep
	// starts nothing; only API-level faults run).
	Kubeconfig, Context string
	// AllowDisruption lets API-level faults disrupt an external cluster
	// (drain a node, delete a Node or a leader's pod); without it they are
	// refused. kstep's own clusters need no permission.
	AllowDisruption bool
}

// Report is chaos.json.
type Report struct {
	Schema      string            `json:"schema"`
	Scenario    string            `json:"scenario"`
	Description string            `json:"description,omitempty"`
	Seed        string            `json:"seed,omitempty"`
	Gate        string            `json:"gate"`
	Provider    string            `json:"provider"`
	Cluster     provider.Topology `json:"cluster"`
	// Security is what the apiservers authenticated and authorized with.
	Security string `json:"security,omitempty"`
	// External is the cluster of provider external as it answered (its
	// version and nodes); Cluster and Security are not known there.
	External  string  `json:"external,omitempty"`
	StartedAt string  `json:"started_at"`
	DurationS float64 `json:"duration_s"`
	// Load: the loadgen job's objects and the probe's writes.
	LoadObjects  int `json:"load_objects"`
	LoadErrors   int `json:"load_errors"`
	ProbeWrites  int `json:"probe_writes"`
	ProbeAcked   int `json:"probe_acked"`
	ClientErrors int `json:"client_errors"`
	// Start is when the load began: the timeline's zero.
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	Faults     []FaultResult `json:"faults"`
	Invariants []Invariant   `json:"invariants"`
	// HashChecks are the etcd hash checks run after each fault.
	HashChecks []Invariant `json:"hash_checks,omitempty"`
	Verdicts   []Verdict   `json:"verdicts"`
	Passed     bool        `json:"passed"`
	// Notes are what the run could not do (e.g. trace files unreadable).
	Notes []string `json:"notes,omitempty"`
	// Linearizability and Watch are the figures of the linearizable and
	// watch-guarantee invariants.
	Linearizability *LinStats   `json:"linearizability,omitempty"`
	Watch           *WatchStats `json:"watch,omitempty"`

	hist *History
}

// ErrCouldNotRun wraps every failure that left the run without a verdict
// (exit code 2), as opposed to a gate that failed (exit code 1).
var ErrCouldNotRun = errors.New("chaos run could not complete")

// Run brings a cluster up, runs the scenario's load and faults, checks the
// invariants, evaluates the gate, writes the report into OutDir and tears
// the cluster down. The error is non-nil (wrapping ErrCouldNotRun) only
// when there is no verdict.
func Run(ctx context.Context, opts Options) (*Report, error) {
	sc := opts.Scenario
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "chaos: "+format+"\n", a...)
		}
	}
	fail := func(format string, a ...any) (*Report, error) {
		return nil, fmt.Errorf("%w: %s", ErrCouldNotRun, fmt.Sprintf(format, a...))
	}
	name, err := provider.Resolve(ctx, opts.Provider, opts.Log)
	if err != nil {
		return fail("%v", err)
	}
	opts.Provider = name
	if opts.Gate == nil {
		g, err := LoadGate("default")
		if err != nil {
			return fail("%v", err)
		}
		opts.Gate = g
	}
	out, err := filepath.Abs(opts.OutDir)
	if err != nil {
		return fail("%v", err)
	}
	traces, state := filepath.Join(out, "traces"), filepath.Join(out, "cluster")
	for _, d := range []string{traces, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail("run dir: %v", err)
		}
	}

	spec := provider.Spec{Topology: sc.Cluster, StateDir: state, TraceDir: traces, Binary: opts.Binary,
		ReadyTimeout: 2 * time.Minute, Log: opts.Log}
	external := opts.Provider == provider.External
	if external {
		// Refused before anything starts: the faults an external cluster
		// cannot take, and disruption not allowed.
		if err := CheckExternal(sc, opts.AllowDisruption); err != nil {
			return fail("scenario %s on --provider external: %v", sc.Name, err)
		}
		// Everything the run creates carries its label: removed at Down.
		spec.Kubeconfig, spec.Context = opts.Kubeconfig, opts.Context
		spec.RunID = provider.RunLabelValue("chaos-" + time.Now().UTC().Format("20060102t150405") + "-" + sc.Name)
		sc.OptionalRealNodes = 0
	}
	for _, f := range sc.Faults {
		if f.Action == ActionPartition || f.Action == ActionLink {
			spec.LinkProxies = true
		}
	}
	// The lost-write and watch-gap checks replay etcd's history of the run
	// at its end: the apiservers' compaction is held while it runs (the
	// engine's own, a fill fault's recovery, keeps the history first).
	spec.APIServerArgs = append(slices.Clone(spec.APIServerArgs), "--etcd-compaction-interval=0")
	var notes []string
	if n := sc.OptionalRealNodes; n > 0 && !external {
		with := spec
		with.RealNodes += n
		if err := provider.CanRunRealNodes(opts.Provider, with); err != nil {
			notes = append(notes, fmt.Sprintf("ran without its %d optional real nodes (running-pods-unaffected not checked): %v", n, err))
			logf("without the %d optional real nodes: %v", n, err)
		} else {
			spec = with
		}
	}
	// The report records the cluster the run had.
	sc.Cluster = spec.Topology
	if spec.RealNodes > 0 && !external {
		if err := provider.CanRunRealNodes(opts.Provider, spec); err != nil {
			return fail("scenario %s needs %d real nodes: %v", sc.Name, spec.RealNodes, err)
		}
	}
	p, err := provider.New(ctx, opts.Provider, spec)
	if err != nil {
		return fail("%v", err)
	}
	logf("%s", upLine(p.Name(), spec.Topology, state, opts.Kubeconfig))
	upCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	err = p.Up(upCtx)
	cancel()
	down := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := p.Down(dctx); err != nil {
			logf("down: %v", err)
		}
	}
	if err != nil {
		down()
		return fail("cluster up: %v", err)
	}
	if external {
		if err := checkPermissions(ctx, p, opts, sc, logf); err != nil {
			down()
			if errors.Is(err, ErrNeedsPermission) {
				return nil, err
			}
			return fail("%v", err)
		}
	}
	rep, err := drive(ctx, sc, opts, p, traces, logf, spec.RunID)
	logf("tearing down")
	down()
	if err != nil {
		return nil, err
	}
	// The actors' trace files are complete once they have exited.
	steps, terr := readSteps(traces)
	if terr != nil {
		rep.Notes = append(rep.Notes, "trace files: "+terr.Error())
	}
	rep.Notes = append(rep.Notes, notes...)
	rep.finish(sc, opts.Gate, steps)
	if err := rep.Write(out); err != nil {
		return fail("write report: %v", err)
	}
	return rep, nil
}

// run is the state of one drive: the cluster's clients and the recording.
type run struct {
	sc *Scenario
	p  provider.Provider
	// admin reaches the apiservers' own endpoints (their link control)
	// and the actors' ops ports (the hollow kubelets' control).
	admin *http.Client
	// etcdControl reaches the etcd members' link control.
	etcdControl *http.Client
	cs          kubernetes.Interface
	etcd        *etcdClient
	rec         *recorder
	res         *resolver
	logf        func(string, ...any)
	// notes the faults leave for the report (what their recovery means
	// on this cluster).
	notes []string
	hist  *History
	// history replays etcd's history for the checks, and keeps it across
	// the engine's own compaction.
	history *etcdHistory
	hashs   []Invariant
	// containers are the real nodes' running containers first seen before
	// a fault (running-pods-unaffected); snapErr why a snapshot failed.
	containers map[string]RunningContainer
	snapErr    error
	// load runs the load job as `kstep load` processes when a fault
	// targets the client; nil when it runs in the engine.
	load *loadProcess
	// watchers are the throughout-watchers; each fault asks them for a
	// resumption from where they are.
	watchers []*watcher
}

// upLine is the log's line for the cluster of the run: the topology kstep
// brings up, or, on external, the kubeconfig's cluster (the scenario's
// cluster block does not apply there: kstep starts nothing).
func upLine(providerName string, topo provider.Topology, state, kubeconfig string) string {
	if providerName == provider.External {
		return fmt.Sprintf("cluster of %s (external provider: kstep starts nothing, the scenario's cluster block does not apply)", kubeconfig)
	}
	return fmt.Sprintf("cluster up on the %s provider: %s (state: %s)", providerName, topo, state)
}

// drive runs the load, the faults and the checks on a cluster that is up.
func drive(ctx context.Context, sc *Scenario, opts Options, p provider.Provider, traces string, logf func(string, ...any), runID string) (*Report, error) {
	external := p.Name() == provider.External
	var labels map[string]string
	if external {
		labels = map[string]string{provider.RunLabel: runID}
	}
	fail := func(format string, a ...any) (*Report, error) {
		return nil, fmt.Errorf("%w: %s", ErrCouldNotRun, fmt.Sprintf(format, a...))
	}
	apis, err := loadAPIServers(ctx, p.Kubeconfig())
	if err != nil {
		return fail("%v", err)
	}
	cs, err := apis.client(0)
	if err != nil {
		return fail("%v", err)
	}
	// An external cluster's etcd is not reachable (etcd is nil): the
	// checks that need it say so.
	etcd, err := dialEtcd(p)
	if err != nil {
		return fail("%v", err)
	}
	if etcd != nil {
		defer etcd.Close()
	}
	etcdControl, err := provider.EtcdControlClient(p.StateDir(), p.Actors())
	if err != nil {
		return fail("%v", err)
	}

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fail("namespace %s: %v", probeNamespace, err)
	}

	admin, err := rest.HTTPClientFor(apis.Base())
	if err != nil {
		return fail("admin client: %v", err)
	}
	r := &run{sc: sc, p: p, cs: cs, etcd: etcd, etcdControl: etcdControl, logf: logf, admin: admin,
		rec: &recorder{now: time.Now, h: History{Leases: map[string][]LeaderSample{}, WritePeriod: writePeriod(sc.Probe.WriteQPS)}}}
	r.res = &resolver{p: p, cs: cs, etcd: etcd}
	r.history = &etcdHistory{etcd: etcd}

	// Observers, until the end of the run.
	octx, stopObservers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var clientErrors atomic.Int64
	nAPI := max(len(apis.Hosts()), 1)
	// The throughout-watchers: the pod watchers (the first records the
	// pods), then one watcher of the beat per apiserver and one of the
	// quiet set, without bookmarks, per apiserver (watch-idle), each with
	// its resumer (watch-resumable).
	watchers := make([]WatcherLog, sc.Probe.Watchers+2*nAPI)
	for i := range watchers {
		set, name, api := WatchPods, fmt.Sprintf("pods-%d", i), i
		switch {
		case i >= sc.Probe.Watchers+nAPI:
			api = i - sc.Probe.Watchers - nAPI
			set, name = WatchQuiet, fmt.Sprintf("quiet-%d", api)
		case i >= sc.Probe.Watchers:
			api = i - sc.Probe.Watchers
			set, name = WatchBeat, fmt.Sprintf("beat-%d", api)
		}
		watchers[i] = WatcherLog{Name: name, Set: set, APIServer: api % nAPI, NoBookmarks: set == WatchQuiet}
		wcs, err := apis.clientAs(api, "kstep-chaos-watcher/"+name)
		if err != nil {
			stopObservers()
			return fail("%v", err)
		}
		rcs, err := apis.clientAs(api, "kstep-chaos-resumer/"+name)
		if err != nil {
			stopObservers()
			return fail("%v", err)
		}
		ws, rs := podSet(wcs), podSet(rcs)
		var onObject func(runtime.Object, bool)
		switch {
		case set == WatchBeat:
			ws, rs = beatSet(wcs), beatSet(rcs)
		case set == WatchQuiet:
			ws, rs = quietSet(wcs), quietSet(rcs)
		case i == 0:
			onObject = func(o runtime.Object, deleted bool) {
				if p, ok := o.(*corev1.Pod); ok {
					r.rec.podEvent(p, deleted)
				}
			}
		}
		w := newWatcher(&watchers[i], ws, rs, sc.Probe.ResumeEvery)
		r.watchers = append(r.watchers, w)
		ready := make(chan struct{})
		wg.Go(func() { w.run(octx, onObject, ready) })
		wg.Go(func() { w.resume(octx) })
		<-ready
	}
	wg.Go(func() { beat(octx, cs, labels) })
	if sc.Supervise {
		wg.Go(func() {
			if err := provider.Supervise(octx, p, provider.DefaultRestart, logWriter(logf)); err != nil && octx.Err() == nil {
				logf("supervisor: %v", err)
			}
		})
	}
	if etcd != nil {
		wg.Go(func() { r.rec.watchEtcdLeader(octx, etcd, p) })
	}
	wg.Go(func() { r.rec.watchLeases(octx, cs) })
	wg.Go(func() { r.rec.watchNodes(octx, cs) })
	wg.Go(func() { r.rec.watchReplicaSets(octx, cs) })
	nodes := sc.Cluster.HollowNodes + sc.Cluster.RealNodes
	if external {
		if nodes, err = externalNodes(ctx, cs); err != nil {
			stopObservers()
			wg.Wait()
			return fail("%v", err)
		}
	}
	logf("waiting for %d nodes Ready", nodes)
	for wait := time.Now().Add(3 * time.Minute); r.rec.readyNodes() < nodes; sleep(ctx, 200*time.Millisecond) {
		if time.Now().After(wait) || ctx.Err() != nil {
			stopObservers()
			wg.Wait()
			return fail("%d of %d nodes Ready after 3m", r.rec.readyNodes(), nodes)
		}
	}
	// Let the observers take their first samples: the leaders before any
	// fault.
	sleep(ctx, time.Second)

	// The linearizability workload's objects, before the load.
	lin := &linWorkload{cfg: sc.Probe.Linearizability, apis: nAPI}
	if err := lin.setup(ctx, cs, labels); err != nil {
		stopObservers()
		wg.Wait()
		return fail("%v", err)
	}
	linClients := make([]kubernetes.Interface, lin.cfg.Clients)
	for i := range linClients {
		if linClients[i], err = apis.clientAs(i, fmt.Sprintf("kstep-chaos-lin/%d", i)); err != nil {
			stopObservers()
			wg.Wait()
			return fail("%v", err)
		}
	}

	// The load: the loadgen job and the probe.
	start := time.Now()
	r.rec.mu.Lock()
	r.rec.h.Start = start
	r.rec.mu.Unlock()
	lctx, stopLoad := context.WithCancel(ctx)
	lcs, err := apis.client(0)
	if err != nil {
		stopLoad()
		stopObservers()
		return fail("%v", err)
	}
	var loadRes *loadgen.Result
	var loadErr error
	loadDone := make(chan struct{})
	job := sc.Load
	for _, f := range sc.Faults {
		if f.Target == TargetClient && r.load == nil {
			bin := opts.Binary
			if bin == "" {
				if bin, err = os.Executable(); err != nil {
					stopLoad()
					stopObservers()
					return fail("kstep binary: %v", err)
				}
			}
			r.load = newLoadProcess(bin, p.Kubeconfig(), filepath.Dir(traces), job, logf)
		}
	}
	go func() {
		defer close(loadDone)
		trace := filepath.Join(traces, loadgen.Actor+".jsonl")
		if r.load != nil {
			loadRes, loadErr = r.load.run(lctx, trace)
			return
		}
		loadRes, loadErr = loadgen.Run(lctx, &job, loadgen.Options{Client: lcs, TraceFile: trace, Labels: labels, Outside: external})
	}()
	pcs, err := apis.client(0)
	if err != nil {
		stopLoad()
		stopObservers()
		return fail("%v", err)
	}
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		r.rec.probe(lctx, pcs, sc.Probe, &clientErrors)
	}()
	linDone := make(chan struct{})
	go func() {
		defer close(linDone)
		lin.run(lctx, linClients, sc.Probe.RequestTimeout.Duration)
	}()

	logf("load: %d %s at %.1f/s; probe writes at %.0f/s; %d watchers; linearizability: %d clients × %.0f/s on %d objects; %d faults", job.Count, job.Object.Kind, job.QPS,
		sc.Probe.WriteQPS, len(watchers), lin.cfg.Clients, lin.cfg.QPS, lin.cfg.Objects, len(sc.Faults))
	results := r.runSchedule(ctx, start)

	// Convergence: the load job has created everything, then every
	// ReplicaSet is Ready.
	createEnd := start.Add(time.Duration(float64(job.Count)/job.QPS*float64(time.Second)) + 5*time.Second)
	sleep(ctx, time.Until(createEnd))
	logf("waiting up to %v for every ReplicaSet to be Ready", sc.Convergence.Duration)
	convStart := time.Now()
	rsStatus, convErr := waitConverged(ctx, cs, &job, sc.Convergence.Duration)
	converged := CheckConvergence(rsStatus, time.Since(convStart))
	if convErr != nil {
		converged.Checked = false
		converged.Detail = append(converged.Detail, convErr.Error())
	}
	stopLoad()
	<-loadDone
	<-probeDone
	<-linDone
	// Let the watchers catch up with the last writes, then stop observing.
	sleep(ctx, 2*time.Second)
	end := time.Now()
	stopObservers()
	wg.Wait()
	var resumes []ResumeLog
	skipped := 0
	for _, w := range r.watchers {
		resumes = append(resumes, w.resumes...)
		skipped += int(w.skipped.Load())
	}

	r.rec.mu.Lock()
	h := r.rec.h
	r.rec.mu.Unlock()
	h.End = end
	h.Watchers = watchers
	if h.Evictions, err = evictions(ctx, cs, h.Pods); err != nil {
		// Unread, "0 evicted" would be a guess.
		return fail("evictions: %v", err)
	}
	h.sortHistory()

	rep := &Report{Schema: Schema, Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, Gate: opts.Gate.Name,
		Provider: opts.Provider, Cluster: sc.Cluster, Security: sc.Cluster.Security(), StartedAt: start.UTC().Format(time.RFC3339), Start: start, End: end,
		Faults: results, HashChecks: r.hashs, ClientErrors: int(clientErrors.Load())}
	if external {
		// kstep does not know an external cluster's components: only
		// what the API shows.
		rep.Cluster, rep.Security = provider.Topology{}, ""
		rep.External = fmt.Sprintf("%d nodes", nodes)
		if v, ok := p.(interface{ ServerVersion() string }); ok && v.ServerVersion() != "" {
			rep.External = v.ServerVersion() + ", " + rep.External
		}
	}
	rep.Notes = append(rep.Notes, r.notes...)
	if loadErr != nil && !errors.Is(loadErr, context.Canceled) {
		rep.Notes = append(rep.Notes, "load job: "+loadErr.Error())
	}

	// Invariants that need the cluster.
	var acked []AckedWrite
	for _, w := range h.Writes {
		rep.ProbeWrites++
		if !w.Acked.IsZero() {
			rep.ProbeAcked++
			acked = append(acked, AckedWrite{Op: "create", Kind: "ConfigMap", Key: w.Key, UID: w.UID, RV: w.RV})
		}
	}
	if loadRes != nil {
		rep.LoadErrors = len(loadRes.Errors)
		for i, e := range loadRes.Errors {
			if i == 3 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("load job: %d more failed writes", len(loadRes.Errors)-3))
				break
			}
			rep.Notes = append(rep.Notes, "load job: "+e)
		}
		for _, w := range loadRes.Writes {
			rv, _ := strconv.ParseInt(w.ResourceVersion, 10, 64)
			if w.Op == "create" {
				rep.LoadObjects++
			}
			acked = append(acked, AckedWrite{Op: w.Op, Kind: w.Kind, Key: w.Namespace + "/" + w.Name, UID: string(w.UID), RV: rv})
		}
	}
	final, ferr := finalState(ctx, cs, job.Namespaces)
	if ferr != nil {
		return fail("final state: %v", ferr)
	}
	var lost Invariant
	// The watch guarantees' reference: etcd's history of each watched set
	// (on external, none: the watchers' union).
	ref := map[string][]int64{}
	var refErrs []string
	if etcd != nil {
		revs, herr := r.history.revisionsOf(ctx, acked)
		lost = CheckAckedWrites(acked, final, revs)
		if herr != nil {
			lost.Detail = append(lost.Detail, "etcd history not checked: "+herr.Error())
		}
		for _, set := range []string{WatchPods, WatchBeat, WatchQuiet} {
			revs, gerr := r.history.setHistory(ctx, set, watchers)
			if gerr != nil {
				refErrs = append(refErrs, gerr.Error())
				continue
			}
			ref[set] = revs
		}
	} else {
		// From outside: every acknowledged write present at the end (its
		// revision in etcd's history is not checkable).
		lost = CheckAckedWrites(acked, final, nil)
		lost.Detail = append(lost.Detail, "etcd's history not reachable on this cluster: revisions not checked")
	}
	reliable := CheckWatchReliable(watchers, ref)
	reliable.Detail = append(reliable.Detail, refErrs...)
	var windows []Window
	for _, f := range results {
		if !f.InjectedAt.IsZero() {
			windows = append(windows, Window{From: f.InjectedAt, To: latest(f.InjectedAt, f.UndoneAt, f.ReadyAt).Add(resumeWait)})
		}
	}
	resumable, wst := CheckWatchResumable(watchers, resumes, skipped, windows)
	wst.Watchers = len(watchers)
	for _, w := range watchers {
		wst.Events += len(w.Events)
		wst.Bookmarks += len(w.Bookmarks)
		wst.Restarts += max(len(w.Starts)-1, 0)
	}
	rep.Watch = &wst
	inits, ops, ls := lin.history()
	bookmarkable := CheckWatchBookmarkable(watchers, ref, resumes)
	if external && wst.Bookmarks == 0 {
		// kstep's apiservers bookmark a quiet watch after 5 s; another
		// cluster's at its own period (upstream's about once a minute): a
		// short run may see none, which is not a broken promise.
		bookmarkable.Checked = true
		bookmarkable.Detail = []string{"no bookmark arrived: the cluster's apiservers send them at their own period; nothing to check"}
	}
	linInv, linStats := CheckLinearizable(inits, ops, ls, 0, filepath.Dir(traces))
	rep.Linearizability = &linStats
	rep.Invariants = []Invariant{lost, CheckRSOverReplicas(h.Pods, h.RS), CheckBoundOnce(h.Pods),
		CheckWatchOrdered(watchers), CheckWatchUnique(watchers), reliable, bookmarkable, resumable, CheckWatchIdle(watchers, windows), linInv}
	rep.Notes = append(rep.Notes, WatchAtomicNote)
	if etcd != nil {
		rep.Invariants = append(rep.Invariants, CheckHashes(etcd.hashes(ctx, p)))
	} else {
		rep.Notes = append(rep.Notes, InvHashKV+": not observable on this cluster (its etcd members are not reachable through the API)")
	}
	rep.Invariants = append(rep.Invariants, converged)
	rep.Invariants = append(rep.Invariants, CheckLoadObjects(job, final))
	if sc.Cluster.RealNodes > 0 {
		rep.Invariants = append(rep.Invariants, r.checkRunningPods(ctx, results))
	}
	rep.hist = &h
	return rep, nil
}

// runSchedule injects and undoes the faults at their offsets from start,
// and checks etcd's hashes between faults.
func (r *run) runSchedule(ctx context.Context, start time.Time) []FaultResult {
	faults := r.sc.Faults
	out := make([]FaultResult, len(faults))
	for i, f := range faults {
		out[i] = FaultResult{Name: f.Name, Action: f.Action, Target: f.Target}
	}
	res := make([]resolved, len(faults))
	sched := NewSchedule(faults)
	for {
		next, ok := sched.Next()
		if !ok {
			return out
		}
		sleep(ctx, time.Until(start.Add(next)))
		if ctx.Err() != nil {
			return out
		}
		for _, st := range sched.Due(time.Since(start)) {
			f := &out[st.Fault]
			if st.Phase == Inject {
				if st.Fault > 0 && r.etcd != nil {
					r.hashs = append(r.hashs, withName(CheckHashes(r.etcd.hashes(ctx, r.p)), "before "+f.Name))
				}
				r.snapshotContainers(ctx)
				faultSample(r.watchers, f.Name)
				res[st.Fault] = r.inject(ctx, faults[st.Fault], f)
				sched.Injected(st.Fault, time.Since(start))
				if f.Action == ActionRestart {
					r.logf("%s: %s restarted, ready after %v", f.Name, strings.Join(f.Actors, ","), f.ReadyAt.Sub(f.InjectedAt).Round(time.Millisecond))
				}
				continue
			}
			r.undo(ctx, faults[st.Fault], f, res[st.Fault])
		}
	}
}

// realNodeContainers lists the running containers of pods on real nodes.
func (r *run) realNodeContainers(ctx context.Context) ([]RunningContainer, error) {
	real := map[string]bool{}
	for _, a := range r.p.Actors() {
		if a.Role == provider.RoleNode {
			real[a.Name] = true
		}
	}
	pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	var out []RunningContainer
	for _, p := range pods.Items {
		if !real[p.Spec.NodeName] || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running == nil || c.ContainerID == "" {
				continue
			}
			out = append(out, RunningContainer{PodUID: string(p.UID), Pod: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName,
				Container: c.Name, ID: c.ContainerID, Restarts: c.RestartCount})
		}
	}
	return out, nil
}

// snapshotContainers records, before a fault, every real-node container
// not seen yet.
func (r *run) snapshotContainers(ctx context.Context) {
	if r.sc.Cluster.RealNodes == 0 {
		return
	}
	cs, err := r.realNodeContainers(ctx)
	if err != nil {
		r.snapErr = err
		return
	}
	if r.containers == nil {
		r.containers = map[string]RunningContainer{}
	}
	for _, c := range cs {
		if _, seen := r.containers[c.key()]; !seen {
			r.containers[c.key()] = c
		}
	}
}

// checkRunningPods is running-pods-unaffected at the end: the nodes a
// node fault took down are skipped (their pods die with them).
func (r *run) checkRunningPods(ctx context.Context, results []FaultResult) Invariant {
	lost := map[string]bool{}
	for _, f := range results {
		if f.Target == TargetNode {
			for _, n := range f.Nodes {
				lost[n] = true
			}
		}
	}
	after, err := r.realNodeContainers(ctx)
	if err != nil {
		return Invariant{Name: InvRunningPods, Summary: "could not list the pods at the end", Detail: []string{err.Error()}}
	}
	inv := CheckRunningPods(r.containers, after, lost)
	if r.snapErr != nil {
		inv.Detail = append(inv.Detail, "a snapshot before a fault failed: "+r.snapErr.Error())
	}
	return inv
}

func withName(inv Invariant, when string) Invariant {
	inv.Summary = when + ": " + inv.Summary
	return inv
}

// latest is the latest of the times.
func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// inject resolves the fault's target now and applies the action.
func (r *run) inject(ctx context.Context, f Fault, fr *FaultResult) resolved {
	rs, err := r.res.resolveFor(ctx, f.Action, f.Target)
	fr.InjectedAt = time.Now()
	if err != nil {
		fr.Error = "resolve: " + err.Error()
		r.logf("%s: %v", f.Name, err)
		return rs
	}
	fr.Actors, fr.Nodes = rs.actors, rs.nodes
	r.logf("%s: %s %s (%s)", f.Name, f.Action, strings.Join(append(slices.Clone(rs.actors), rs.nodes...), ","), f.Target)
	var errs []error
	if rs.api {
		if err := r.injectAPI(ctx, f, fr, rs); err != nil {
			errs = append(errs, err)
		}
	} else if f.Action == ActionFill {
		// The injection is the quota's refusal, not the start of the fill.
		if err := r.fill(ctx, fr); err != nil {
			errs = append(errs, err)
		}
	} else if f.Target == TargetClient {
		if err := r.load.kill(killSignal(f.Action)); err != nil {
			errs = append(errs, err)
		}
	} else if rs.hollow != "" {
		switch f.Action {
		case ActionKill, ActionStop, ActionRestart:
			if err := r.hollowKubelet(ctx, rs, false); err != nil {
				errs = append(errs, err)
			} else if f.Action == ActionRestart {
				fr.UndoneAt = time.Now()
				if err := r.hollowKubelet(ctx, rs, true); err != nil {
					errs = append(errs, err)
				}
				fr.ReadyAt = time.Now()
			}
		default:
			errs = append(errs, fmt.Errorf("%s of one hollow kubelet: its control stops and starts it (kill, stop, restart)", f.Action))
		}
	} else if rs.process != "" {
		// A process inside an actor (a node's containerd or kubelet): its
		// supervisor brings it back.
		if err := r.p.Signal(ctx, rs.actors[0], rs.process, killSignal(f.Action)); err != nil {
			errs = append(errs, err)
		}
	} else {
		for _, a := range rs.actors {
			var err error
			switch f.Action {
			case ActionKill:
				err = r.p.Stop(ctx, a, syscall.SIGKILL)
			case ActionStop, ActionRestart:
				err = r.p.Stop(ctx, a, syscall.SIGTERM)
			case ActionPause:
				err = r.p.Pause(ctx, a)
			case ActionPartition:
				err = r.p.Partition(ctx, a, provider.ScopePeers)
			case ActionIsolate:
				err = r.p.Partition(ctx, a, provider.ScopeAll)
			case ActionLink:
				err = r.setLink(ctx, f, a, true)
			case ActionFailpoint:
				err = r.setFailpoint(ctx, f, a, true)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if f.Action == ActionRestart && len(errs) == 0 {
			fr.UndoneAt = time.Now()
			for _, a := range rs.actors {
				if err := r.p.Start(ctx, a); err != nil {
					errs = append(errs, err)
				}
			}
			fr.ReadyAt = time.Now()
		}
	}
	if err := errors.Join(errs...); err != nil {
		fr.Error = err.Error()
		r.logf("%s: %v", f.Name, err)
	}
	return rs
}

// logWriter turns logf into an io.Writer of lines.
type logWriter func(string, ...any)

func (l logWriter) Write(b []byte) (int, error) {
	l("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// linkGrace is how long a link rule outlives its fault's duration in the
// proxy: the engine lifts it on time; the proxy lifts it by itself if the
// engine is gone.
const linkGrace = 30 * time.Second

// setLink puts f's link fault on actor's link, or lifts it, over the
// link's control on the actor's own endpoint (every provider the same).
func (r *run) setLink(ctx context.Context, f Fault, actor string, on bool) error {
	a := r.actor(actor)
	hc := linkControl
	switch a.Role {
	case provider.RoleAPIServer:
		hc = r.admin
	case provider.RoleEtcd:
		hc = r.etcdControl
	}
	c := netfault.Client{HC: hc, Base: a.Endpoint}
	link := f.linkOf()
	var err error
	if on {
		_, err = c.Update(ctx, link, netfault.Rule{Name: f.Name, Up: f.Link.Up, Down: f.Link.Down, Reset: f.Link.Reset,
			For: netfault.Duration{Duration: f.Duration.Duration + linkGrace}})
	} else {
		_, err = c.Remove(ctx, link, f.Name)
	}
	if err != nil {
		return fmt.Errorf("link %s of %s: %w", link, actor, err)
	}
	return nil
}

// setFailpoint arms f's failpoint on apiserver actor, or disarms it,
// at the apiserver's failpoint.Path (admin only).
func (r *run) setFailpoint(ctx context.Context, f Fault, actor string, on bool) error {
	fp := f.Failpoint
	c := failpoint.Client{HC: r.admin, Base: r.actor(actor).Endpoint}
	a := failpoint.Arm{Name: fp.Name, Resource: fp.Resource, For: f.Duration.Duration, UserAgent: fp.UserAgent, Count: fp.Count}
	if err := c.Set(ctx, a, on); err != nil {
		return fmt.Errorf("failpoint %s of %s: %w", fp.Name, actor, err)
	}
	return nil
}

// hollowKubelet stops or starts the one hollow kubelet rs names, through
// the hollow-nodes actor's control on its ops endpoint, as the admin (the
// secure port authorizes the admin's certificate by SubjectAccessReview).
func (r *run) hollowKubelet(ctx context.Context, rs resolved, start bool) error {
	c := hollowctl.Client{HC: r.admin, Base: r.actor(rs.actors[0]).Endpoint}
	// The bound linkControl's timeout gave; the admin client has none.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	if start {
		_, err = c.Start(ctx, rs.hollow)
	} else {
		_, err = c.Stop(ctx, rs.hollow)
	}
	if err != nil {
		return fmt.Errorf("kubelet of %s in %s: %w", rs.hollow, rs.actors[0], err)
	}
	return nil
}

// actor is the cluster's actor named name (zero if none).
func (r *run) actor(name string) provider.Actor {
	for _, a := range r.p.Actors() {
		if a.Name == name {
			return a
		}
	}
	return provider.Actor{}
}

var linkControl = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{Proxy: nil}}

func killSignal(a Action) syscall.Signal {
	switch a {
	case ActionStop, ActionRestart:
		return syscall.SIGTERM
	case ActionPause:
		return syscall.SIGSTOP
	}
	return syscall.SIGKILL
}

// undo starts, thaws or heals what inject took down.
func (r *run) undo(ctx context.Context, f Fault, fr *FaultResult, rs resolved) {
	if fr.Error != "" && len(fr.Actors) == 0 && !rs.api {
		return
	}
	fr.UndoneAt = time.Now()
	if f.Action == ActionFill {
		if err := r.unfill(ctx, fr); err != nil {
			fr.Error = strings.TrimPrefix(fr.Error+"; undo: "+err.Error(), "; ")
			r.logf("%s: undo: %v", f.Name, err)
		}
		fr.ReadyAt = time.Now()
		return
	}
	if rs.api {
		if err := r.undoAPI(ctx, f, fr, rs); err != nil {
			fr.Error = strings.TrimPrefix(fr.Error+"; undo: "+err.Error(), "; ")
			r.logf("%s: undo: %v", f.Name, err)
		} else if f.Action == ActionDrain {
			r.logf("%s: %s uncordoned", f.Name, strings.Join(rs.nodes, ","))
		}
		fr.ReadyAt = time.Now()
		return
	}
	if f.Target == TargetClient {
		r.load.start()
		fr.ReadyAt = time.Now()
		return
	}
	if rs.hollow != "" {
		if f.Action != ActionRestart {
			if err := r.hollowKubelet(ctx, rs, true); err != nil {
				fr.Error = strings.TrimPrefix(fr.Error+"; undo: "+err.Error(), "; ")
			}
		}
		fr.ReadyAt = time.Now()
		return
	}
	if rs.process != "" {
		if f.Action == ActionPause {
			if err := r.p.Signal(ctx, rs.actors[0], rs.process, syscall.SIGCONT); err != nil {
				fr.Error = strings.TrimPrefix(fr.Error+"; undo: "+err.Error(), "; ")
			}
		}
		return
	}
	var errs []error
	for _, a := range rs.actors {
		var err error
		switch f.Action {
		case ActionKill, ActionStop:
			if err = r.p.Start(ctx, a); errors.Is(err, provider.ErrActorRunning) && r.sc.Supervise {
				err = nil // the supervisor brought it back first
			}
		case ActionPause:
			err = r.p.Unpause(ctx, a)
		case ActionPartition, ActionIsolate:
			err = r.p.Heal(ctx, a)
		case ActionLink:
			err = r.setLink(ctx, f, a, false)
		case ActionFailpoint:
			err = r.setFailpoint(ctx, f, a, false)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	fr.ReadyAt = time.Now()
	if err := errors.Join(errs...); err != nil {
		fr.Error = strings.TrimPrefix(fr.Error+"; undo: "+err.Error(), "; ")
		r.logf("%s: undo: %v", f.Name, err)
		return
	}
	r.logf("%s: %s back after %v (ready after %v)", f.Name, strings.Join(rs.actors, ","),
		fr.UndoneAt.Sub(fr.InjectedAt).Round(time.Millisecond), fr.ReadyAt.Sub(fr.InjectedAt).Round(time.Millisecond))
}

// finish measures every fault on the history, then evaluates the gate.
func (rep *Report) finish(sc *Scenario, g *Gate, steps []StepEvent) {
	h := rep.hist
	h.Steps = steps
	h.sortHistory()
	for i := range rep.Faults {
		f := &rep.Faults[i]
		f.WindowEnd = h.End
		for _, other := range rep.Faults {
			if other.InjectedAt.After(f.InjectedAt) && other.InjectedAt.Before(f.WindowEnd) {
				f.WindowEnd = other.InjectedAt
			}
		}
		if f.InjectedAt.IsZero() {
			continue
		}
		f.Measure(h, sc.Faults[i].Expect)
	}
	rep.DurationS = h.End.Sub(h.Start).Seconds()
	invs := append([]Invariant(nil), rep.Invariants...)
	for _, hc := range rep.HashChecks {
		if hc.Count > 0 {
			// A mismatch between faults fails the hash line too.
			for k := range invs {
				if invs[k].Name == InvHashKV {
					invs[k].Count += hc.Count
					invs[k].Detail = append(invs[k].Detail, hc.Summary)
				}
			}
		}
	}
	rep.Invariants = invs
	rep.Verdicts = g.Evaluate(rep.Faults, rep.Invariants)
	rep.Passed = Passed(rep.Verdicts)
}

// waitConverged waits until the load job's objects all exist (a load held
// back by the faults creates its last ones late) and every ReplicaSet in
// its namespaces has its replicas Ready, or the timeout; it returns the
// ReplicaSets' state then.
func waitConverged(ctx context.Context, cs kubernetes.Interface, job *loadgen.Job, timeout time.Duration) ([]RSStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []RSStatus
	for {
		var cur []RSStatus
		var err error
		objects := 0
		for _, ns := range job.Namespaces {
			if job.Object.Kind == loadgen.KindDeployment {
				l, lerr := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: loadgen.JobLabel + "=" + job.Name})
				if lerr != nil {
					err = lerr
					break
				}
				objects += len(l.Items)
			}
			l, lerr := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if lerr != nil {
				err = lerr
				break
			}
			for _, rs := range l.Items {
				if job.Object.Kind != loadgen.KindDeployment && rs.Labels[loadgen.JobLabel] == job.Name {
					objects++
				}
				want := int32(1)
				if rs.Spec.Replicas != nil {
					want = *rs.Spec.Replicas
				}
				cur = append(cur, RSStatus{Key: rs.Namespace + "/" + rs.Name, Replicas: want, Ready: rs.Status.ReadyReplicas})
			}
		}
		if err == nil {
			last = cur
			done := objects >= job.Count
			for _, s := range cur {
				if s.Ready < s.Replicas {
					done = false
				}
			}
			if done {
				return cur, nil
			}
		}
		select {
		case <-ctx.Done():
			if last == nil {
				return nil, fmt.Errorf("list ReplicaSets: %v", err)
			}
			return last, nil
		case <-time.After(time.Second):
		}
	}
}

// finalState lists what the acknowledged writes may have created: the
// probe's ConfigMaps and the load's ReplicaSets, kind → key → UID.
func finalState(ctx context.Context, cs kubernetes.Interface, namespaces []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{"ConfigMap": {}, loadgen.KindReplicaSet: {}, loadgen.KindDeployment: {}}
	cms, err := cs.CoreV1().ConfigMaps(probeNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, c := range cms.Items {
		out["ConfigMap"][c.Namespace+"/"+c.Name] = string(c.UID)
	}
	for _, ns := range namespaces {
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, r := range rss.Items {
			out[loadgen.KindReplicaSet][r.Namespace+"/"+r.Name] = string(r.UID)
		}
		ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, d := range ds.Items {
			out[loadgen.KindDeployment][d.Namespace+"/"+d.Name] = string(d.UID)
		}
	}
	return out, nil
}

// readSteps reads the actors' trace events (every <actor>.jsonl in dir),
// each attributed to the actor whose file it is.
func readSteps(dir string) ([]StepEvent, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []StepEvent
	var errs []error
	for _, f := range files {
		evs, _, err := trace.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The actor is the file's: <actor>.jsonl. Actors stamp a role
		// ("scheduler") or a name, and a leader's recovery must tell the
		// standby's stamps from the killed leader's.
		actor := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		for _, e := range evs {
			out = append(out, StepEvent{At: time.Unix(0, e.TS), Step: e.Step, Actor: actor, UID: string(e.UID)})
		}
	}
	return out, errors.Join(errs...)
}
