package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// Options say where and how a run happens.
type Options struct {
	// Binary is the kstep binary the actors run; "" is the running one.
	Binary string
	// OutDir is the run directory; it must not exist or be empty.
	OutDir string
	// Provider is the cluster provider; only "process" exists.
	Provider string
	// Progress, when non-nil, gets the load generator's progress bars.
	Progress io.Writer
	// Log gets one line per phase.
	Log io.Writer
}

// Run brings a cluster up, runs the profile's job, tears the cluster down and
// writes the run directory. The returned run is written even when the run is
// invalid; the error is for runs that produced nothing to report.
func Run(ctx context.Context, prof *Profile, opts Options) (*results.Run, error) {
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	if opts.Provider == "" {
		opts.Provider = "process"
	}
	if opts.Provider != "process" {
		return nil, fmt.Errorf("provider %q: only process exists", opts.Provider)
	}
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
		Valid: true, StartedAt: started.UTC().Format(time.RFC3339),
		Cluster: results.Cluster{EtcdMembers: prof.Cluster.EtcdMembers, APIServers: prof.Cluster.APIServers,
			ControllerManagers: prof.Cluster.ControllerManagers, Schedulers: prof.Cluster.Schedulers,
			Nodes: prof.Cluster.Nodes, NodeKind: "hollow (" + prof.Cluster.LatencyProfile + ")", Objects: prof.Job.Count,
			Replicas: int(prof.Job.Object.Replicas), QPS: prof.Job.QPS},
	}
	invalid := func(format string, a ...any) {
		run.Valid = false
		run.Invalid = append(run.Invalid, fmt.Sprintf(format, a...))
	}

	cfg := process.DefaultConfig()
	cfg.Binary, cfg.StateDir, cfg.TraceDir = opts.Binary, state, traces
	cfg.EtcdMembers, cfg.APIServers = prof.Cluster.EtcdMembers, prof.Cluster.APIServers
	cfg.ControllerManagers, cfg.Schedulers = prof.Cluster.ControllerManagers, prof.Cluster.Schedulers
	cfg.HollowNodes = prof.Cluster.Nodes
	cfg.HollowArgs = []string{"--latency-profile=" + prof.Cluster.LatencyProfile}
	cfg.Nodes = prof.Cluster.RealNodes
	if err := process.CanRunRealNodes(cfg); cfg.Nodes > 0 && err != nil {
		logf("no real nodes in this run: %v", err)
		cfg.Nodes = 0
	}
	if cfg.Nodes > 0 {
		run.Runtime = "containerd+hollow"
		run.Cluster.NodeKind = fmt.Sprintf("%d real (containerd) + %d hollow (%s)", cfg.Nodes, cfg.HollowNodes, prof.Cluster.LatencyProfile)
		run.Cluster.Nodes = cfg.Nodes + cfg.HollowNodes
	}
	cfg.ReadyTimeout = 2 * time.Minute
	p, err := process.New(cfg)
	if err != nil {
		return nil, err
	}
	logf("cluster up (%d etcd, %d apiservers, %d controller-managers, %d schedulers) in %s", cfg.EtcdMembers, cfg.APIServers, cfg.ControllerManagers, cfg.Schedulers, state)
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

	rc, err := clientcmd.BuildConfigFromFlags("", p.Kubeconfig())
	if err != nil {
		down()
		return nil, err
	}
	// The job's token bucket is the only limit.
	rc.QPS, rc.Burst = -1, -1
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		down()
		return nil, err
	}

	nodesLog := filepath.Join(state, "logs", "hollow-nodes.log")
	logf("waiting for %d nodes Ready", cfg.Nodes+cfg.HollowNodes)
	if err := waitNodes(ctx, cs, cfg.Nodes+cfg.HollowNodes, 3*time.Minute); err != nil {
		down()
		return nil, fmt.Errorf("%w (log: %s)", err, nodesLog)
	}

	logf("load: %d %s × %d replicas at %.0f qps (burst %d)", prof.Job.Count, prof.Job.Object.Kind, prof.Job.Object.Replicas, prof.Job.QPS, prof.Job.Burst)
	res, lerr := loadgen.Run(ctx, &prof.Job, loadgen.Options{Client: cs, TraceFile: filepath.Join(traces, loadgen.Actor+".jsonl"), Progress: opts.Progress})
	if lerr != nil {
		invalid("load job: %v", lerr)
	}
	logf("tearing down")
	down()
	run.DurationS = time.Since(started).Seconds()

	events, err := ReadTraces(traces)
	if err != nil {
		return nil, err
	}
	var objects []types.UID
	var pods []loadgen.PodOwner
	if res != nil {
		for _, w := range res.Writes {
			if w.Op == "create" {
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
	Analyze(Input{Events: events, Objects: objects, Pods: pods, Replicas: int(prof.Job.Object.Replicas)}, run)

	// Trace drops: the load generator counts its own; the scheduler logs a
	// count at exit; the other actors report none (yet).
	run.Drops = map[string]uint64{}
	if res != nil {
		run.Drops[loadgen.Actor] = res.TraceDropped
	}
	logs, _ := filepath.Glob(filepath.Join(state, "logs", "*.log"))
	for _, l := range logs {
		actor := strings.TrimSuffix(filepath.Base(l), ".log")
		if n, ok := droppedInLog(l); ok {
			run.Drops[actor] = n
		} else if !strings.HasPrefix(actor, "scheduler") {
			run.DropsUnknown = append(run.DropsUnknown, actor)
		} else {
			run.Drops[actor] = 0 // the scheduler logs only when it dropped
		}
	}
	sort.Strings(run.DropsUnknown)
	for actor, n := range run.Drops {
		if n > 0 {
			invalid("actor %s dropped %d trace events", actor, n)
		}
	}

	if err := results.WriteEvents(filepath.Join(out, "events.jsonl.gz"), events); err != nil {
		return nil, err
	}
	if err := results.WriteRun(out, run); err != nil {
		return nil, err
	}
	return run, nil
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

// ReadTraces merges every <actor>.jsonl in dir, sorted by time.
func ReadTraces(dir string) ([]trace.Event, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var all []trace.Event
	for _, f := range files {
		evs, err := readEvents(f)
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].TS < all[j].TS })
	return all, nil
}

func readEvents(path string) ([]trace.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []trace.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e trace.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A torn last line from a killed actor is not data.
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace %s:%d: %w", path, line, err)
	}
	return out, nil
}

var droppedRE = regexp.MustCompile(`trace events dropped.*dropped=(\d+)`)

// droppedInLog finds the dropped count an actor logged, if it logged one.
func droppedInLog(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	m := droppedRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0, false
	}
	n, _ := strconv.ParseUint(string(m[len(m)-1][1]), 10, 64)
	return n, true
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
