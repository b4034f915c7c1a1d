package kubelet

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// A kubelet that finds its Node already there (a restart) registers under
// NodeRestriction: it keeps the Node's taints (an admin removed one on
// purpose; registration taints apply at create, as upstream's), sets the
// labels a node may set; with a label it may not set the kubelet
// refuses to start, naming it, rather than retry forever.
func TestReregisterUnderNodeRestriction(t *testing.T) {
	url, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	api := testenv.StartAPIServer(t, url, p.Secure(t, nil))
	admin, err := kubernetes.NewForConfig(p.ClientConfig(t, api.Config, pki.AdminUser, pki.MastersGroup))
	if err != nil {
		t.Fatal(err)
	}
	node, err := kubernetes.NewForConfig(p.ClientConfig(t, api.Config, pki.NodeUser("n1"), pki.NodesGroup))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// The Node as the kubelet first registered it, its taint since removed.
	if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &testenv.Cluster{API: api, Client: node, Ctx: ctx}
	h := startHollow(t, c, "n1", nil, func(cfg *Config) {
		cfg.Labels = map[string]string{"example.com/rack": "r1"}
		cfg.Taints = []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}
	})
	n, err := admin.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Spec.Taints) != 0 {
		t.Errorf("re-registration re-added taints %v", n.Spec.Taints)
	}
	if n.Labels["example.com/rack"] != "r1" {
		t.Errorf("allowed label not reconciled: %v", n.Labels)
	}
	h.stop()

	// A label NodeRestriction refuses can never register: the kubelet
	// refuses to start with it, as upstream's, naming it.
	sim, err := simruntime.New("n1", simruntime.NodeCIDRFor("n1"), simruntime.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHollow(Config{NodeName: "n1", Client: node, Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}, sim)
	if err == nil || !strings.Contains(err.Error(), "node-role.kubernetes.io/worker") {
		t.Fatalf("NewHollow with a forbidden label: %v, want a refusal naming it", err)
	}
}
