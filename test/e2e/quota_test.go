package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/docker"
	"github.com/kstep-dev/kstep/internal/testenv"
)

const quotaRC = `apiVersion: v1
kind: ReplicationController
metadata: {name: %s}
spec:
  replicas: 0
  selector: {app: %s}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: app, image: registry.kstep.local/app:v1}]
`

// ResourceQuota on every resource, on a cluster `kstep up -d` brought up,
// with the installed kubectl: issue #54's session (ConfigMaps refused at
// the quota, kube-root-ca.crt counted; ReplicationControllers;
// count/secrets), status.used right for every named resource, and 20
// concurrent creates against a quota of 10 through the cluster's
// kubeconfig: exactly 10 admitted. On the process provider, and on the
// docker provider when a Docker daemon answers.
func TestResourceQuota(t *testing.T) {
	t.Parallel()
	path := kubectlPath(t)
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			conf := ""
			if prov == "docker" {
				// The provider library rather than kstep up: building the
				// images and starting the containers may take longer than
				// upCLI's 2 minutes on a busy machine.
				needDocker(t)
				cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: 5 * time.Minute, StopGrace: 10 * time.Second}
				cfg.StateDir, cfg.Binary, cfg.Log = t.TempDir(), binary(t), testWriter{t}
				p, err := docker.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				up(t, p, cfg.StateDir, 12*time.Minute)
				conf = p.Kubeconfig()
			} else {
				conf, _ = upCLI(t)
			}
			quotaSession(t, kubectl{t: t, path: path, conf: conf}, clientFor(t, conf, ""))
		})
	}
}

func quotaSession(t *testing.T, k kubectl, cs *kubernetes.Clientset) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k.run("create", "namespace", "q1")
	// The root CA publisher puts kube-root-ca.crt in every namespace (when
	// the cluster serves TLS): it counts against configmaps.
	testenv.Eventually(t, time.Minute, "kube-root-ca.crt in q1", func() bool {
		_, err := cs.CoreV1().ConfigMaps("q1").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil
	})
	const existing = 1
	k.run("-n", "q1", "create", "quota", "q", "--hard=configmaps=3,replicationcontrollers=1,count/secrets=2")
	usedIs := func(want string) {
		t.Helper()
		var last string
		testenv.Eventually(t, time.Minute, "status.used "+want, func() bool {
			last = usedOf(t, k, "q1", "q")
			return last == want
		})
		t.Logf("status.used of q1/q: %s", last)
	}
	usedIs(fmt.Sprintf(`{"configmaps":"%d","count/secrets":"0","replicationcontrollers":"0"}`, existing))

	var refusal string
	for i := 1; i <= 4; i++ {
		out, err := k.try("-n", "q1", "create", "cm", fmt.Sprintf("c%d", i), "--from-literal=a=b")
		if i <= 3-existing {
			if err != nil {
				t.Fatalf("ConfigMap c%d: %v\n%s", i, err, out)
			}
			continue
		}
		if err == nil {
			t.Fatalf("ConfigMap c%d created past configmaps=3 (%d existed):\n%s", i, existing, out)
		}
		refusal = strings.TrimSpace(out)
		break
	}
	t.Logf("the ConfigMap over the quota: %s", refusal)
	if want := "exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3"; !strings.Contains(refusal, `configmaps "c3" is forbidden: `) || !strings.Contains(refusal, want) {
		t.Fatalf("refusal %q, want a Forbidden with %q", refusal, want)
	}
	k.run("-n", "q1", "apply", "-f", writeTemp(t, "r1.yaml", fmt.Sprintf(quotaRC, "r1", "r1", "r1")))
	out, err := k.try("-n", "q1", "apply", "-f", writeTemp(t, "r2.yaml", fmt.Sprintf(quotaRC, "r2", "r2", "r2")))
	if err == nil || !strings.Contains(out, "exceeded quota: q, requested: replicationcontrollers=1, used: replicationcontrollers=1, limited: replicationcontrollers=1") {
		t.Fatalf("2nd ReplicationController: want the refusal, got %v\n%s", err, out)
	}
	for i := 1; i <= 3; i++ {
		out, err := k.try("-n", "q1", "create", "secret", "generic", fmt.Sprintf("s%d", i), "--from-literal=a=b")
		if i <= 2 && err != nil {
			t.Fatalf("Secret s%d: %v\n%s", i, err, out)
		}
		if i == 3 && (err == nil || !strings.Contains(out, "exceeded quota: q, requested: count/secrets=1, used: count/secrets=2, limited: count/secrets=2")) {
			t.Fatalf("3rd Secret: want the refusal, got %v\n%s", err, out)
		}
	}
	usedIs(`{"configmaps":"3","count/secrets":"2","replicationcontrollers":"1"}`)
	// A delete releases its unit (the controller's recount).
	k.run("-n", "q1", "delete", "cm", "c1")
	usedIs(`{"configmaps":"2","count/secrets":"2","replicationcontrollers":"1"}`)

	// 20 concurrent creates against a quota of 10, through the cluster's
	// endpoint (its apiservers): exactly 10 admitted.
	k.run("create", "namespace", "q2")
	k.run("-n", "q2", "create", "quota", "q", "--hard=secrets=10")
	testenv.Eventually(t, time.Minute, "q2/q status.used", func() bool { return usedOf(t, k, "q2", "q") == `{"secrets":"0"}` })
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 20 {
		wg.Go(func() {
			<-start
			_, err := cs.CoreV1().Secrets("q2").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)},
				StringData: map[string]string{"a": "b"}}, metav1.CreateOptions{})
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: q, requested: secrets=1, used: secrets=10, limited: secrets=10"):
				refused.Add(1)
			default:
				t.Errorf("create s%d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	l, err := cs.CoreV1().Secrets("q2").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 concurrent creates under secrets=10: %d admitted, %d refused, %d listed", ok.Load(), refused.Load(), len(l.Items))
	if ok.Load() != 10 || refused.Load() != 10 || len(l.Items) != 10 {
		t.Fatalf("20 concurrent creates under secrets=10: %d admitted, %d refused, %d listed; want 10, 10, 10", ok.Load(), refused.Load(), len(l.Items))
	}
	testenv.Eventually(t, time.Minute, "q2/q status.used secrets=10", func() bool { return usedOf(t, k, "q2", "q") == `{"secrets":"10"}` })
}

// usedOf is a quota's status.used as kubectl prints it, keys sorted.
func usedOf(t *testing.T, k kubectl, ns, name string) string {
	t.Helper()
	out, err := k.try("-n", ns, "get", "quota", name, "-o", "jsonpath={.status.used}")
	if err != nil {
		return err.Error()
	}
	var m map[string]string
	if json.Unmarshal([]byte(out), &m) != nil {
		return out
	}
	b, _ := json.Marshal(m) // map keys marshal sorted
	return string(b)
}
