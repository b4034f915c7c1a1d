package kubelet

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// withRecorder gives the kubelet a real client-go recorder writing to the
// test's apiserver, as `kstep hollow-nodes` does: the Events are named,
// counted and patched by client-go's own code.
func withRecorder(t *testing.T, c *testenv.Cluster, node string) func(*Config) {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	t.Cleanup(b.Shutdown)
	return func(cfg *Config) {
		cfg.Recorder = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: node})
	}
}

// podEvents lists the Events whose involvedObject is the pod.
func podEvents(t *testing.T, c *testenv.Cluster, pod string) []corev1.Event {
	t.Helper()
	l, err := c.Client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == pod {
			out = append(out, e)
		}
	}
	return out
}

func eventByReason(evs []corev1.Event, reason string) *corev1.Event {
	for i := range evs {
		if evs[i].Reason == reason {
			return &evs[i]
		}
	}
	return nil
}

// waitEvent waits for the pod's Event of that reason that satisfies cond.
func waitEvent(t *testing.T, c *testenv.Cluster, pod, reason string, timeout time.Duration, cond func(*corev1.Event) bool) *corev1.Event {
	t.Helper()
	var got *corev1.Event
	testenv.Eventually(t, timeout, "event "+reason+" of pod "+pod, func() (bool, error) {
		got = eventByReason(podEvents(t, c, pod), reason)
		return got != nil && (cond == nil || cond(got)), nil
	}, fastPoll)
	return got
}

// A hollow kubelet writes upstream's container events for a pod it runs,
// each on the container (fieldPath spec.containers{app}) and named as
// client-go's recorder names them: <pod>.<hex UnixNano of the event>.
func TestHollowEventsNamedLikeTheRecorder(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-ev", nil, withRecorder(t, c, "node-ev"))
	before := time.Now()
	p := createPod(t, c, newPod("ev", "node-ev"))
	waitPod(t, c, "ev", 10*time.Second, "ready", podReady)
	after := time.Now()

	started := waitEvent(t, c, "ev", "Started", 5*time.Second, nil)
	hex, ok := strings.CutPrefix(started.Name, "ev.")
	if !ok {
		t.Fatalf("Started event named %q, want ev.<hex>", started.Name)
	}
	ns, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		t.Fatalf("Started event %q: suffix is not hex: %v", started.Name, err)
	}
	if at := time.Unix(0, int64(ns)); at.Before(before) || at.After(after) {
		t.Errorf("Started event's name says %v, outside the pod's life here [%v, %v]", at, before, after)
	}
	if started.Type != corev1.EventTypeNormal || started.Message != "Started container app" || started.Count != 1 {
		t.Errorf("Started event %s %q count %d", started.Type, started.Message, started.Count)
	}
	io := started.InvolvedObject
	if io.UID != p.UID || io.Namespace != "default" || io.APIVersion != "v1" || io.FieldPath != "spec.containers{app}" {
		t.Errorf("Started event's involvedObject %+v", io)
	}
	if started.Source.Component != "kubelet" || started.Source.Host != "node-ev" {
		t.Errorf("Started event's source %+v", started.Source)
	}
	// The image's tag is v1: IfNotPresent, and the sim has no image yet.
	evs := podEvents(t, c, "ev")
	for _, reason := range []string{"Pulling", "Pulled", "Created", "Started"} {
		if eventByReason(evs, reason) == nil {
			t.Errorf("no %s event: %+v", reason, evs)
		}
	}
	for _, e := range evs {
		if e.Type != corev1.EventTypeNormal {
			t.Errorf("a healthy pod's event %s %s: %s", e.Type, e.Reason, e.Message)
		}
	}
}

// A failing readiness probe on the simulated runtime gives upstream's
// Warning Unhealthy "Readiness probe failed: <output>" on the container,
// once per failed run: the recorder folds the repeats into the Event's
// count (a patch of the same Event, same name).
func TestUnhealthyEventCounts(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-uh", nil, withRecorder(t, c, "node-uh"))
	createPod(t, c, newPod("sick", "node-uh", withEnv("SIM_UNHEALTHY_AFTER", "1ms"), func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = httpProbe("/readyz", 1)
	}))
	first := waitEvent(t, c, "sick", "Unhealthy", 10*time.Second, nil)
	if first.Type != corev1.EventTypeWarning || first.Message != "Readiness probe failed: HTTP probe failed with statuscode: 500" ||
		first.InvolvedObject.FieldPath != "spec.containers{app}" {
		t.Fatalf("Unhealthy event %s %q on %q", first.Type, first.Message, first.InvolvedObject.FieldPath)
	}
	again := waitEvent(t, c, "sick", "Unhealthy", 10*time.Second, func(e *corev1.Event) bool { return e.Count >= 2 })
	if again.Name != first.Name || again.LastTimestamp.Before(&again.FirstTimestamp) {
		t.Errorf("the repeat is %s (first %s), last %v first %v", again.Name, first.Name, again.LastTimestamp, again.FirstTimestamp)
	}
	if p, _ := getPod(c, "sick"); p == nil || podReady(p) {
		t.Errorf("a pod failing its readiness probe is Ready")
	}
}

// A failing liveness probe: Unhealthy "Liveness probe failed: ...", then
// Killing with upstream's message, the restart's BackOff when it keeps
// failing.
func TestLivenessEvents(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-lv", nil, withRecorder(t, c, "node-lv"))
	createPod(t, c, newPod("dying", "node-lv", withEnv("SIM_UNHEALTHY_AFTER", "1ms"), func(p *corev1.Pod) {
		p.Spec.Containers[0].LivenessProbe = httpProbe("/healthz", 1)
	}))
	waitEvent(t, c, "dying", "Unhealthy", 10*time.Second, func(e *corev1.Event) bool {
		return e.Message == "Liveness probe failed: HTTP probe failed with statuscode: 500"
	})
	kill := waitEvent(t, c, "dying", "Killing", 10*time.Second, nil)
	if kill.Message != "Container app failed liveness probe, will be restarted" || kill.InvolvedObject.FieldPath != "spec.containers{app}" {
		t.Errorf("Killing event %q on %q", kill.Message, kill.InvolvedObject.FieldPath)
	}
	waitEvent(t, c, "dying", "BackOff", 15*time.Second, func(e *corev1.Event) bool {
		return e.Type == corev1.EventTypeWarning && e.Message == "Back-off restarting failed container app"
	})
}

// The latency model's injected failures (the flaky profile's kind, here
// every StartContainer) give Warning Failed "Error: <the runtime's error>".
func TestInjectedFailureEvents(t *testing.T) {
	c := testenv.StartCluster(t)
	sim, err := simruntime.New("node-fl", simruntime.NodeCIDRFor("node-fl"), simruntime.Config{Failures: map[string]float64{"StartContainer": 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	startHollow(t, c, "node-fl", sim, withRecorder(t, c, "node-fl"))
	createPod(t, c, newPod("flaky", "node-fl"))
	failed := waitEvent(t, c, "flaky", "Failed", 10*time.Second, nil)
	if failed.Type != corev1.EventTypeWarning || !strings.HasPrefix(failed.Message, "Error: ") || !strings.Contains(failed.Message, "injected StartContainer failure") {
		t.Errorf("Failed event %s %q", failed.Type, failed.Message)
	}
	if e := eventByReason(podEvents(t, c, "flaky"), "Started"); e != nil {
		t.Errorf("a container that never started has a Started event: %+v", e)
	}
}
