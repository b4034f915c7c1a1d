package apiserver_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/pki"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubectlFor is real kubectl with c's server and credentials (a client
// certificate or a token), or a skip without kubectl.
func kubectlFor(t *testing.T, c *rest.Config) func(args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl in PATH")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kstep"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthority: c.TLSClientConfig.CAFile}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.TLSClientConfig.CertData, ClientKeyData: c.TLSClientConfig.KeyData, Token: c.BearerToken}
	kc.Contexts["kstep"] = &clientcmdapi.Context{Cluster: "kstep", AuthInfo: "user"}
	kc.CurrentContext = "kstep"
	dir := t.TempDir()
	conf := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, conf); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctxT(t), bin, append([]string{"--kubeconfig", conf, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// With real kubectl as node n1's kubelet: beside each refused label or
// taint write on its own Node, a positive control (an ordinary label) goes
// through; and it reads only its own Node.
func TestNodeRestrictionWithKubectl(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	nodeCfg := e.pki.ClientConfig(t, e.api.Config, pki.NodeUser("n1"), pki.NodesGroup)
	n1 := e.clientFor(nodeCfg)
	node := kubectlFor(t, nodeCfg)
	admin := kubectlFor(t, e.pki.ClientConfig(t, e.api.Config, pki.AdminUser, pki.MastersGroup))

	// Registering: the kubelet's own labels and its taints are allowed,
	// a node-role label is not.
	reg := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}}}
	_, err := n1.CoreV1().Nodes().Create(ctx, reg, metav1.CreateOptions{})
	wantCode(t, "n1 registers with a node-role label", err, 403)
	reg.Labels = map[string]string{corev1.LabelHostname: "n1", corev1.LabelOSStable: "linux", corev1.LabelTopologyZone: "z1", "kubelet.kubernetes.io/x": "y"}
	reg.Spec.Taints = []corev1.Taint{{Key: "registered", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := n1.CoreV1().Nodes().Create(ctx, reg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("n1 registers with its own labels and a taint: %v", err)
	}
	if _, err := e.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What the admin set, the node may not take away or change.
	for _, args := range [][]string{
		{"label", "node", "n1", "node-role.kubernetes.io/worker=", "node-restriction.kubernetes.io/tier=gold"},
		{"taint", "node", "n1", "dedicated=infra:NoExecute"},
	} {
		if out, err := admin(args...); err != nil {
			t.Fatalf("admin kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	before, err := e.admin.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		what    string
		args    []string
		control string // an ordinary label set right after, which must go through
	}{
		{"add a node-restriction label", []string{"label", "node", "n1", "node-restriction.kubernetes.io/zone=a"}, "example.com/rack=r1"},
		{"add a node-restriction subdomain label", []string{"label", "node", "n1", "x.node-restriction.kubernetes.io/zone=a"}, "example.com/rack=r2"},
		{"add a node-role label", []string{"label", "node", "n1", "node-role.kubernetes.io/control-plane="}, "example.com/rack=r3"},
		{"change a node-role label", []string{"label", "node", "n1", "--overwrite", "node-role.kubernetes.io/worker=yes"}, "example.com/rack=r4"},
		{"remove a node-role label", []string{"label", "node", "n1", "node-role.kubernetes.io/worker-"}, "example.com/rack=r5"},
		{"remove a node-restriction label", []string{"label", "node", "n1", "node-restriction.kubernetes.io/tier-"}, "example.com/rack=r6"},
		{"add another kubernetes.io label", []string{"label", "node", "n1", "kubernetes.io/role=master"}, "example.com/rack=r7"},
		{"add a taint", []string{"taint", "node", "n1", "mine=yes:NoSchedule"}, "example.com/rack=r8"},
		{"remove a taint", []string{"taint", "node", "n1", "dedicated:NoExecute-"}, "example.com/rack=r9"},
		{"remove its registration taint", []string{"taint", "node", "n1", "registered:NoSchedule-"}, "example.com/rack=r10"},
		{"add a node-role label through the status", []string{"patch", "node", "n1", "--subresource=status", "--type=merge",
			"-p", `{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`}, "example.com/rack=r11"},
	}
	for _, tc := range refused {
		out, err := node(tc.args...)
		if err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("n1 kubectl %s (%s): %v, want forbidden\n%s", strings.Join(tc.args, " "), tc.what, err, out)
		}
		if out, err := node("label", "node", "n1", "--overwrite", tc.control); err != nil {
			t.Errorf("n1 kubectl label node n1 %s, after it was refused to %s: %v\n%s", tc.control, tc.what, err, out)
		}
	}
	// A fresh bound: ctx's 30 s also covered the two dozen kubectl runs
	// above, which a loaded machine takes longer than that for.
	after, err := e.admin.CoreV1().Nodes().Get(ctxT(t), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range before.Labels {
		if after.Labels[k] != v {
			t.Errorf("label %s is %q, was %q", k, after.Labels[k], v)
		}
	}
	for k := range after.Labels {
		if _, was := before.Labels[k]; !was && k != "example.com/rack" {
			t.Errorf("label %s appeared", k)
		}
	}
	if after.Labels["example.com/rack"] != "r11" {
		t.Errorf("the positive control's label is %q, want r11", after.Labels["example.com/rack"])
	}
	if len(after.Spec.Taints) != 2 {
		t.Errorf("taints %v, want the registration's and the admin's", after.Spec.Taints)
	}
	// The kubelet's own labels are its to change, as upstream.
	if out, err := node("label", "node", "n1", "--overwrite", corev1.LabelTopologyZone+"=z2", "node.kubernetes.io/instance-type=big"); err != nil {
		t.Errorf("n1 relabels its zone and instance type: %v\n%s", err, out)
	}

	// Reads: its own Node only.
	if out, err := node("get", "node", "n1"); err != nil {
		t.Errorf("n1 kubectl get node n1: %v\n%s", err, out)
	}
	if out, err := node("get", "nodes", "--field-selector", "metadata.name=n1"); err != nil || !strings.Contains(out, "n1") {
		t.Errorf("n1 kubectl get nodes --field-selector metadata.name=n1: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"get", "node", "n2"}, {"get", "nodes"}, {"label", "node", "n2", "example.com/rack=r1"}} {
		if out, err := node(args...); err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("n1 kubectl %s: %v, want forbidden\n%s", strings.Join(args, " "), err, out)
		}
	}
}
