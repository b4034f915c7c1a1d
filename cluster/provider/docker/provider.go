package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"golang.org/x/sync/errgroup"

	"github.com/kstep-dev/kstep/cluster/provider"
)

func init() {
	// Ryuk, testcontainers' reaper, is an image that cannot be pulled here;
	// kstep removes what it creates itself (Down, and the sweep in Up). The
	// variable is read once, at the first testcontainers call, so it is set
	// before any can happen.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	// testcontainers narrates every container to stderr; kstep says what
	// matters through Config.Log.
	tclog.SetDefault(tclog.NewNoopLogger())
}

var _ provider.Provider = (*Provider)(nil)

// Provider runs a cluster as containers. The cluster is recorded in the
// state directory (docker.json) and labelled in Docker, so a Provider made
// by New in another process (kstep down, the chaos engine) can stop, signal
// and restart its actors too. It is safe for concurrent use; Up and Down
// are serialized.
type Provider struct {
	cfg  provider.Spec
	host hostBin
	logf func(format string, a ...any)

	lifecycle sync.Mutex

	mu  sync.Mutex
	st  *clusterState
	cli *testcontainers.DockerClient

	// nodeMode is how node containers get their privileges: "" until the
	// first node decides, then "privileged" or "fallback".
	nodeModeMu sync.Mutex
	nodeMode   string

	// usage sums each actor's container usage, sampled before every stop.
	usage provider.Accounts
}

func init() {
	provider.Register(provider.Driver{
		Name:      provider.Docker,
		New:       func(s provider.Spec) (provider.Provider, error) { return New(s) },
		Available: Available,
		Recorded:  HasCluster,
		RealNodes: CanRunRealNodes,
	})
}

// New returns a Provider for the cluster in cfg.StateDir, loading the
// cluster recorded there if there is one. It does not talk to Docker.
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
	bin, err := hostBinOf(cfg.Binary)
	if err != nil {
		return nil, err
	}
	st, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	out := cfg.Log
	logf := func(format string, a ...any) { fmt.Fprintf(out, "kstep docker: "+format+"\n", a...) }
	return &Provider{cfg: cfg, host: bin, logf: logf, st: st}, nil
}

// Name is "docker".
func (p *Provider) Name() string { return provider.Docker }

// StateDir is the absolute path of the cluster's state directory.
func (p *Provider) StateDir() string { return p.cfg.StateDir }

// Available reports whether a Docker daemon answers, and if not, why.
func Available(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

// client returns the Docker client, connecting on first use.
func (p *Provider) client(ctx context.Context) (*testcontainers.DockerClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cli != nil {
		return p.cli, nil
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	p.cli = cli
	return cli, nil
}

// clusterID names the cluster of a state directory in Docker.
func clusterID(stateDir string) string {
	h := sha256.Sum256([]byte(stateDir))
	return hex.EncodeToString(h[:])[:10]
}

// Up builds the images (if their content changed), creates the network,
// and starts the etcd members, then the apiservers, then the rest, each
// waited for until ready. It refuses (ErrClusterRunning) while the state
// directory's cluster is alive and owned by another process or detached;
// otherwise it first removes what that cluster, and any kstep cluster
// whose owner has died, left in Docker. On failure it removes what it
// created.
func (p *Provider) Up(ctx context.Context) (err error) {
	if err := p.cfg.Validate(); err != nil {
		return err
	}
	if p.cfg.RealNodes > 0 {
		if err := CanRunRealNodes(p.cfg); err != nil {
			return err
		}
	}
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	cli, err := p.client(ctx)
	if err != nil {
		return err
	}
	id := clusterID(p.cfg.StateDir)
	if err := p.checkNotRunning(ctx, cli, id); err != nil {
		return err
	}
	if err := sweep(ctx, cli, id, p.logf); err != nil {
		return fmt.Errorf("sweep stale kstep resources: %w", err)
	}
	images, err := p.images(ctx, cli)
	if err != nil {
		return err
	}
	dirs := []string{filepath.Join(p.cfg.StateDir, "logs", "containerd"), filepath.Join(p.cfg.StateDir, "kubeconfigs")}
	if p.cfg.TraceDir != "" {
		dirs = append(dirs, p.cfg.TraceDir)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := os.Remove(provider.KubeconfigPath(p.cfg.StateDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove old kubeconfig: %w", err)
	}
	ports, err := provider.FreePorts(planSize(p.cfg))
	if err != nil {
		return err
	}
	st := &clusterState{Version: stateVersion, ID: id, Detached: p.cfg.Detach, Owner: os.Getpid(),
		CreatedAt: time.Now().UTC(), Actors: plan(p.cfg, id, images, ports)}
	st.Network = "kstep-" + id

	defer func() {
		if err == nil {
			return
		}
		// Tear down with a fresh context: ctx may be why Up failed.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := p.remove(tctx, cli, st, 2*time.Second); derr != nil {
			err = errors.Join(err, fmt.Errorf("removing the partly started cluster: %w", derr))
		}
		p.mu.Lock()
		p.st = nil
		_ = removeState(p.cfg.StateDir)
		p.mu.Unlock()
	}()

	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(p.labels(st, "")))
	if err != nil {
		return fmt.Errorf("create network: %w", err)
	}
	st.Network = nw.Name
	p.mu.Lock()
	p.st = st
	err = saveState(p.cfg.StateDir, st)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	// The same PKI, TLS, authentication, RBAC and node identities as every
	// provider: the serving certificate also names the apiservers as the
	// containers reach them.
	secure := !p.cfg.Insecure
	comps := st.components()
	if secure {
		hosts := provider.ByRole(comps)[provider.RoleAPIServer]
		if err := provider.WritePKI(p.cfg.StateDir, comps, hosts, p.cfg.Tokens); err != nil {
			return err
		}
	}
	if err := provider.WriteKubeconfigs(p.cfg.StateDir, comps, secure, serverURL(secure, p.cfg.LinkProxies)); err != nil {
		return err
	}
	return provider.Boot(ctx, comps, p.startAll, p.writeKubeconfig)
}

// checkNotRunning refuses to replace a live cluster someone else owns.
func (p *Provider) checkNotRunning(ctx context.Context, cli client.APIClient, id string) error {
	p.mu.Lock()
	st, err := loadState(p.cfg.StateDir)
	p.mu.Unlock()
	if err != nil || st == nil {
		return err
	}
	if !st.Detached && st.Owner != os.Getpid() && !pidAlive(st.Owner) {
		return nil // its owner died: what is left is stale
	}
	l, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", labelCluster+"="+id)})
	if err != nil {
		return fmt.Errorf("docker: list containers: %w", err)
	}
	if len(l.Items) > 0 {
		return fmt.Errorf("%w in %s: %d container(s) running; run `kstep down --state-dir %s` first",
			provider.ErrClusterRunning, p.cfg.StateDir, len(l.Items), p.cfg.StateDir)
	}
	return nil
}

// images builds (or finds) the images the cluster needs, by kind.
func (p *Provider) images(ctx context.Context, cli client.APIClient) (map[string]string, error) {
	specs := []imageSpec{controlPlaneImage}
	if p.cfg.RealNodes > 0 {
		specs = append(specs, nodeImage)
	}
	out := map[string]string{}
	for _, s := range specs {
		ref, err := ensureImage(ctx, cli, s, p.host, p.logf)
		if err != nil {
			return nil, err
		}
		out[s.kind] = ref
	}
	return out, nil
}

// writeKubeconfig writes the host's kubeconfig: a context per apiserver
// at its published port.
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

// startAll creates and starts the named actors' containers (fresh logs)
// and waits until all are ready; the first failure cancels the rest.
// Members of a new etcd cluster are ready only together, so everything
// runs concurrently.
func (p *Provider) startAll(ctx context.Context, names []string) error {
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	g, ctx := errgroup.WithContext(ctx)
	for _, name := range names {
		a, err := st.actor(name)
		if err != nil {
			return err
		}
		g.Go(func() error {
			if err := p.create(ctx, st, *a); err != nil {
				return err
			}
			return p.waitReady(ctx, *a)
		})
	}
	return g.Wait()
}

// waitReady polls the actor's health endpoint through its published port.
func (p *Provider) waitReady(ctx context.Context, a actorState) error {
	cli, err := p.client(ctx)
	if err != nil {
		return err
	}
	exited := func() (bool, error) {
		ins, err := cli.ContainerInspect(ctx, a.Container, client.ContainerInspectOptions{})
		if err != nil {
			return true, err
		}
		if s := ins.Container.State; s != nil && !s.Running {
			return true, fmt.Errorf("container %s %s, exit code %d %s", a.Container, s.Status, s.ExitCode, s.Error)
		}
		return false, nil
	}
	return provider.WaitReady(ctx, a.Actor, a.ReadyURL, p.cfg.ReadyTimeout, exited)
}

// Start starts a stopped actor's container again: the same argv, ports,
// volume and network, its log continued. It returns once the actor is
// ready.
func (p *Provider) Start(ctx context.Context, name string) error {
	a, cli, err := p.lookup(ctx, "start", name)
	if err != nil {
		return err
	}
	s, err := p.containerState(ctx, cli, a)
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	if s.Running {
		return fmt.Errorf("start %s: %w", name, provider.ErrActorRunning)
	}
	if f, err := os.OpenFile(a.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "--- kstep: starting %s again at %s ---\n", name, time.Now().UTC().Format(time.RFC3339Nano))
		f.Close()
	}
	if _, err := cli.ContainerStart(ctx, a.Container, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	return p.waitReady(ctx, a)
}

// Stop sends sig to the actor's main process (docker kill). For SIGKILL,
// SIGTERM and SIGINT it waits until the container has stopped. SIGSTOP and
// SIGCONT are docker pause and unpause: the container's cgroup is frozen,
// every process in it. A paused container is thawed before it is signalled.
func (p *Provider) Stop(ctx context.Context, name string, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok || s == 0 {
		return fmt.Errorf("stop %s: signal %v is not a process signal", name, sig)
	}
	switch s {
	case syscall.SIGSTOP:
		return p.Pause(ctx, name)
	case syscall.SIGCONT:
		return p.Unpause(ctx, name)
	}
	a, cli, err := p.lookup(ctx, "stop", name)
	if err != nil {
		return err
	}
	st, err := p.containerState(ctx, cli, a)
	if err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	if !st.Running {
		return fmt.Errorf("stop %s: %w", name, provider.ErrActorNotRunning)
	}
	if st.Paused {
		if _, err := cli.ContainerUnpause(ctx, a.Container, client.ContainerUnpauseOptions{}); err != nil {
			return fmt.Errorf("stop %s: unpause: %w", name, err)
		}
	}
	if terminates(s) {
		p.sampleUsage(ctx, cli, a)
	}
	if _, err := cli.ContainerKill(ctx, a.Container, client.ContainerKillOptions{Signal: strconv.Itoa(int(s))}); err != nil {
		return fmt.Errorf("stop %s: kill -%d: %w", name, s, err)
	}
	if !terminates(s) {
		return nil
	}
	w := cli.ContainerWait(ctx, a.Container, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case <-w.Result:
		return nil
	case err := <-w.Error:
		return fmt.Errorf("stop %s after %v: %w", name, s, err)
	}
}

// Pause freezes the actor's container (docker pause): the cgroup freezer
// stops every process in it at once.
func (p *Provider) Pause(ctx context.Context, name string) error {
	return p.setPaused(ctx, name, true)
}

// Unpause thaws a paused actor's container.
func (p *Provider) Unpause(ctx context.Context, name string) error {
	return p.setPaused(ctx, name, false)
}

func (p *Provider) setPaused(ctx context.Context, name string, paused bool) error {
	op := map[bool]string{true: "pause", false: "unpause"}[paused]
	a, cli, err := p.lookup(ctx, op, name)
	if err != nil {
		return err
	}
	if paused {
		_, err = cli.ContainerPause(ctx, a.Container, client.ContainerPauseOptions{})
	} else {
		_, err = cli.ContainerUnpause(ctx, a.Container, client.ContainerUnpauseOptions{})
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, name, err)
	}
	return nil
}

// Partition cuts the actor off. provider.ScopePeers cuts an etcd member
// off from its peers through the etcd-peer links inside the members (as on
// every provider); provider.ScopeAll disconnects the actor's container from
// the cluster's network: it reaches no peer and no peer reaches it (its
// published port goes too) until Heal.
func (p *Provider) Partition(ctx context.Context, name string, scope provider.Scope) error {
	a, cli, err := p.lookup(ctx, "partition", name)
	if err != nil {
		return err
	}
	switch scope {
	case provider.ScopePeers:
		if a.Role != provider.RoleEtcd {
			return fmt.Errorf("partition %s: only etcd members have peers to be cut from (scope %q); take the actor off the network with scope %q: %w",
				name, scope, provider.ScopeAll, provider.ErrUnsupported)
		}
		if err := provider.SetPeerCut(ctx, p.cfg.StateDir, p.Actors(), name, true); err != nil {
			return fmt.Errorf("partition %s: %w", name, err)
		}
		return nil
	case provider.ScopeAll:
		if _, err := cli.NetworkDisconnect(ctx, p.network(), client.NetworkDisconnectOptions{Container: a.Container, Force: true}); err != nil {
			return fmt.Errorf("partition %s: %w", name, err)
		}
		return nil
	}
	return fmt.Errorf("partition %s: scope %q: %w", name, scope, provider.ErrUnsupported)
}

// Heal undoes Partition, whichever scope it had: a container off the
// network is connected again under its name, a member's peer cut lifted.
func (p *Provider) Heal(ctx context.Context, name string) error {
	a, cli, err := p.lookup(ctx, "heal", name)
	if err != nil {
		return err
	}
	ins, err := cli.ContainerInspect(ctx, a.Container, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	nw := p.network()
	if ns := ins.Container.NetworkSettings; ns != nil {
		if _, on := ns.Networks[nw]; !on {
			if _, err := cli.NetworkConnect(ctx, nw, client.NetworkConnectOptions{Container: a.Container,
				EndpointConfig: &network.EndpointSettings{Aliases: []string{a.Alias}}}); err != nil {
				return fmt.Errorf("heal %s: %w", name, err)
			}
			return nil
		}
	}
	if a.Role == provider.RoleEtcd {
		if err := provider.SetPeerCut(ctx, p.cfg.StateDir, p.Actors(), name, false); err != nil {
			return fmt.Errorf("heal %s: %w", name, err)
		}
	}
	return nil
}

func (p *Provider) network() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.Network
}

// Logs opens the actor's log file: its container's stdout and stderr,
// every start of it.
func (p *Provider) Logs(_ context.Context, name string) (io.ReadCloser, error) {
	a, err := p.actorNamed("logs", name)
	if err != nil {
		return nil, err
	}
	return os.Open(a.LogPath)
}

// actorNamed finds an actor of the recorded cluster; op and name prefix
// the error.
func (p *Provider) actorNamed(op, name string) (actorState, error) {
	st, err := p.recorded()
	var a *actorState
	if err == nil {
		a, err = st.actor(name)
	}
	if err != nil {
		return actorState{}, fmt.Errorf("%s %s: %w", op, name, err)
	}
	return *a, nil
}

// lookup is actorNamed and the Docker client.
func (p *Provider) lookup(ctx context.Context, op, name string) (actorState, *testcontainers.DockerClient, error) {
	a, err := p.actorNamed(op, name)
	if err != nil {
		return a, nil, err
	}
	cli, err := p.client(ctx)
	return a, cli, err
}

// containerState is the state of a's container; a container that is gone
// is not running.
func (p *Provider) containerState(ctx context.Context, cli client.APIClient, a actorState) (container.State, error) {
	ins, err := cli.ContainerInspect(ctx, a.Container, client.ContainerInspectOptions{})
	if err != nil {
		return container.State{}, err
	}
	if ins.Container.State == nil {
		return container.State{}, nil
	}
	return *ins.Container.State, nil
}

// recorded is the cluster recorded in the state directory, read once.
func (p *Provider) recorded() (*clusterState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == nil {
		st, err := loadState(p.cfg.StateDir)
		switch {
		case err != nil:
			return nil, err
		case st == nil:
			return nil, fmt.Errorf("%w recorded in %s", provider.ErrNoCluster, p.cfg.StateDir)
		}
		p.st = st
	}
	return p.st, nil
}

// Actors lists the cluster's actors, etcd members first; PID is the
// container's main process as the host sees it, 0 when it is not running.
func (p *Provider) Actors() []provider.Actor {
	st, err := p.recorded()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, cerr := p.client(ctx)
	out := make([]provider.Actor, 0, len(st.Actors))
	for _, a := range st.Actors {
		if cerr == nil {
			if s, err := p.containerState(ctx, cli, a); err == nil && s.Running {
				a.PID = s.Pid
			}
		}
		out = append(out, a.Actor)
	}
	return out
}

// Kubeconfig is the path of the host's kubeconfig, "" before Up has
// finished starting the apiservers or when the cluster has none.
func (p *Provider) Kubeconfig() string {
	st, err := p.recorded()
	if err != nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return st.Kubeconfig
}

// Down stops the cluster (apiserver clients, then apiservers and the
// registry, then etcd members one at a time, each SIGTERM then SIGKILL
// after the grace period) and removes its containers, network and volumes.
// A foreground cluster whose owner is another live process is stopped by
// asking the owner (SIGTERM) first. Logs, traces and kubeconfigs stay; it
// is a no-op when no cluster is recorded.
func (p *Provider) Down(ctx context.Context) error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	// Read docker.json again: another process may have replaced it.
	p.mu.Lock()
	p.st = nil
	p.mu.Unlock()
	st, err := p.recorded()
	if errors.Is(err, provider.ErrNoCluster) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	if !st.Detached && st.Owner != os.Getpid() && pidAlive(st.Owner) {
		// The owner stops its cluster and removes docker.json.
		if err := syscall.Kill(st.Owner, syscall.SIGTERM); err == nil {
			deadline := time.Now().Add(2*p.cfg.StopGrace + 30*time.Second)
			for pidAlive(st.Owner) && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	cli, err := p.client(ctx)
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	err = p.remove(ctx, cli, st, p.cfg.StopGrace)
	p.mu.Lock()
	p.st = nil
	err = errors.Join(err, removeState(p.cfg.StateDir))
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	return nil
}

// remove stops st's containers in provider.Shutdown's order (each sampled
// for its usage first), then removes them, the network and the volumes (by
// label, so what a failed Up created is found too).
func (p *Provider) remove(ctx context.Context, cli client.APIClient, st *clusterState, grace time.Duration) error {
	stop := func(ctx context.Context, names []string, grace time.Duration) error {
		var wg sync.WaitGroup
		for _, n := range names {
			a, err := st.actor(n)
			if err != nil {
				continue
			}
			wg.Go(func() {
				secs := int(grace.Seconds())
				_, _ = cli.ContainerUnpause(ctx, a.Container, client.ContainerUnpauseOptions{})
				if s, err := p.containerState(ctx, cli, *a); err == nil && s.Running {
					p.sampleUsage(ctx, cli, *a)
				}
				_, _ = cli.ContainerStop(ctx, a.Container, client.ContainerStopOptions{Timeout: &secs})
			})
		}
		wg.Wait()
		return nil
	}
	_ = provider.Shutdown(ctx, st.components(), grace, stop, nil)
	return removeCluster(ctx, cli, st.ID)
}

// Containers lists the cluster's containers as Docker has them (by the
// cluster's label, running or not, recorded in docker.json or not): actor
// name → container ID.
func (p *Provider) Containers(ctx context.Context) (map[string]string, error) {
	cli, err := p.client(ctx)
	if err != nil {
		return nil, err
	}
	found, err := resources(ctx, cli, make(client.Filters).Add("label", labelCluster+"="+clusterID(p.cfg.StateDir)))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range found {
		if r.kind == "container" {
			out[r.labels[labelActor]] = r.id
		}
	}
	return out, nil
}

// Purge deletes what clusters left in the state directory (logs,
// kubeconfigs, docker.json, traces: where `kstep up --profile` puts the
// step events) and the directory itself if nothing else is in
// it. It refuses while the recorded cluster has containers.
func (p *Provider) Purge() error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	dir := p.cfg.StateDir
	if HasCluster(dir) {
		return fmt.Errorf("purge %s: %w: run kstep down first", dir, provider.ErrClusterRunning)
	}
	for _, name := range []string{"logs", "kubeconfigs", "kubeconfig", "pki", "traces", StateFile} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("purge %s: %w", dir, err)
		}
	}
	// The directory itself goes only when nothing else is in it.
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		return os.Remove(dir)
	}
	return nil
}

// create creates and starts a's container with testcontainers-go.
func (p *Provider) create(ctx context.Context, st *clusterState, a actorState) error {
	cli, err := p.client(ctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(a.LogPath, nil, 0o644); err != nil {
		return fmt.Errorf("%s: log: %w", a.Name, err)
	}
	mounts := []mount.Mount{
		{Type: mount.TypeBind, Source: filepath.Dir(a.LogPath), Target: filepath.Dir(a.LogPath)},
	}
	if p.cfg.TraceDir != "" {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: p.cfg.TraceDir, Target: p.cfg.TraceDir})
	}
	// Of the state directory's credentials, the container sees only the
	// files its own flags name (least privilege): no other actor's key or
	// kubeconfig, no CA key, no etcd certificate but its own.
	mounts = append(mounts, credentialMounts(a.Component, p.cfg.StateDir)...)
	if a.Volume != "" {
		if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: a.Volume, Labels: p.labels(st, a.Name)}); err != nil {
			return fmt.Errorf("%s: create volume: %w", a.Name, err)
		}
		mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: a.Volume, Target: a.VolumeDir})
	}
	port := network.MustParsePort(strconv.Itoa(a.Port) + "/tcp")
	bindings := network.PortMap{port: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(a.HostPort)}}}
	exposed := []string{port.String()}
	if a.MetricsPort != 0 {
		mp := network.MustParsePort(strconv.Itoa(a.MetricsPort) + "/tcp")
		bindings[mp] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(a.MetricsHostPort)}}
		exposed = append(exposed, mp.String())
	}
	base := func(hc *container.HostConfig) {
		hc.Init = new(true)
		if p.cfg.Supervise && st.Detached {
			// dockerd is the supervisor that outlives `kstep up -d`.
			hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyAlways}
		}
		hc.Mounts = mounts
		hc.PortBindings = bindings
		// Topology.ActorCPUs: every container on those CPUs.
		hc.Resources.CpusetCpus = p.cfg.Topology.ActorCPUs
	}
	req := testcontainers.ContainerRequest{
		Image:          a.Image,
		Name:           a.Container,
		Cmd:            a.Component.Args,
		Env:            map[string]string{"KSTEP_LOG_FILE": a.LogPath},
		Labels:         p.labels(st, a.Name),
		ExposedPorts:   exposed,
		Networks:       []string{st.Network},
		NetworkAliases: map[string][]string{st.Network: {a.Alias}},
	}
	if a.Role != provider.RoleNode {
		req.HostConfigModifier = base
		return p.run(ctx, cli, req)
	}
	return p.runNode(ctx, cli, req, base)
}

// credentialMounts bind-mount c's own credential files (Component.Files),
// read-only, at the paths its flags name.
func credentialMounts(c provider.Component, stateDir string) []mount.Mount {
	var out []mount.Mount
	for _, f := range c.Files(stateDir) {
		out = append(out, mount.Mount{Type: mount.TypeBind, Source: f, Target: f, ReadOnly: true})
	}
	return out
}

// run creates and starts a container; a container that was created but
// did not start is removed.
func (p *Provider) run(ctx context.Context, cli client.APIClient, req testcontainers.ContainerRequest) error {
	_, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if err != nil {
		_, _ = cli.ContainerRemove(context.WithoutCancel(ctx), req.Name, client.ContainerRemoveOptions{Force: true})
		return fmt.Errorf("%s: %w", req.Name, err)
	}
	return nil
}

// labels are what every Docker resource of the cluster carries: how the
// sweep and Down find them, and whether they are stale.
func (p *Provider) labels(st *clusterState, actor string) map[string]string {
	l := map[string]string{
		labelManaged:  "true",
		labelCluster:  st.ID,
		labelStateDir: p.cfg.StateDir,
		labelOwner:    strconv.Itoa(st.Owner),
		labelDetached: strconv.FormatBool(st.Detached),
	}
	if actor != "" {
		l[labelActor] = actor
	}
	return l
}
