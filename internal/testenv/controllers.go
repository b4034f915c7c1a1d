package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/eventsink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ControllerContext builds what the controller-manager would hand a controller.
func ControllerContext(t testing.TB, cfg *rest.Config) *controller.Context {
	cs := kubernetes.NewForConfigOrDie(cfg)
	r := eventsink.Start(context.Background(), cs, eventsink.DefaultOptions(), nil)
	t.Cleanup(r.Stop)
	level := slog.LevelWarn
	if os.Getenv("KSTEP_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return &controller.Context{
		Client:    cs,
		Informers: informers.NewSharedInformerFactory(cs, 0),
		Recorder:  r.Recorder(corev1.EventSource{Component: "test"}),
		Log:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Now:       time.Now,
		Options:   controller.DefaultOptions(),
	}
}

// RunController starts the factory after New, as the manager does, and the
// controller; both stop at cleanup.
func RunController(t testing.TB, c controller.Controller, cc *controller.Context) {
	RunControllers(t, cc, c)
}

// RunControllers is RunController for several controllers built on one
// Context (a controller and the garbage collector its deletes need): one
// factory start for all of them, as the manager does, and at cleanup every
// controller stopped before the factory is shut down.
func RunControllers(t testing.TB, cc *controller.Context, cs ...controller.Controller) {
	ctx, cancel := context.WithCancel(context.Background())
	cc.Informers.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		cc.Informers.Shutdown()
	})
}

// A Cond is what Eventually polls: a condition that says what it saw when
// it does not hold (the error), one that has nothing to say (a bool), or an
// attempt that holds when it returns no error.
type Cond interface {
	func() (bool, error) | func() bool | func() error
}

// A PollOption changes how Eventually polls.
type PollOption func(*polling)

type polling struct{ every time.Duration }

// Every polls every d instead of every 50 ms (a state that holds only for
// a moment is seen by a faster poll).
func Every(d time.Duration) PollOption { return func(p *polling) { p.every = d } }

// Eventually polls cond every 50 ms (or as opts say) until it holds, and
// returns how long that took; it fails t when timeout passes first, with
// what cond said last.
func Eventually[C Cond](t testing.TB, timeout time.Duration, what string, cond C, opts ...PollOption) time.Duration {
	t.Helper()
	p := polling{every: 50 * time.Millisecond}
	for _, o := range opts {
		o(&p)
	}
	var check func() (bool, error)
	switch c := any(cond).(type) {
	case func() (bool, error):
		check = c
	case func() bool:
		check = func() (bool, error) { return c(), nil }
	case func() error:
		check = func() (bool, error) { err := c(); return err == nil, err }
	}
	start := time.Now()
	var last error
	for {
		ok, err := check()
		if ok {
			return time.Since(start)
		}
		last = err
		if time.Since(start) > timeout {
			if last == nil {
				t.Fatalf("timed out after %v waiting for %s", timeout, what)
			}
			t.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, last)
		}
		time.Sleep(p.every)
	}
}

// Consistently checks that cond holds for the whole duration.
func Consistently(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok, err := cond(); !ok {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ControllerCluster is what one controller's tests run against: a Cluster,
// a stand-in kubelet for node n1, and a controller Context on them.
type ControllerCluster struct {
	*Cluster
	// Controllers is the Context the controllers under test are built
	// with.
	Controllers *controller.Context
	nsPrefix    string
	nsSeq       atomic.Int64
}

// StartControllerCluster starts a ControllerCluster and runs on its
// Controllers the controllers that builds make (RunControllers: one
// informer factory, as the manager runs them), until test cleanup; with no
// builds the caller builds and runs its own. Namespaces made with
// Namespace are named <nsPrefix>-<n>.
func StartControllerCluster(t *testing.T, nsPrefix string, builds ...func(*controller.Context) controller.Controller) *ControllerCluster {
	t.Helper()
	c := StartCluster(t)
	StartNodes(t, c.Client, NodeSpec{Name: "n1"})
	cc := ControllerContext(t, c.API.Config)
	if len(builds) > 0 {
		ctrls := make([]controller.Controller, len(builds))
		for i, build := range builds {
			ctrls[i] = build(cc)
		}
		RunControllers(t, cc, ctrls...)
	}
	return &ControllerCluster{Cluster: c, Controllers: cc, nsPrefix: nsPrefix}
}

// Namespace creates a fresh namespace and returns its name.
func (c *ControllerCluster) Namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", c.nsPrefix, c.nsSeq.Add(1))
	if _, err := c.Client.CoreV1().Namespaces().Create(c.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}
