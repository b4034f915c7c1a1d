package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// cluster is a real etcd and apiserver, stand-in kubelets on node n1, and
// the ServiceAccount controller running against them.
type cluster struct {
	api *testenv.APIServer
	cs  kubernetes.Interface
	ctx context.Context
}

var nsSeq atomic.Int64

func startCluster(t *testing.T) *cluster {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	testenv.StartNodes(t, cs, testenv.NodeSpec{Name: "n1"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cc := newContext(t, api.Config)
	run(t, New(cc), cc)
	return &cluster{api: api, cs: cs, ctx: ctx}
}

// newContext builds what the controller-manager would hand a controller.
func newContext(t *testing.T, cfg *rest.Config) *controller.Context {
	cs := kubernetes.NewForConfigOrDie(cfg)
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	t.Cleanup(b.Shutdown)
	level := slog.LevelWarn
	if os.Getenv("KSTEP_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return &controller.Context{
		Client:    cs,
		Informers: informers.NewSharedInformerFactory(cs, 0),
		Recorder:  b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "test"}),
		Log:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Now:       time.Now,
		Options:   controller.DefaultOptions(),
	}
}

// run starts the factory after New, as the manager does, and the
// controller; both stop at cleanup.
func run(t *testing.T, c controller.Controller, cc *controller.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	cc.Informers.Start(ctx.Done())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		cc.Informers.Shutdown()
	})
}

func (c *cluster) namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("sa-%d", nsSeq.Add(1))
	if _, err := c.cs.CoreV1().Namespaces().Create(c.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
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

// consistently checks that cond holds for the whole duration.
func consistently(t *testing.T, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok, err := cond(); !ok {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
