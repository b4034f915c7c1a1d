package garbagecollector

import (
	"context"
	"testing"

	"github.com/kstep-dev/kstep/internal/testenv"
	"k8s.io/client-go/kubernetes"
)

// cluster is a real etcd and apiserver, stand-in kubelets on node n1, and
// the collector running against them.
type cluster struct {
	env *testenv.ControllerCluster
	api *testenv.APIServer
	cs  kubernetes.Interface
	ctx context.Context
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	env := testenv.StartControllerCluster(t, "gc")
	cc := env.Controllers
	run(t, New(cc), cc)
	return &cluster{env: env, api: env.API, cs: env.Client, ctx: env.Ctx}
}

func (c *cluster) namespace(t *testing.T) string { return c.env.Namespace(t) }

// The shared controller test plumbing, under the names these tests use.
var (
	newContext   = testenv.ControllerContext
	run          = testenv.RunController
	eventually   = testenv.Eventually
	consistently = testenv.Consistently
)
