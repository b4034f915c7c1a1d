package process

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// kstepBinary returns the kstep binary under test, skipping the test when it
// is not given or belongs to another tier (docs/testing.md).
func kstepBinary(t *testing.T) string {
	t.Helper()
	testenv.Tier(t)
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		t.Skip("KSTEP_BIN is not set: run `make test`, or build bin/kstep and set KSTEP_BIN=$PWD/bin/kstep")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("KSTEP_BIN: %v", err)
	}
	return bin
}

// newCluster returns a Provider for a fresh state dir, with Down registered
// as cleanup so a failing test leaves no process behind.
func newCluster(t *testing.T, bin string, members, apiservers int, mutate ...func(*provider.Spec)) *Provider {
	t.Helper()
	cfg := provider.Spec{Topology: provider.DefaultTopology()}
	cfg.StateDir = t.TempDir()
	cfg.Binary = bin
	cfg.EtcdMembers = members
	cfg.APIServers = apiservers
	// These tests are about etcd and apiservers (some with a stand-in
	// binary); the leader-elected actors are tested end to end in test/e2e.
	cfg.ControllerManagers, cfg.Schedulers = 0, 0
	cfg.ReadyTimeout = 30 * time.Second
	cfg.StopGrace = 5 * time.Second
	for _, m := range mutate {
		m(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Down(ctx); err != nil {
			t.Errorf("cleanup Down: %v", err)
		}
	})
	return p
}

func actor(t *testing.T, p provider.Provider, name string) provider.Actor {
	t.Helper()
	for _, a := range p.Actors() {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no actor %q in %v", name, p.Actors())
	return provider.Actor{}
}

// etcdClient is kstep's etcd-admin client of p's members at endpoints.
func etcdClient(t *testing.T, p provider.Provider, endpoints ...string) *clientv3.Client {
	t.Helper()
	tlsCfg, err := provider.EtcdAdminTLS(p.StateDir(), p.Actors())
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsCfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client for %v: %v", endpoints, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// requireGone waits until none of pids exists any more (exited and reaped).
func requireGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				t.Fatalf("pid %d still exists: %s", pid, stat)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func pids(actors []provider.Actor) []int {
	var out []int
	for _, a := range actors {
		if a.PID != 0 {
			out = append(out, a.PID)
		}
	}
	return out
}

func TestEtcdMemberKilledAndRestartedCatchesUp(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	p := newCluster(t, bin, 3, 0)

	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	actors := p.Actors()
	if len(actors) != 3 {
		t.Fatalf("actors %v, want 3 etcd members", actors)
	}
	if p.Kubeconfig() != "" {
		t.Errorf("Kubeconfig() = %q without apiservers, want empty", p.Kubeconfig())
	}
	var endpoints []string
	for _, a := range actors {
		if a.Role != provider.RoleEtcd || a.PID == 0 {
			t.Fatalf("actor %+v: want a running etcd member", a)
		}
		endpoints = append(endpoints, a.Endpoint)
	}

	// Every member is healthy and sees the same leader.
	cli := etcdClient(t, p, endpoints...)
	var leader uint64
	for _, ep := range endpoints {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			t.Fatalf("status of %s: %v", ep, err)
		}
		if len(st.Errors) > 0 || st.Leader == 0 {
			t.Fatalf("member %s: leader %x, errors %v", ep, st.Leader, st.Errors)
		}
		if leader != 0 && st.Leader != leader {
			t.Errorf("member %s sees leader %x, others %x", ep, st.Leader, leader)
		}
		leader = st.Leader
	}
	if ml, err := cli.MemberList(ctx); err != nil || len(ml.Members) != 3 {
		t.Fatalf("member list: %v members, err %v", ml, err)
	}

	// A second Up on the same state dir refuses while the cluster is alive.
	other, err := New(provider.Spec{StateDir: p.StateDir(), Binary: bin, Topology: provider.Topology{EtcdMembers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Up(ctx); !errors.Is(err, provider.ErrClusterRunning) {
		t.Fatalf("second Up = %v, want ErrClusterRunning", err)
	}

	// Pause and resume a member.
	victim := actor(t, p, "etcd-1")
	if err := p.Stop(ctx, "etcd-1", syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP etcd-1: %v", err)
	}
	if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", victim.PID)); !strings.Contains(string(stat), ") T ") {
		t.Errorf("etcd-1 after SIGSTOP: stat %s, want state T", stat)
	}
	if err := p.Stop(ctx, "etcd-1", syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT etcd-1: %v", err)
	}

	if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", victim.PID)); strings.Contains(string(stat), ") T ") {
		t.Errorf("etcd-1 after SIGCONT: stat %s, want it running", stat)
	}

	// Kill a member, write through another, bring it back.
	vst, err := cli.Status(ctx, victim.Endpoint)
	if err != nil {
		t.Fatalf("status of etcd-1: %v", err)
	}
	if err := p.Stop(ctx, "etcd-1", syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL etcd-1: %v", err)
	}
	if got := actor(t, p, "etcd-1"); got.PID != 0 {
		t.Errorf("etcd-1 after SIGKILL has pid %d, want 0", got.PID)
	}
	requireGone(t, []int{victim.PID})
	if err := p.Stop(ctx, "etcd-1", syscall.SIGKILL); !errors.Is(err, provider.ErrActorNotRunning) {
		t.Errorf("Stop of a stopped actor = %v, want ErrActorNotRunning", err)
	}

	// If etcd-1 led, a write in flight to it times out (etcd's "request timed
	// out, possibly due to previous leader failure"); wait for a new leader.
	writer := etcdClient(t, p, actor(t, p, "etcd-0").Endpoint)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := writer.Status(ctx, actor(t, p, "etcd-0").Endpoint)
		if err == nil && st.Leader != 0 && st.Leader != vst.Header.MemberId {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader 30s after killing etcd-1: %v, %v", st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	put, err := writer.Put(ctx, "/kstep/while-etcd-1-was-down", "written")
	if err != nil {
		t.Fatalf("put through etcd-0 with etcd-1 down: %v", err)
	}

	if err := p.Start(ctx, "etcd-1"); err != nil {
		t.Fatalf("Start etcd-1: %v", err)
	}
	back := actor(t, p, "etcd-1")
	if back.PID == 0 || back.PID == victim.PID || back.Endpoint != victim.Endpoint {
		t.Fatalf("restarted etcd-1 = %+v, want a new pid on %s", back, victim.Endpoint)
	}
	if err := p.Start(ctx, "etcd-1"); !errors.Is(err, provider.ErrActorRunning) {
		t.Errorf("Start of a running actor = %v, want ErrActorRunning", err)
	}

	// The restarted member serves the write from its own state.
	reader := etcdClient(t, p, back.Endpoint)
	deadline = time.Now().Add(30 * time.Second)
	for {
		got, err := reader.Get(ctx, "/kstep/while-etcd-1-was-down", clientv3.WithSerializable())
		if err == nil && len(got.Kvs) == 1 && string(got.Kvs[0].Value) == "written" && got.Header.Revision >= put.Header.Revision {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd-1 did not catch up within 30s: %v, %v", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(back.LogPath)
	if !strings.Contains(string(log), "kstep: starting etcd-1 again") {
		t.Errorf("etcd-1's log does not mark the restart")
	}

	running := pids(p.Actors())
	if len(running) != 3 {
		t.Fatalf("running pids %v, want 3", running)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, running)
	if _, err := os.Stat(statePath(p.StateDir())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster.json after Down: %v, want it removed", err)
	}
	if got := p.Actors(); len(got) != 0 {
		t.Errorf("Actors() after Down = %v, want none", got)
	}
	if err := p.Purge(); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if _, err := os.Stat(p.StateDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state dir after Purge: %v, want it removed", err)
	}
}

// TestDetachedClusterStoppedByKstepDown stops a cluster from another process,
// the way a user's `kstep down` does.
func TestDetachedClusterStoppedByKstepDown(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := newCluster(t, bin, 1, 0, func(c *provider.Spec) { c.Detach = true })
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	running := pids(p.Actors())
	if sid, err := unix.Getsid(running[0]); err != nil || sid != running[0] {
		t.Errorf("detached etcd-0: session %d (%v), want its own session %d", sid, err, running[0])
	}

	out, err := exec.CommandContext(ctx, bin, "down", "--state-dir", p.StateDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("kstep down: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stopped 1 actor") {
		t.Errorf("kstep down said %q", out)
	}
	requireGone(t, running)
	if got := p.Actors(); len(got) != 0 && got[0].Running() {
		t.Errorf("Actors() after kstep down = %v, want nothing running", got)
	}
}

func TestUpFailureNamesActorAndCleansUp(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// etcd refuses an unknown log level at startup (the topology's rules
	// pass it on: they are etcd's to check).
	p := newCluster(t, bin, 3, 0, func(c *provider.Spec) { c.Etcd.LogLevel = "loudest" })
	err := p.Up(ctx)
	if err == nil {
		t.Fatal("Up succeeded with an invalid election timeout")
	}
	for _, want := range []string{"etcd-", "exited before it was ready", "loudest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Up error does not mention %q:\n%v", want, err)
		}
	}
	if _, serr := os.Stat(statePath(p.StateDir())); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("cluster.json after failed Up: %v, want it removed", serr)
	}
	if got := p.Actors(); len(got) != 0 {
		t.Errorf("Actors() after failed Up = %v, want none", got)
	}
}

// TestAPIServersReadyAndKubeconfig runs apiservers from a stand-in binary
// (see TestMain) so the provider's apiserver path is tested on its own.
func TestAPIServersReadyAndKubeconfig(t *testing.T) {
	kstepBinary(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeEnv, "1")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := newCluster(t, self, 1, 2)
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}

	kc, err := clientcmd.LoadFromFile(p.Kubeconfig())
	if err != nil {
		t.Fatalf("load kubeconfig %q: %v", p.Kubeconfig(), err)
	}
	if kc.CurrentContext != "kstep" {
		t.Errorf("current context %q, want kstep", kc.CurrentContext)
	}
	for i, name := range []string{"kstep", "kstep-apiserver-1"} {
		a := actor(t, p, fmt.Sprintf("apiserver-%d", i))
		kctx, ok := kc.Contexts[name]
		if !ok {
			t.Fatalf("kubeconfig has no context %q", name)
		}
		if got := kc.Clusters[kctx.Cluster].Server; got != a.Endpoint {
			t.Errorf("context %q: server %q, want %s's %q", name, got, a.Name, a.Endpoint)
		}
	}

	// An apiserver killed and started again comes back on the same address.
	before := actor(t, p, "apiserver-1")
	if err := p.Stop(ctx, "apiserver-1", syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL apiserver-1: %v", err)
	}
	if _, err := http.Get(before.Endpoint + "/readyz"); err == nil {
		t.Errorf("apiserver-1 still answers after SIGKILL")
	}
	if err := p.Start(ctx, "apiserver-1"); err != nil {
		t.Fatalf("Start apiserver-1: %v", err)
	}
	after := actor(t, p, "apiserver-1")
	if after.Endpoint != before.Endpoint {
		t.Errorf("apiserver-1 came back on %s, want %s", after.Endpoint, before.Endpoint)
	}
	if err := provider.WaitReady(ctx, after, after.Endpoint+"/readyz", 5*time.Second, func() (bool, error) { return false, nil }); err != nil {
		t.Errorf("apiserver-1 after Start: %v", err)
	}

	// Usage counts running lives too (read from /proc): apiserver-0 never
	// exited and is there; after Down every figure is at least what it
	// was while the actors ran.
	live := p.Usage(ctx)
	if _, ok := live["apiserver-0"]; !ok {
		t.Errorf("Usage while apiserver-0 runs has no figure for it: %v", live)
	}
	running := pids(p.Actors())
	// Foreground actors run in sessions of their own, as detached ones do,
	// so autogroup scheduling treats a cluster alike either way.
	for _, pid := range running {
		if sid, err := unix.Getsid(pid); err != nil || sid != pid {
			t.Errorf("foreground actor %d: session %d (%v), want its own session", pid, sid, err)
		}
	}
	if err := p.Down(ctx); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, running)
	final := p.Usage(ctx)
	for name, u := range live {
		if final[name].CPUSeconds+0.02 < u.CPUSeconds {
			t.Errorf("%s: CPU %.2f s after Down, %.2f s while it ran", name, final[name].CPUSeconds, u.CPUSeconds)
		}
	}
}

// TestRealAPIServersServeThroughKubeconfig checks the kubeconfig against the
// real apiserver with client-go: every context reaches its own apiserver.
func TestRealAPIServersServeThroughKubeconfig(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := newCluster(t, bin, 1, 2)
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	for _, name := range []string{"kstep", "kstep-apiserver-1"} {
		rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.Kubeconfig()},
			&clientcmd.ConfigOverrides{CurrentContext: name},
		).ClientConfig()
		if err != nil {
			t.Fatalf("context %q: %v", name, err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			t.Fatalf("context %q: %v", name, err)
		}
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatalf("context %q (%s): GET /version: %v", name, rc.Host, err)
		}
		t.Logf("context %q → %s: %s", name, rc.Host, v.GitVersion)
	}
}
