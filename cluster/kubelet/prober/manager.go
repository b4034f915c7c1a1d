package prober

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// Container is what the runtime runs for one container of a pod now, as the
// pod worker last saw it.
type Container struct {
	ID        string
	Running   bool
	StartedAt time.Time
	PodIP     string
	// WasReady and WasStarted seed the readiness and startup results of a
	// container this kubelet adopts (the API status of the same container
	// ID says so): a restarted kubelet does not flip Ready pods to not
	// ready while their first probe is pending.
	WasReady, WasStarted bool
}

// Manager runs every probe of every pod on one node: one worker goroutine
// per (pod, container, kind), started by AddPod and ended by RemovePod.
// Workers learn which container to probe from UpdateContainer, publish
// results that Get reads, and call onChange with the pod's UID whenever a
// published result changes, so the pod worker resyncs. Safe for concurrent
// use.
type Manager struct {
	net      Network
	exec     Exec
	clock    clock.Clock
	onChange func(types.UID)
	ctx      context.Context

	mu       sync.Mutex
	workers  map[workerKey]*worker
	pods     map[types.UID][]*worker
	recorder record.EventRecorder
}

type workerKey struct {
	uid       types.UID
	container string
	kind      Kind
}

var probeTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kstep_kubelet_probes_total",
	Help: "Probes run by the kubelet, by kind and outcome.",
}, []string{"kind", "result"})

func init() { prometheus.MustRegister(probeTotal) }

// NewManager returns a manager whose workers run until ctx ends.
func NewManager(ctx context.Context, net Network, exec Exec, clk clock.Clock, onChange func(types.UID)) *Manager {
	return &Manager{net: net, exec: exec, clock: clk, onChange: onChange, ctx: ctx,
		workers: map[workerKey]*worker{}, pods: map[types.UID][]*worker{}}
}

// SetRecorder makes the workers write upstream's probe events, Warning
// Unhealthy ("Readiness probe failed: <output>") for each failed run, on
// the container (involvedObject.fieldPath spec.containers{name}). Nil
// writes none. Call it before AddPod.
func (m *Manager) SetRecorder(r record.EventRecorder) {
	m.mu.Lock()
	m.recorder = r
	m.mu.Unlock()
}

// AddPod starts workers for the pod's probes; a second call for the same
// pod does nothing.
func (m *Manager) AddPod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pods[pod.UID]; ok {
		return
	}
	var ws []*worker
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		ref := ContainerRef(pod, c.Name)
		for _, kp := range []struct {
			k Kind
			p *corev1.Probe
		}{{Readiness, c.ReadinessProbe}, {Liveness, c.LivenessProbe}, {Startup, c.StartupProbe}} {
			if kp.p == nil {
				continue
			}
			w := &worker{m: m, key: workerKey{pod.UID, c.Name, kp.k}, probe: kp.p, container: c, ref: ref, recorder: m.recorder,
				hasStartup: c.StartupProbe != nil, st: newState(kp.k),
				poke: make(chan struct{}, 1), stop: make(chan struct{})}
			m.workers[w.key] = w
			ws = append(ws, w)
		}
	}
	m.pods[pod.UID] = ws // an entry even without probes: AddPod is once per pod
	for _, w := range ws {
		go w.run()
	}
}

// RemovePod stops the pod's workers and forgets their results.
func (m *Manager) RemovePod(uid types.UID) {
	m.mu.Lock()
	ws := m.pods[uid]
	delete(m.pods, uid)
	for _, w := range ws {
		delete(m.workers, w.key)
		close(w.stop)
	}
	m.mu.Unlock()
}

// UpdateContainer tells the pod's workers for container name what runs
// now. A new container ID resets their results to the initial ones.
func (m *Manager) UpdateContainer(uid types.UID, name string, c Container) {
	m.mu.Lock()
	ws := m.pods[uid]
	m.mu.Unlock()
	for _, w := range ws {
		if w.key.container == name {
			w.update(c)
		}
	}
}

// ProbeNow runs, in the caller, the first startup and readiness probes of
// a container that was just started, if they are due at once (no initial
// delay): the sync that started it then computes the pod's status with
// their verdict, instead of writing "not ready" a moment before the
// workers publish one. Each runs at most its timeout; a probe already run
// or not due is left to its worker, which does not run it again.
func (m *Manager) ProbeNow(uid types.UID, name string) {
	m.mu.Lock()
	var ws []*worker
	for _, k := range []Kind{Startup, Readiness} {
		if w := m.workers[workerKey{uid, name, k}]; w != nil {
			ws = append(ws, w)
		}
	}
	m.mu.Unlock()
	for _, w := range ws {
		w.mu.Lock()
		due := w.lastRun.IsZero() && !w.onHold && w.cur.Running && w.cur.ID != "" &&
			!m.clock.Now().Before(nextRun(w.cur, w.probe, w.lastRun, w.onHold))
		w.mu.Unlock()
		if due {
			w.once()
		}
	}
}

// Get returns the published result of a container's probe for the given
// container ID, and false when the container has no such probe. A worker
// that has not yet heard of that ID answers the initial result.
func (m *Manager) Get(uid types.UID, name string, k Kind, containerID string) (Result, bool) {
	m.mu.Lock()
	w := m.workers[workerKey{uid, name, k}]
	m.mu.Unlock()
	if w == nil {
		return Unknown, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur.ID != containerID {
		return initial(k), true
	}
	return w.st.published, true
}

// Pods is how many pods the manager holds workers for.
func (m *Manager) Pods() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pods)
}

type worker struct {
	m          *Manager
	key        workerKey
	probe      *corev1.Probe
	container  *corev1.Container
	ref        *corev1.ObjectReference // the container, for events
	recorder   record.EventRecorder    // nil: no events
	hasStartup bool
	poke       chan struct{}
	stop       chan struct{}

	mu      sync.Mutex
	cur     Container
	st      state
	lastRun time.Time
	onHold  bool
}

func (w *worker) update(c Container) {
	w.mu.Lock()
	if c.ID != w.cur.ID {
		w.st, w.lastRun, w.onHold = newState(w.key.kind), time.Time{}, false
		if w.key.kind == Readiness && c.WasReady || w.key.kind == Startup && c.WasStarted {
			w.st.published = Success
			w.onHold = w.key.kind == Startup
		}
	}
	w.cur = c
	w.mu.Unlock()
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

func (w *worker) run() {
	for {
		w.mu.Lock()
		next := nextRun(w.cur, w.probe, w.lastRun, w.onHold)
		w.mu.Unlock()
		var fire <-chan time.Time
		var t clock.Timer
		if !next.IsZero() {
			d := next.Sub(w.m.clock.Now())
			if d < 0 {
				d = 0
			}
			t = w.m.clock.NewTimer(d)
			fire = t.C()
		}
		select {
		case <-w.m.ctx.Done():
			stopTimer(t)
			return
		case <-w.stop:
			stopTimer(t)
			return
		case <-w.poke:
			stopTimer(t)
		case <-fire:
			w.once()
		}
	}
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// once runs the probe one time and publishes the outcome, unless it ran
// less than a period ago (ProbeNow ran it while this worker's timer was
// firing).
func (w *worker) once() {
	w.mu.Lock()
	c := w.cur
	now := w.m.clock.Now()
	if !w.lastRun.IsZero() && now.Before(w.lastRun.Add(period(w.probe))) {
		w.mu.Unlock()
		return
	}
	w.lastRun = now
	w.mu.Unlock()
	// Liveness and readiness wait for a startup probe to pass.
	if w.hasStartup && w.key.kind != Startup {
		if r, _ := w.m.Get(w.key.uid, w.key.container, Startup, c.ID); r != Success {
			return
		}
	}
	r, out := w.m.runProbe(w.m.ctx, w.probe, w.container, c)
	probeTotal.WithLabelValues(w.key.kind.String(), r.String()).Inc()
	success, failure := thresholds(w.probe, w.key.kind)
	w.mu.Lock()
	changed, current := false, w.cur.ID == c.ID
	if current {
		changed = w.st.observe(r, success, failure)
		if w.key.kind != Readiness && w.st.published == Failure {
			w.onHold = true // wait for the restart
		}
		if w.key.kind == Startup && w.st.published == Success {
			w.onHold = true // a startup probe is done once it passed
		}
	}
	w.mu.Unlock()
	if current {
		w.event(r, out)
	}
	if changed {
		w.m.onChange(w.key.uid)
	}
}

// event writes upstream's event for one probe run that did not succeed
// (pkg/kubelet/prober/prober.go): every failed run, not only the one that
// crosses the failure threshold; the recorder's correlator folds repeats
// into one Event's count.
func (w *worker) event(r Result, out string) {
	if w.recorder == nil || r == Success {
		return
	}
	kind := w.key.kind.Title()
	if r == Failure {
		w.recorder.Eventf(w.ref, corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", kind, out)
		return
	}
	w.recorder.Eventf(w.ref, corev1.EventTypeWarning, "Unhealthy", "%s probe errored and resulted in unknown state: %s", kind, out)
}

// ContainerRef is the object reference of a pod's container that the
// kubelet's container events name, as upstream's GenerateContainerRef: the
// pod, with fieldPath spec.containers{name} (spec.initContainers{name} for
// an init container).
func ContainerRef(pod *corev1.Pod, name string) *corev1.ObjectReference {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: fmt.Sprintf("spec.containers{%s}", name)}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			ref.FieldPath = fmt.Sprintf("spec.initContainers{%s}", name)
		}
	}
	return ref
}

// runProbe runs one probe action against container c.
func (m *Manager) runProbe(ctx context.Context, p *corev1.Probe, spec *corev1.Container, c Container) (Result, string) {
	to := timeout(p)
	switch {
	case p.Exec != nil:
		return m.exec(ctx, c.ID, p.Exec.Command, to)
	case p.HTTPGet != nil:
		port, err := resolvePort(p.HTTPGet.Port, spec)
		if err != nil {
			return Failure, err.Error()
		}
		host := p.HTTPGet.Host
		if host == "" {
			host = c.PodIP
		}
		var h http.Header // nil without headers: a probe a second per pod allocates nothing here
		if len(p.HTTPGet.HTTPHeaders) > 0 {
			h = make(http.Header, len(p.HTTPGet.HTTPHeaders))
		}
		for _, x := range p.HTTPGet.HTTPHeaders {
			h[x.Name] = append(h[x.Name], x.Value)
		}
		path := p.HTTPGet.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		return m.net.HTTPGet(ctx, HTTPRequest{ContainerID: c.ID, Scheme: strings.ToLower(string(p.HTTPGet.Scheme)),
			Host: host, Port: port, Path: path, Header: h, Timeout: to})
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, spec)
		if err != nil {
			return Failure, err.Error()
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = c.PodIP
		}
		return m.net.TCPConnect(ctx, TCPRequest{ContainerID: c.ID, Host: host, Port: port, Timeout: to})
	case p.GRPC != nil:
		return Failure, "grpc probes are not supported by kstep's kubelet"
	}
	return Unknown, "probe has no action"
}

// resolvePort turns a probe's port (a number or a container port's name)
// into a number.
func resolvePort(port intstr.IntOrString, c *corev1.Container) (int, error) {
	if port.Type == intstr.Int {
		if port.IntVal <= 0 || port.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port %d", port.IntVal)
		}
		return int(port.IntVal), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil && n > 0 && n <= 65535 {
		return n, nil
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port.StrVal)
}
