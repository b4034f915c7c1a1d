package endpointslice

import (
	"context"
	"testing"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
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
type syncBuffer = testenv.SyncBuffer
