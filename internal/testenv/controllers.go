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

// Eventually polls cond until it holds or the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, last)
		}
		time.Sleep(50 * time.Millisecond)
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

// ControllerCluster is what one controller's tests run against: a real etcd
// and apiserver, a stand-in kubelet for node n1, and a controller Context on
// them (the controller is started by the caller, with RunController).
type ControllerCluster struct {
	API    *APIServer
	Client kubernetes.Interface
	// Ctx ends when the test does.
	Ctx context.Context
	// Controllers is the Context to build the controller under test with.
	Controllers *controller.Context
	nsPrefix    string
	nsSeq       atomic.Int64
}

// StartControllerCluster starts a ControllerCluster; namespaces made with
// Namespace are named <nsPrefix>-<n>.
func StartControllerCluster(t *testing.T, nsPrefix string) *ControllerCluster {
	t.Helper()
	url, _ := Etcd(t)
	api := StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	StartNodes(t, cs, NodeSpec{Name: "n1"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &ControllerCluster{API: api, Client: cs, Ctx: ctx, Controllers: ControllerContext(t, api.Config), nsPrefix: nsPrefix}
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
