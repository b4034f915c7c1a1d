package endpointslice

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// cluster is a real etcd and apiserver, a stand-in kubelet on node n1, and
// the controllers under test running against them.
type cluster struct {
	env *testenv.ControllerCluster
	api *testenv.APIServer
	cs  kubernetes.Interface
	ctx context.Context
}

// startCluster runs the controllers that build makes, each on its own
// Context (its own informers) carrying tracer.
func startCluster(t *testing.T, tracer *trace.Tracer, opts func(*controller.Options), builds ...func(*controller.Context) controller.Controller) *cluster {
	t.Helper()
	env := testenv.StartControllerCluster(t, "eps")
	for _, build := range builds {
		cc := testenv.ControllerContext(t, env.API.Config)
		cc.Tracer = tracer
		if opts != nil {
			opts(&cc.Options)
		}
		run(t, build(cc), cc)
	}
	return &cluster{env: env, api: env.API, cs: env.Client, ctx: env.Ctx}
}

func (c *cluster) namespace(t *testing.T) string { return c.env.Namespace(t) }

var (
	run          = testenv.RunController
	eventually   = testenv.Eventually
	consistently = testenv.Consistently
)

// syncBuffer is a trace sink the test reads while the tracer writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// stamps counts the endpoints.updated events per pod UID.
func (s *syncBuffer) stamps(t *testing.T) map[types.UID]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[types.UID]int{}
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var ev trace.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if ev.Step == trace.EndpointsUpdated && ev.Kind == "Pod" {
			out[ev.UID]++
		}
	}
	return out
}
