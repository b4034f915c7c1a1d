package garbagecollector

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// cluster is a real etcd and apiserver, stand-in kubelets on node n1, and
// the collector running against them.
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

func (c *cluster) namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("gc-%d", nsSeq.Add(1))
	if _, err := c.cs.CoreV1().Namespaces().Create(c.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// The shared controller test plumbing, under the names these tests use.
var (
	newContext   = testenv.ControllerContext
	run          = testenv.RunController
	eventually   = testenv.Eventually
	consistently = testenv.Consistently
)
