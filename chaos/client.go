package chaos

import (
	"context"

	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/apiclient"
)

// apiservers is how the engine's clients reach the cluster: every
// apiserver the kubeconfig names, through the same failover as every actor
// (cluster/apiclient), so the engine's load and observers keep going while
// one apiserver is dead, as a client behind a load balancer would.
type apiservers struct {
	ctx context.Context // ends the clients' probers
	*apiclient.Servers
}

func loadAPIServers(ctx context.Context, kubeconfig string) (*apiservers, error) {
	s, err := apiclient.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	return &apiservers{ctx: ctx, Servers: s}, nil
}

// client returns a clientset that prefers apiserver i (mod their number)
// and fails over to the others.
func (a *apiservers) client(i int) (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(a.Config(a.ctx, i, nil))
}

// clientAs is client(i) with a User-Agent of its own, by which the
// apiservers' failpoints pick a stream.
func (a *apiservers) clientAs(i int, userAgent string) (*kubernetes.Clientset, error) {
	cfg := a.Config(a.ctx, i, nil)
	cfg.UserAgent = userAgent
	return kubernetes.NewForConfig(cfg)
}
