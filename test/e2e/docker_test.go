package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/docker"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// needDocker skips when no Docker daemon answers: CI has one.
func needDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := docker.Available(ctx); err != nil {
		t.Skipf("no Docker daemon answers: %v", err)
	}
}

// runningContainers is what Docker runs of the cluster: actor → container ID.
func runningContainers(t *testing.T, p *docker.Provider) map[string]string {
	t.Helper()
	all, err := p.Containers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]string{}
	for _, a := range p.Actors() {
		if id := all[a.Name]; id != "" && a.Running() {
			running[a.Name] = id
		}
	}
	return running
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// The docker provider: every actor its own container; real nodes run pods
// in nested containerd; a node container stopped is a node lost.
func TestDockerProvider(t *testing.T) {
	inLane(t, containers)
	bin := binary(t)
	needDocker(t)
	if err := docker.CanRunRealNodes(provider.Spec{Binary: bin}); err != nil {
		t.Skip(err)
	}
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.StateDir, cfg.Binary, cfg.RealNodes = t.TempDir(), bin, 2
	cfg.TraceDir = filepath.Join(cfg.StateDir, "traces")
	cfg.ReadyTimeout = 2 * time.Minute
	cfg.Log = testWriter{t}
	p, err := docker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: this one after up's Down.
	t.Cleanup(func() {
		if left, err := p.Containers(context.Background()); err != nil || len(left) > 0 {
			t.Errorf("containers left after Down: %v (%v)", left, err)
		}
	})
	up(t, p, cfg.StateDir, 12*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	// Each actor is a container of its own, running.
	want := []string{"etcd-0", "etcd-1", "etcd-2", "apiserver-0", "apiserver-1", "controller-manager-0", "controller-manager-1",
		"scheduler-0", "scheduler-1", "registry", "node-0", "node-1"}
	byActor, err := p.Containers(ctx) // by label: every container of the cluster
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, a := range want {
		if byActor[a] == "" {
			t.Fatalf("no running container for %s; Docker lists %v", a, byActor)
		}
		ids[byActor[a]] = true
	}
	if len(byActor) != len(want) || len(ids) != len(want) {
		t.Fatalf("want %d containers, one per actor; Docker lists %v", len(want), byActor)
	}
	var names []string
	for _, a := range p.Actors() {
		names = append(names, a.Name)
		if !a.Running() {
			t.Errorf("Actors: %s is not running", a.Name)
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("Actors() = %v, want %v", names, want)
	}
	checkActorProcs(t, p, cfg.ActorProcs)
	// The ops ports, the real nodes' kubelets' included, over the ports
	// Docker publishes.
	checkOpsPortsAuth(ctx, t, p, cfg.StateDir)
	// Each container holds only its own credentials (#57).
	checkContainerCredentials(ctx, t, cfg.StateDir)

	// 6 app pods Ready on the 2 real nodes.
	cs := clientFor(t, p.Kubeconfig(), "kstep")
	rs := rsOf("dock", 6, "")
	c := &rs.Spec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready := func(avoid string) func() bool {
		return func() bool {
			pods, byNode := podsOf(t, cs, "dock")
			if len(pods) != 6 || !allBound(pods) || !allReady(pods) || byNode[avoid] > 0 {
				return false
			}
			for _, p := range pods {
				if p.Status.PodIP == "" {
					return false
				}
			}
			return true
		}
	}
	took := testenv.Eventually(t, 5*time.Minute, "6 Ready app pods on 2 node containers", ready(""))
	t.Logf("6 pods Ready with IPs %v after the ReplicaSet was created", took)
	checkPodIO(t, p.Kubeconfig(), "node-1")

	// Stop a node container (SIGKILL, everything in it dies): the node
	// goes NotReady and its pods come back Ready on the other node.
	_, byNode := podsOf(t, cs, "dock")
	victim := "node-0"
	if byNode[victim] == 0 {
		victim = "node-1"
	}
	stopped := time.Now()
	if err := p.Stop(ctx, victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, running := runningContainers(t, p)[victim]; running {
		t.Fatalf("%s's container still runs after Stop", victim)
	}
	// Its container's usage was read from Docker before it went.
	if u := p.Usage(context.Background())[victim]; u.CPUSeconds <= 0 || u.PeakRSSBytes <= 0 {
		t.Errorf("usage of %s after Stop: %+v, want CPU and memory", victim, u)
	}
	notReady := testenv.Eventually(t, 2*time.Minute, victim+" NotReady", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, victim, metav1.GetOptions{})
		return err == nil && nodeReady(n) != corev1.ConditionTrue
	})
	moved := testenv.Eventually(t, 3*time.Minute, "6 Ready pods, none on "+victim, ready(victim))
	t.Logf("node container %s stopped: NotReady after %v, its pods Ready elsewhere %v later (%v in all)", victim, notReady, moved, time.Since(stopped))

	// Start it again: the same container, volume and address.
	if err := p.Start(ctx, victim); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, victim+" Ready again", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, victim, metav1.GetOptions{})
		return err == nil && nodeReady(n) == corev1.ConditionTrue
	})
	if id := runningContainers(t, p)[victim]; id != byActor[victim] {
		t.Fatalf("%s restarted in container %s, was %s", victim, id, byActor[victim])
	}

	// A process inside a node container: its containerd, SIGKILLed through
	// the provider, is restarted by the node's supervisor; a program that
	// is not there is an error.
	if err := p.Signal(ctx, victim, "containerd", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(ctx, victim, "no-such-program", syscall.SIGKILL); err == nil {
		t.Error("Signal of a program the node does not run succeeded")
	}
	testenv.Eventually(t, time.Minute, victim+"'s containerd back (Signal finds it again)", func() bool {
		return p.Signal(ctx, victim, "containerd", syscall.SIGCONT) == nil
	})

	// Partition (scope all) takes an apiserver off the network (the host
	// too reaches it no more); Heal brings it back on the same published
	// port. /readyz is public over TLS: the probe checks readiness only.
	api := p.Actors()[4]
	if err := p.Partition(ctx, api.Name, provider.ScopeAll); err != nil {
		t.Fatal(err)
	}
	hc := http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp, err := hc.Get(api.Endpoint + "/readyz"); err == nil {
		resp.Body.Close()
		t.Fatalf("%s answers while partitioned", api.Name)
	}
	if err := p.Heal(ctx, api.Name); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, api.Name+" ready after Heal", func() bool {
		resp, err := hc.Get(api.Endpoint + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err := p.Stop(ctx, "scheduler-0", syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, "scheduler-0"); err != nil {
		t.Fatal(err)
	}

	// Every actor logs to <state>/logs/<actor>.log; the kubelets' step
	// events came back into the trace directory.
	for _, a := range p.Actors() {
		if !nonEmpty(a.LogPath) {
			t.Errorf("%s: empty log %s", a.Name, a.LogPath)
		}
	}
	for _, n := range []string{"node-0", "node-1", "apiserver-0"} {
		if !nonEmpty(filepath.Join(cfg.TraceDir, n+".jsonl")) {
			t.Errorf("no step events from %s in %s", n, cfg.TraceDir)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}

// nonEmpty reports whether path is a file with something in it.
func nonEmpty(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}
