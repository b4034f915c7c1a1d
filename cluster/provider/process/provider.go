package process

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

var _ provider.Provider = (*Provider)(nil)

// killWait bounds the wait for a process to disappear after SIGKILL.
const killWait = 10 * time.Second

// Provider runs a cluster as child processes of the kstep binary. The cluster
// is recorded in the state directory, so a Provider made by New in another
// process (kstep down, the chaos engine) can stop, signal and restart the
// actors too.
//
// A Provider is safe for concurrent use. Up and Down are serialized; Start
// and Stop of different actors may run concurrently with each other. Across
// processes, cluster.json is replaced atomically but not locked: Up and Down
// re-read it, so one process may drive Start and Stop (the chaos engine)
// while another owns the cluster (a foreground kstep up), but two processes
// restarting actors at once would overwrite each other's PIDs.
type Provider struct {
	cfg provider.Spec
	// binary is the kstep binary new clusters run.
	binary string

	// lifecycle serializes Up, Down and Purge.
	lifecycle sync.Mutex

	mu sync.Mutex
	// st is the recorded cluster, nil when there is none; stFile the
	// cluster.json it was read from (another process that restarts an
	// actor, kstep supervise, writes a new one).
	st     *clusterState
	stFile os.FileInfo
	// children are the processes this Provider started, by actor name; only
	// they can be waited for, and their exit is known without polling.
	children map[string]*child
	// usage sums what each actor's exited processes consumed.
	usage provider.Accounts
}

// child is a process this Provider started and reaps.
type child struct {
	pid  int
	done chan struct{}
	// exit describes how the process ended; set before done is closed.
	exit string
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func init() {
	provider.Register(provider.Driver{
		Name:      provider.Process,
		New:       func(s provider.Spec) (provider.Provider, error) { return New(s) },
		Recorded:  func(dir string) bool { st, err := loadState(dir); return err == nil && st != nil },
		RealNodes: CanRunRealNodes,
	})
}

// New returns a Provider for the cluster in cfg.StateDir, loading the cluster
// recorded there if there is one.
func New(cfg provider.Spec) (*Provider, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("state dir is empty")
	}
	dir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("state dir %q: %w", cfg.StateDir, err)
	}
	cfg.StateDir = dir
	if cfg.TraceDir != "" {
		if cfg.TraceDir, err = filepath.Abs(cfg.TraceDir); err != nil {
			return nil, err
		}
	}
	cfg = cfg.WithDefaults()
	bin := cfg.Binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find the kstep binary: %w", err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, fmt.Errorf("kstep binary %q: %w", cfg.Binary, err)
	}
	st, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, binary: bin, st: st, children: map[string]*child{}}, nil
}

// Name is "process".
func (p *Provider) Name() string { return provider.Process }

// StateDir is the absolute path of the cluster's state directory.
func (p *Provider) StateDir() string { return p.cfg.StateDir }

// Up starts a new cluster in provider.Boot's order, each actor waited for
// until ready, and writes the kubeconfigs. It refuses (ErrClusterRunning)
// while a cluster recorded in the state directory still has a live actor.
// On failure it stops every actor it started.
func (p *Provider) Up(ctx context.Context) (err error) {
	if err := p.cfg.Validate(); err != nil {
		return err
	}
	if _, err := os.Stat(p.binary); err != nil {
		return fmt.Errorf("kstep binary: %w", err)
	}
	if err := p.checkRealNodes(); err != nil {
		return err
	}
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()

	p.mu.Lock()
	st, err := p.prepareLocked()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			return
		}
		// Tear down with a fresh context: ctx may be why Up failed.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := p.stopAll(tctx, 2*time.Second); derr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the partly started cluster: %w", derr))
		}
		p.mu.Lock()
		p.st = nil
		if rerr := removeState(p.cfg.StateDir); rerr != nil {
			err = errors.Join(err, rerr)
		}
		p.mu.Unlock()
	}()

	secure := !p.cfg.Insecure
	comps := st.components()
	if secure {
		if err := provider.WritePKI(p.cfg.StateDir, comps, nil, p.cfg.Tokens); err != nil {
			return err
		}
	}
	// Every client reaches its apiserver on 127.0.0.1, through its link
	// when it has one.
	urls := map[string]string{}
	for _, a := range st.Actors {
		if a.Role == provider.RoleAPIServer {
			scheme, _, _ := strings.Cut(a.Endpoint, "://")
			urls[a.Name] = fmt.Sprintf("%s://127.0.0.1:%d", scheme, a.Ports[a.component().ClientPort()])
		}
	}
	if err := provider.WriteKubeconfigs(p.cfg.StateDir, comps, secure, func(name string) string { return urls[name] }); err != nil {
		return err
	}
	if err := provider.Boot(ctx, comps, p.startAll, p.writeKubeconfig); err != nil {
		return err
	}
	if p.cfg.Supervise && p.cfg.Detach {
		return p.startSupervisor()
	}
	return nil
}

// startSupervisor leaves `kstep supervise` behind a detached cluster, in
// a session of its own, and records it.
func (p *Provider) startSupervisor() error {
	args := []string{"supervise", "--state-dir", p.cfg.StateDir}
	log, err := os.OpenFile(provider.LogPath(p.cfg.StateDir, "supervisor"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("supervisor log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(p.binary, args...)
	cmd.Dir = p.cfg.StateDir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr(true)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the supervisor: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Supervisor = &procRef{PID: cmd.Process.Pid, Args: args}
	return saveState(p.cfg.StateDir, p.st)
}

// writeKubeconfig writes the admin kubeconfig (a context per apiserver).
func (p *Provider) writeKubeconfig() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var servers []provider.Actor
	for _, a := range p.st.Actors {
		if a.Role == provider.RoleAPIServer {
			servers = append(servers, a.Actor)
		}
	}
	path, err := provider.WriteAdminKubeconfig(p.cfg.StateDir, servers, !p.cfg.Insecure)
	if err != nil {
		return err
	}
	p.st.Kubeconfig = path
	return saveState(p.cfg.StateDir, p.st)
}

// prepareLocked checks that no cluster is alive, clears what an earlier one
// left, picks ports, and records the new cluster with no actor started yet.
func (p *Provider) prepareLocked() (*clusterState, error) {
	dir := p.cfg.StateDir
	st, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	if st != nil {
		p.st = st
		var live []string
		for i := range st.Actors {
			if a := &st.Actors[i]; p.runningLocked(a) {
				live = append(live, fmt.Sprintf("%s (pid %d)", a.Name, a.PID))
			}
		}
		// A foreground owner that is still alive would stop whatever cluster
		// the state dir records when it is told to stop, ours included.
		if !st.Detached && st.Owner.PID != os.Getpid() && processAlive(st.Owner) {
			live = append(live, fmt.Sprintf("its kstep up (pid %d)", st.Owner.PID))
		}
		if len(live) > 0 {
			return nil, fmt.Errorf("%w in %s: %s still alive; run `kstep down --state-dir %s` first",
				provider.ErrClusterRunning, dir, strings.Join(live, ", "), dir)
		}
	}
	p.st = nil

	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	// A new cluster: members bound to an earlier cluster's ports must not
	// find their old data.
	if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
		return nil, fmt.Errorf("clear old etcd data: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, "kubeconfig")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove old kubeconfig: %w", err)
	}
	actors, err := p.plan()
	if err != nil {
		return nil, err
	}
	st = &clusterState{
		Version:   stateVersion,
		Binary:    p.binary,
		Detached:  p.cfg.Detach,
		Owner:     procRef{PID: os.Getpid(), Args: os.Args[1:]},
		CreatedAt: time.Now().UTC(),
		Actors:    actors,
	}
	if err := saveState(dir, st); err != nil {
		return nil, err
	}
	p.st = st
	return st, nil
}

// plan is provider.Plan on 127.0.0.1: every port a free one of the
// loopback (counted by a first pass of the plan), every etcd member's data
// in <state>/etcd/<member>, every real node's in <state>/nodes/<node>.
func (p *Provider) plan() ([]actorState, error) {
	dir := p.cfg.StateDir
	addr := provider.Addressing{
		Host:       func(string) string { return "127.0.0.1" },
		ListenHost: "127.0.0.1",
		DataDir: func(name string) string {
			if strings.HasPrefix(name, "etcd-") {
				return filepath.Join(dir, "etcd", name)
			}
			return filepath.Join(dir, "nodes", name)
		},
		StateDir: dir, TraceDir: p.cfg.TraceDir, BinDir: filepath.Dir(p.binary),
	}
	count := 0
	addr.Port = func(string, string) int { count++; return 0 }
	provider.Plan(p.cfg.Topology, addr)
	free, err := provider.FreePorts(count)
	if err != nil {
		return nil, err
	}
	ports := map[[2]string]int{}
	addr.Port = func(name, use string) int {
		k := [2]string{name, use}
		if _, ok := ports[k]; !ok {
			ports[k] = free[len(ports)]
		}
		return ports[k]
	}
	var out []actorState
	for _, c := range provider.Plan(p.cfg.Topology, addr) {
		ep := fmt.Sprintf("%s://127.0.0.1:%d", c.Scheme, c.Ports[c.Serve])
		ready, metrics := ep, ""
		if c.Metrics != "" {
			metrics = fmt.Sprintf("http://127.0.0.1:%d", c.Ports[c.Metrics])
			ready = metrics
		}
		out = append(out, actorState{
			Actor: provider.Actor{Name: c.Name, Role: c.Role, Endpoint: ep, MetricsURL: metrics,
				LogPath: provider.LogPath(dir, c.Name), APIServer: c.APIServer},
			Args:        c.Args,
			Ports:       c.Ports,
			DataDir:     c.DataDir,
			CPUs:        provider.ParseCPUs(p.cfg.Topology.ActorCPUs),
			ReadyURL:    ready + c.ReadyPath,
			Kubeconfig:  c.Kubeconfig,
			APIServer:   c.APIServer,
			User:        c.User,
			Groups:      c.Groups,
			HollowNodes: c.HollowNodes,
		})
	}
	return out, nil
}

// startAll starts every named actor (fresh logs), records their PIDs, and
// waits until all are ready. Members of a new etcd cluster are ready only
// together, so the waits run concurrently; the first failure cancels the rest.
func (p *Provider) startAll(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	p.mu.Lock()
	started := make([]actorState, 0, len(names))
	for _, name := range names {
		a, err := p.st.actor(name)
		if err == nil {
			err = p.spawnLocked(a, true)
		}
		if err != nil {
			p.mu.Unlock()
			return err
		}
		started = append(started, *a)
	}
	err := saveState(p.cfg.StateDir, p.st)
	p.mu.Unlock()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(started))
	for _, a := range started {
		go func() {
			err := provider.WaitReady(ctx, a.Actor, a.ReadyURL, p.cfg.ReadyTimeout, p.exitedFunc(a))
			if err != nil {
				cancel()
			}
			errs <- err
		}()
	}
	var first, cancelled error
	for range started {
		if err := <-errs; err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				cancelled = err // a wait cut short by another actor's failure
				continue
			}
			if first == nil {
				first = err
			}
		}
	}
	if first != nil {
		return first
	}
	return cancelled
}

// spawnLocked starts a's process. fresh truncates its log; otherwise the
// log continues with a marker line. Caller holds p.mu.
func (p *Provider) spawnLocked(a *actorState, fresh bool) error {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fresh {
		flags |= os.O_TRUNC
	}
	log, err := os.OpenFile(a.LogPath, flags, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open log: %w", a.Name, err)
	}
	defer log.Close() // the child has its own descriptor once started
	if !fresh {
		fmt.Fprintf(log, "--- kstep: starting %s again at %s ---\n", a.Name, time.Now().UTC().Format(time.RFC3339Nano))
	}
	cmd := exec.Command(p.st.Binary, a.Args...)
	cmd.Dir = p.cfg.StateDir
	cmd.Stdout, cmd.Stderr = log, log
	// A foreground cluster's actors die with its owner. An actor restarted
	// by another process cannot be tied to the owner, so it runs detached.
	cmd.SysProcAttr = sysProcAttr(p.st.Detached || p.st.Owner.PID != os.Getpid())
	if err := startPinned(cmd, a.CPUs); err != nil {
		return fmt.Errorf("%s: start %s: %w", a.Name, p.st.Binary, err)
	}
	c := &child{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit is reported through ProcessState
		c.exit = cmd.ProcessState.String()
		p.addUsage(a.Name, cmd.ProcessState)
		close(c.done)
	}()
	p.children[a.Name] = c
	a.PID = c.pid
	return nil
}

// runningLocked reports whether a's recorded process is alive. Caller holds
// p.mu.
func (p *Provider) runningLocked(a *actorState) bool {
	if a.PID == 0 {
		return false
	}
	if c, ok := p.children[a.Name]; ok && c.pid == a.PID {
		return !c.exited()
	}
	return processAlive(procRef{PID: a.PID, Args: a.Args})
}

// exitedFunc returns a check for whether a's process (as of now) has gone,
// and how.
func (p *Provider) exitedFunc(a actorState) func() (bool, error) {
	p.mu.Lock()
	c, ok := p.children[a.Name]
	p.mu.Unlock()
	if ok && c.pid == a.PID {
		return func() (bool, error) {
			if !c.exited() {
				return false, nil
			}
			return true, errors.New(c.exit)
		}
	}
	ref := procRef{PID: a.PID, Args: a.Args}
	return func() (bool, error) {
		if processAlive(ref) {
			return false, nil
		}
		return true, fmt.Errorf("pid %d is gone", ref.PID)
	}
}

// waitExit waits until a's process (pid as recorded in a) has exited.
func (p *Provider) waitExit(ctx context.Context, a actorState) error {
	p.mu.Lock()
	c, ok := p.children[a.Name]
	p.mu.Unlock()
	if ok && c.pid == a.PID {
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("pid %d still running: %w", a.PID, context.Cause(ctx))
		}
	}
	return waitGone(ctx, procRef{PID: a.PID, Args: a.Args})
}

// markStopped records that a's process (the one with pid) is gone.
func (p *Provider) markStopped(name string, pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == nil {
		return nil
	}
	a, err := p.st.actor(name)
	if err != nil || a.PID != pid {
		return nil // restarted or forgotten meanwhile
	}
	a.PID = 0
	return saveState(p.cfg.StateDir, p.st)
}

// loadedLocked makes sure p.st reflects the state directory: loaded when
// this Provider has no cluster in memory, read again when another process
// (kstep supervise restarting an actor) has written cluster.json since.
// Every change this Provider makes to p.st is saved under the same lock,
// so a newer file never loses one. Caller holds p.mu.
func (p *Provider) loadedLocked() error {
	fi, ferr := os.Stat(statePath(p.cfg.StateDir))
	if p.st != nil && (ferr != nil || (p.stFile != nil && os.SameFile(fi, p.stFile))) {
		return nil
	}
	st, err := loadState(p.cfg.StateDir)
	if err != nil {
		if p.st != nil {
			return nil
		}
		return err
	}
	if st == nil {
		if p.st != nil {
			return nil
		}
		return fmt.Errorf("%w recorded in %s", provider.ErrNoCluster, p.cfg.StateDir)
	}
	p.st, p.stFile = st, fi
	return nil
}

// Start starts a stopped actor again with its recorded argv: the same ports,
// the same data directory, its log continued. It returns once the actor is
// ready.
func (p *Provider) Start(ctx context.Context, name string) error {
	p.mu.Lock()
	if err := p.loadedLocked(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", name, err)
	}
	a, err := p.st.actor(name)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start: %w", err)
	}
	if p.runningLocked(a) {
		p.mu.Unlock()
		return fmt.Errorf("start %s: pid %d: %w", name, a.PID, provider.ErrActorRunning)
	}
	if err := p.spawnLocked(a, false); err != nil {
		p.mu.Unlock()
		return err
	}
	snapshot := *a
	err = saveState(p.cfg.StateDir, p.st)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return provider.WaitReady(ctx, snapshot.Actor, snapshot.ReadyURL, p.cfg.ReadyTimeout, p.exitedFunc(snapshot))
}

// Stop sends sig to the actor. After SIGTERM or SIGINT it also sends SIGCONT,
// so a paused actor gets to handle the signal. For SIGKILL, SIGTERM and
// SIGINT it waits until the process has exited (and is reaped, if this
// Provider started it); for SIGSTOP and SIGCONT until the process is paused
// or running again (on Linux, where /proc shows it).
func (p *Provider) Stop(ctx context.Context, name string, sig os.Signal) error {
	s, err := toSyscall(sig)
	if err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	p.mu.Lock()
	if err := p.loadedLocked(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("stop %s: %w", name, err)
	}
	a, err := p.st.actor(name)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("stop: %w", err)
	}
	if !p.runningLocked(a) {
		p.mu.Unlock()
		return fmt.Errorf("stop %s: %w", name, provider.ErrActorNotRunning)
	}
	snapshot := *a
	p.mu.Unlock()

	if err := signalProcess(snapshot.PID, s); err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	if s == syscall.SIGTERM || s == syscall.SIGINT {
		if err := signalProcess(snapshot.PID, syscall.SIGCONT); err != nil {
			return fmt.Errorf("stop %s: %w", name, err)
		}
	}
	if s == syscall.SIGSTOP || s == syscall.SIGCONT {
		if err := waitPaused(ctx, snapshot.PID, s == syscall.SIGSTOP); err != nil {
			return fmt.Errorf("stop %s after %v: %w", name, s, err)
		}
		return nil
	}
	if !terminates(s) {
		return nil
	}
	if err := p.waitExit(ctx, snapshot); err != nil {
		return fmt.Errorf("stop %s after %v: %w", name, s, err)
	}
	if snapshot.Role == provider.RoleNode && s == syscall.SIGKILL {
		// A machine that loses its power loses its pods: the shims (and the
		// containers under them) outlive `kstep node` by design, so they
		// go now, as every process of a killed node container does.
		if err := reapOrphanPods(snapshot.DataDir); err != nil {
			return fmt.Errorf("stop %s: %w", name, err)
		}
	}
	return p.markStopped(name, snapshot.PID)
}

// Down stops the cluster: apiservers first, then etcd members; each group
// gets SIGTERM, then SIGKILL after the grace period. A foreground cluster
// whose owner is another live process is stopped by asking the owner
// (SIGTERM) first. Down forgets the cluster (removes cluster.json) and keeps
// logs and data; it is a no-op when no cluster is recorded.
func (p *Provider) Down(ctx context.Context) error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()

	p.mu.Lock()
	st, err := loadState(p.cfg.StateDir)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("down: %w", err)
	}
	if st != nil {
		p.st = st
	}
	if p.st == nil {
		p.mu.Unlock()
		return nil
	}
	owner, sup := p.st.Owner, p.st.Supervisor
	foreign := !p.st.Detached && owner.PID != os.Getpid() && processAlive(owner)
	p.mu.Unlock()

	var errs []error
	if sup != nil && processAlive(*sup) {
		// The supervisor goes first, or it would start what Down stops.
		if err := signalProcess(sup.PID, syscall.SIGTERM); err != nil {
			errs = append(errs, fmt.Errorf("down: stop the supervisor: %w", err))
		}
		gctx, cancel := context.WithTimeout(ctx, p.cfg.StopGrace)
		if err := waitGone(gctx, *sup); err != nil {
			_ = signalProcess(sup.PID, syscall.SIGKILL)
		}
		cancel()
	}
	if foreign {
		// The owner stops its actors in order and removes cluster.json.
		if err := signalProcess(owner.PID, syscall.SIGTERM); err != nil {
			errs = append(errs, fmt.Errorf("down: ask owner: %w", err))
		}
		gctx, cancel := context.WithTimeout(ctx, 2*p.cfg.StopGrace)
		_ = waitGone(gctx, owner) // whatever is left is stopped below
		cancel()
	}
	if err := p.stopAll(ctx, p.cfg.StopGrace); err != nil {
		errs = append(errs, fmt.Errorf("down: %w", err))
	}
	p.mu.Lock()
	p.st = nil
	if err := removeState(p.cfg.StateDir); err != nil {
		errs = append(errs, fmt.Errorf("down: %w", err))
	}
	p.mu.Unlock()
	return errors.Join(errs...)
}

// stopAll stops every actor in provider.Shutdown's order; pods that
// killed nodes left behind are reaped after the nodes.
func (p *Provider) stopAll(ctx context.Context, grace time.Duration) error {
	p.mu.Lock()
	var comps []provider.Component
	if p.st != nil {
		comps = p.st.components()
	}
	p.mu.Unlock()
	return provider.Shutdown(ctx, comps, grace, p.stopGroup, func() error { return reapOrphanPods(p.cfg.StateDir) })
}

// stopGroup sends SIGTERM to the running actors among names, waits up to
// grace for them to exit, then SIGKILLs the rest.
func (p *Provider) stopGroup(ctx context.Context, names []string, grace time.Duration) error {
	p.mu.Lock()
	var running []actorState
	for _, name := range names {
		if p.st == nil {
			break
		}
		if a, err := p.st.actor(name); err == nil && p.runningLocked(a) {
			running = append(running, *a)
		}
	}
	p.mu.Unlock()

	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, a := range running {
		wg.Go(func() {
			if err := p.terminate(ctx, a, grace); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// terminate stops one actor: SIGTERM (and SIGCONT, in case it is paused),
// then SIGKILL if it is still running after grace.
func (p *Provider) terminate(ctx context.Context, a actorState, grace time.Duration) error {
	for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT} {
		if err := signalProcess(a.PID, s); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	gctx, cancel := context.WithTimeout(ctx, grace)
	err := p.waitExit(gctx, a)
	cancel()
	if err != nil {
		if err := signalProcess(a.PID, syscall.SIGKILL); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		kctx, cancel := context.WithTimeout(ctx, killWait)
		defer cancel()
		if err := p.waitExit(kctx, a); err != nil {
			return fmt.Errorf("%s: after SIGKILL: %w", a.Name, err)
		}
	}
	return p.markStopped(a.Name, a.PID)
}

// Actors lists the cluster's actors, etcd members first; PID is 0 for an
// actor that is not running. It is empty when no cluster is recorded.
func (p *Provider) Actors() []provider.Actor {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loadedLocked() != nil {
		return nil
	}
	out := make([]provider.Actor, 0, len(p.st.Actors))
	for i := range p.st.Actors {
		a := p.st.Actors[i].Actor
		if !p.runningLocked(&p.st.Actors[i]) {
			a.PID = 0
		}
		out = append(out, a)
	}
	return out
}

// Kubeconfig is the path of the cluster's kubeconfig, "" before Up has
// finished or when the cluster has no apiserver.
func (p *Provider) Kubeconfig() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loadedLocked() != nil {
		return ""
	}
	return p.st.Kubeconfig
}

// Purge deletes what clusters left in the state directory (etcd data, real
// nodes' data, logs, kubeconfig, cluster.json, traces: where `kstep up
// --profile` puts the step events) and the directory itself if nothing
// else is in it. It refuses while a recorded cluster has a live actor.
func (p *Provider) Purge() error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	dir := p.cfg.StateDir
	if st, err := loadState(dir); err == nil && st != nil {
		p.st = st
	}
	if p.st != nil {
		for i := range p.st.Actors {
			if a := &p.st.Actors[i]; p.runningLocked(a) {
				return fmt.Errorf("purge %s: %w: %s (pid %d) is alive", dir, provider.ErrClusterRunning, a.Name, a.PID)
			}
		}
	}
	// A real node's data (<state>/nodes/<node>: containerd's root and
	// state) is removed only once nothing is mounted in it: what its pods
	// left (Down unmounts it too) is unmounted first, so the removal never
	// descends into a mount (a pod's hostPath volume is the host's own
	// directory).
	nodes := filepath.Join(dir, "nodes")
	if _, err := os.Lstat(nodes); err == nil {
		if err := reapOrphanPods(nodes); err != nil {
			return fmt.Errorf("purge %s: %w", dir, err)
		}
		if left := mountsUnder(nodes); len(left) > 0 {
			return fmt.Errorf("purge %s: still mounted under it: %s", dir, strings.Join(left, ", "))
		}
	}
	// Only what kstep creates, so a mistaken --state-dir cannot wipe a
	// directory that merely exists.
	for _, name := range []string{"etcd", "nodes", "logs", "kubeconfig", "kubeconfigs", "pki", "traces", "cluster.json"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("purge %s: %w", dir, err)
		}
	}
	p.st = nil
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("purge %s: %w", dir, err)
	}
	return nil
}

// checkRealNodes says exactly why real nodes cannot run here, and what to
// use instead.
func (p *Provider) checkRealNodes() error {
	if p.cfg.RealNodes == 0 {
		return nil
	}
	cfg := p.cfg
	cfg.Binary = p.binary
	return CanRunRealNodes(cfg)
}

// CanRunRealNodes reports why real nodes cannot run on this machine with
// cfg's binary, or nil when they can: they need Linux, root, and the node
// binaries next to the kstep binary (make build).
func CanRunRealNodes(cfg provider.Spec) error {
	const instead = "; use hollow nodes (kubelets over a simulated runtime) instead"
	if runtime.GOOS != "linux" {
		return fmt.Errorf("real nodes need Linux (this is %s)%s", runtime.GOOS, instead)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("real nodes need root: containerd mounts, creates network namespaces and bridges%s", instead)
	}
	binary := cfg.Binary
	if binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("locating the kstep binary: %w", err)
		}
		binary = exe
	}
	bin := filepath.Dir(binary)
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc", "bridge", "host-local", "loopback", "portmap", "kstep-app", "kstep-pause"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Errorf("real nodes need %s next to %s (run make build, which runs make node-bins): %w%s", b, binary, err, instead)
		}
	}
	return nil
}
