package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// checkActorProcs fails t unless every actor that serves /metrics runs Go
// with want Ps (go_sched_gomaxprocs_threads), as Topology.ActorProcs asks:
// the apiservers through the admin kubeconfig, the others on their own
// endpoint as the admin (a secure cluster's ops ports authorize the
// admin's certificate); a real node's endpoint is its kubelet's, a child
// of kstep node that inherits the setting.
func checkActorProcs(t *testing.T, p provider.Provider, want int) {
	t.Helper()
	if want < 1 {
		t.Fatalf("the cluster's actorProcs is %d: Defaults should have set it", want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := adminHTTPClient(t, p.Kubeconfig())
	apiservers := 0
	for _, a := range p.Actors() {
		var body []byte
		switch a.Role {
		case provider.RoleAPIServer:
			name := "kstep"
			if apiservers > 0 {
				name = "kstep-" + a.Name
			}
			apiservers++
			b, err := clientFor(t, p.Kubeconfig(), name).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
			if err != nil {
				t.Errorf("%s: /metrics: %v", a.Name, err)
				continue
			}
			body = b
		case provider.RoleEtcd, provider.RoleControllerManager, provider.RoleScheduler, provider.RoleHollowNodes, provider.RoleNode:
			url := strings.TrimSuffix(a.Endpoint, "/") + "/metrics"
			if a.MetricsURL != "" {
				// An etcd member's plain metrics URL: its client URL
				// takes only etcd's own certificates.
				url = strings.TrimSuffix(a.MetricsURL, "/") + "/metrics"
			}
			b, err := getBody(ctx, admin, url)
			if err != nil {
				t.Errorf("%s: %v", a.Name, err)
				continue
			}
			body = b
		default:
			continue
		}
		got, err := testenv.Gauge(bytes.NewReader(body), "go_sched_gomaxprocs_threads")
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if int(got) != want {
			t.Errorf("%s runs with GOMAXPROCS %v, want the cluster's actorProcs %d", a.Name, got, want)
		}
	}
}

// adminHTTPClient is an HTTP client with the admin kubeconfig's
// credentials: its client certificate, trusting the cluster's CA.
func adminHTTPClient(t *testing.T, kubeconfig string) *http.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func getBody(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, nil
}
