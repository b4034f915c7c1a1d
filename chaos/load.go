package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/loadgen"
)

// TargetClient is the failure table's client row: the load generator
// itself, run as its own process (`kstep load`) when a fault names it.
const TargetClient Target = "client"

// clientActor is the client's name in fault results.
const clientActor = "kstep-load"

// loadProcess runs the scenario's load job as `kstep load` child
// processes: a fault kills the running one, its undo starts the next, and
// the last one that ends by itself ends the load. Creates are by name and
// idempotent, so the runs together converge to the job's objects.
type loadProcess struct {
	bin, kubeconfig, dir string
	job                  loadgen.Job
	logf                 func(string, ...any)

	mu      sync.Mutex
	cmd     *exec.Cmd
	killed  bool
	runs    int
	restart chan struct{}
	writes  []loadgen.Write
	last    *loadgen.Result
}

func newLoadProcess(bin, kubeconfig, dir string, job loadgen.Job, logf func(string, ...any)) *loadProcess {
	return &loadProcess{bin: bin, kubeconfig: kubeconfig, dir: dir, job: job, logf: logf, restart: make(chan struct{}, 1)}
}

// run runs the load until a run ends by itself (or ctx ends) and returns
// the runs' acknowledged writes together with the last run's result.
func (l *loadProcess) run(ctx context.Context, traceFile string) (*loadgen.Result, error) {
	jobFile := filepath.Join(l.dir, "load-job.yaml")
	b, err := yaml.Marshal(l.job)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(jobFile, b, 0o644); err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		l.runs++
		n := l.runs
		writes := filepath.Join(l.dir, fmt.Sprintf("load-writes-%d.jsonl", n))
		result := filepath.Join(l.dir, fmt.Sprintf("load-result-%d.json", n))
		logPath := filepath.Join(l.dir, fmt.Sprintf("load-%d.log", n))
		log, err := os.Create(logPath)
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		cmd := exec.Command(l.bin, "load", "--kubeconfig", l.kubeconfig, "--job", jobFile,
			"--trace-file", traceFile, "--write-log", writes, "--result-file", result)
		cmd.Stdout, cmd.Stderr = log, log
		err = cmd.Start()
		log.Close()
		if err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("start kstep load: %w", err)
		}
		l.cmd, l.killed = cmd, false
		l.mu.Unlock()

		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		select {
		case werr = <-done:
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			werr = <-done
		}
		l.collect(writes, result)
		l.mu.Lock()
		killed := l.killed
		l.cmd = nil
		l.mu.Unlock()
		if !killed || ctx.Err() != nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			res := &loadgen.Result{Writes: l.writes}
			if l.last != nil {
				res.Errors, res.Expected, res.Ready = l.last.Errors, l.last.Expected, l.last.Ready
			}
			if werr != nil && ctx.Err() == nil {
				return res, fmt.Errorf("kstep load (run %d, %s): %w", n, logPath, werr)
			}
			return res, nil
		}
		// Killed by a fault: the next run starts when the fault is undone.
		select {
		case <-l.restart:
		case <-ctx.Done():
			return &loadgen.Result{Writes: l.writes}, nil
		}
	}
}

// collect reads what a finished run left (a killed run leaves nothing).
func (l *loadProcess) collect(writes, result string) {
	var ws []loadgen.Write
	if b, err := os.ReadFile(writes); err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var w loadgen.Write
			if dec.Decode(&w) != nil {
				break
			}
			ws = append(ws, w)
		}
	}
	var res *loadgen.Result
	if b, err := os.ReadFile(result); err == nil {
		var r loadgen.Result
		if json.Unmarshal(b, &r) == nil {
			res = &r
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, ws...)
	if res != nil {
		l.last = res
	}
}

// kill ends the running `kstep load` with sig; the run loop waits for
// start.
func (l *loadProcess) kill(sig syscall.Signal) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cmd == nil || l.cmd.Process == nil {
		return errors.New("kstep load is not running")
	}
	l.killed = true
	return l.cmd.Process.Signal(sig)
}

// start lets the run loop start the next `kstep load`.
func (l *loadProcess) start() {
	select {
	case l.restart <- struct{}{}:
	default:
	}
}

// InvLoadObjects is "the load's objects converge": every object the job
// names exists at the end, exactly once, and no other object of its kind
// is in the job's namespaces (a client killed and run again must not
// leave duplicates or holes).
const InvLoadObjects = "load-objects"

// CheckLoadObjects compares the job's objects with the final state.
func CheckLoadObjects(job loadgen.Job, final map[string]map[string]string) Invariant {
	inv := Invariant{Name: InvLoadObjects, Checked: true}
	if job.Phases.Delete {
		inv.Summary = "the job deletes its objects: nothing to compare"
		return inv
	}
	have := final[job.Object.Kind]
	want := map[string]bool{}
	for i := range job.Count {
		ns := job.Namespaces[i%len(job.Namespaces)]
		want[fmt.Sprintf("%s/%s%d", ns, job.Object.NamePrefix, i)] = true
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := have[k]; !ok {
			inv.add("%s %s missing", job.Object.Kind, k)
		}
	}
	var extra []string
	for k := range have {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		inv.add("%s %s is not the job's", job.Object.Kind, k)
	}
	inv.Summary = fmt.Sprintf("%d %s objects expected, %d present, %d missing or extra", len(want), job.Object.Kind, len(have), inv.Count)
	return inv
}
