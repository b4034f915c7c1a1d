package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// narrowRole lets its subject read pods and create ConfigMaps in one
// namespace, nothing more.
const narrowRole = `apiVersion: v1
kind: Namespace
metadata:
  name: team
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: team
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-reads-pods
  namespace: team
subjects:
- kind: User
  name: alice
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: Role
  name: pod-reader
  apiGroup: rbac.authorization.k8s.io
`

// TestAuthWithKubectl drives a secure cluster (kstep's default: TLS, a
// certificate per actor, Node,RBAC) with real kubectl as the admin, as a
// token user with a narrow Role, as a running hollow node's kubelet, and
// anonymously; and checks the node rules with client-go too.
func TestAuthWithKubectl(t *testing.T) {
	inLane(t, hollowProcs)
	kpath := kubectlPath(t)
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary = binary(t)
	cfg.StateDir = t.TempDir()
	cfg.APIServers, cfg.ControllerManagers, cfg.Schedulers, cfg.HollowNodes = 1, 1, 1, 2
	cfg.Tokens = []string{`alice-secret,alice,1001,"developers"`}
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v\n%s", err, logs(cfg.StateDir))
	}
	t.Cleanup(func() { _ = p.Down(context.Background()) })
	var server string
	for _, a := range p.Actors() {
		if a.Role == provider.RoleAPIServer {
			server = a.Endpoint
		}
	}
	if !strings.HasPrefix(server, "https://") {
		t.Fatalf("apiserver endpoint %s, want https", server)
	}
	admin := kubectl{t: t, path: kpath, conf: p.Kubeconfig()}
	ca := filepath.Join(cfg.StateDir, "pki", "ca.crt")

	// Anonymous (kubectl without credentials prompts for a password, so
	// plain HTTPS): only the health endpoints.
	for path, want := range map[string]int{"/readyz": 200, "/healthz": 200, "/livez": 200, "/api/v1/pods": 401, "/apis": 401, "/metrics": 401} {
		if code := anonymousGet(t, server+path, ca); code != want {
			t.Errorf("anonymous GET %s: %d, want %d", path, code, want)
		}
	}
	wrong := kubectl{t: t, path: kpath, conf: writeKubeconfig(t, server, ca, "not-a-token")}
	if out, err := wrong.try("get", "pods"); err == nil || !strings.Contains(out, "must be logged in") {
		t.Errorf("kubectl with a wrong token: %v\n%s", err, out)
	}

	// The admin (system:masters) applies a narrow Role for alice.
	f := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(f, []byte(narrowRole), 0o644); err != nil {
		t.Fatal(err)
	}
	admin.run("apply", "-f", f)
	admin.run("run", "web", "-n", "team", "--image=registry.kstep.local/app:v1")
	if out := admin.run("get", "clusterrolebindings"); !strings.Contains(out, "system:kube-scheduler") {
		t.Errorf("bootstrap bindings missing:\n%s", out)
	}

	alice := kubectl{t: t, path: kpath, conf: writeKubeconfig(t, server, ca, "alice-secret")}
	retry(t, "alice lists pods in team", func() error {
		out, err := alice.try("get", "pods", "-n", "team")
		if err != nil {
			return errors.New(out)
		}
		return nil
	})
	if out := alice.run("auth", "can-i", "list", "pods", "-n", "team"); strings.TrimSpace(out) != "yes" {
		t.Errorf("alice can-i list pods in team: %q", out)
	}
	if out, err := alice.try("auth", "can-i", "delete", "pods", "-n", "team"); err == nil || !strings.HasPrefix(out, "no") {
		t.Errorf("alice can-i delete pods in team: %v %q, want no", err, out)
	}
	// kubectl auth whoami (SelfSubjectReview) for each kind of identity:
	// a token user, the admin's certificate, an impersonated user.
	whoami := func(k kubectl, args ...string) (string, string) {
		out := k.run(append([]string{"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}|{.status.userInfo.groups}"}, args...)...)
		name, groups, _ := strings.Cut(out, "|")
		return name, groups
	}
	if name, groups := whoami(alice); name != "alice" || !strings.Contains(groups, "developers") || !strings.Contains(groups, "system:authenticated") {
		t.Errorf("alice whoami: %q %q", name, groups)
	}
	if out := alice.run("auth", "whoami"); !strings.Contains(out, "alice") || !strings.Contains(out, "1001") {
		t.Errorf("alice whoami table:\n%s", out)
	}
	if _, groups := whoami(admin); !strings.Contains(groups, "system:masters") {
		t.Errorf("admin whoami: groups %q, want system:masters", groups)
	}
	if name, groups := whoami(admin, "--as", "bob", "--as-group", "qa"); name != "bob" || !strings.Contains(groups, "qa") {
		t.Errorf("admin as bob whoami: %q %q", name, groups)
	}
	alice.run("create", "configmap", "c1", "-n", "team", "--from-literal=k=v")
	for _, args := range [][]string{
		{"get", "pods", "-n", "default"},
		{"delete", "pod", "web", "-n", "team"},
		{"get", "configmap", "c1", "-n", "team"},
		{"get", "nodes"},
		{"get", "--raw", "/metrics"},
		{"create", "namespace", "mine"},
	} {
		if out, err := alice.try(args...); err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("alice kubectl %s: %v, want forbidden\n%s", strings.Join(args, " "), err, out)
		}
	}
	admin.run("get", "--raw", "/metrics")

	// A running hollow kubelet's identity (its token from the cluster's
	// PKI): its own node and pods, nobody else's.
	tokens := nodeTokens(t, filepath.Join(cfg.StateDir, "pki", "hollow-nodes.tokens"))
	node0 := kubectl{t: t, path: kpath, conf: writeKubeconfig(t, server, ca, tokens["hollow-0"])}
	admin.run("wait", "--for=condition=Ready", "pod/web", "-n", "team", "--timeout=60s")
	bound := strings.TrimSpace(admin.run("get", "pod", "web", "-n", "team", "-o", "jsonpath={.spec.nodeName}"))
	mine, other := node0, kubectl{t: t, path: kpath, conf: writeKubeconfig(t, server, ca, tokens["hollow-1"])}
	if bound == "hollow-1" {
		mine, other = other, node0
	}
	if out := mine.run("get", "pods", "-A", "--field-selector", "spec.nodeName="+bound); !strings.Contains(out, "web") {
		t.Errorf("%s lists its pods: %s", bound, out)
	}
	mine.run("get", "pod", "web", "-n", "team")
	if name, groups := whoami(mine); name != "system:node:"+bound || !strings.Contains(groups, "system:nodes") {
		t.Errorf("%s whoami: %q %q", bound, name, groups)
	}
	mine.run("label", "node", bound, "kstep.test/own=yes")
	for _, args := range [][]string{
		{"get", "pods", "-A"},
		{"get", "pod", "web", "-n", "team"},
		{"delete", "pod", "web", "-n", "team"},
		{"label", "node", bound, "kstep.test/other=yes"},
		{"run", "sneaky", "-n", "team", "--image=registry.kstep.local/app:v1"},
		{"get", "secrets", "-A"},
	} {
		if out, err := other.try(args...); err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("the other node: kubectl %s: %v, want forbidden\n%s", strings.Join(args, " "), err, out)
		}
	}

	// The same rules through client-go.
	cs := tokenClient(t, p.Kubeconfig(), tokens["hollow-0"])
	_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "hollow-0", metav1.GetOptions{})
	if err != nil {
		t.Errorf("hollow-0 reads its lease: %v", err)
	}
	_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "hollow-1", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("hollow-0 reads hollow-1's lease: %v, want forbidden", err)
	}
	err = cs.CoreV1().Pods("team").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "hollow-0"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("hollow-0 binds a pod: %v, want forbidden", err)
	}
	admin.run("delete", "pod", "web", "-n", "team", "--wait=true", "--timeout=60s")
}

// writeKubeconfig writes a kubeconfig for server trusting ca, with a bearer
// token (none: anonymous).
func writeKubeconfig(t *testing.T, server, ca, token string) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["kstep"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: ca}
	c.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	c.Contexts["kstep"] = &clientcmdapi.Context{Cluster: "kstep", AuthInfo: "user"}
	c.CurrentContext = "kstep"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// nodeTokens reads a token file into node name → token.
func nodeTokens(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[strings.TrimPrefix(r[1], "system:node:")] = r[0]
	}
	return out
}

// tokenClient is the admin kubeconfig's cluster with a bearer token instead
// of the admin's certificate.
func tokenClient(t *testing.T, kubeconfig, token string) *kubernetes.Clientset {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.CertData, rc.KeyData, rc.BearerToken = nil, nil, token
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// retry retries fn for up to 10 s: a new RoleBinding reaches the
// apiserver's RBAC index through its watch cache.
func retry(t *testing.T, what string, fn func() error) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, what, func() (bool, error) {
		err := fn()
		return err == nil, err
	})
}

// anonymousGet GETs url over TLS trusting ca, without credentials.
func anonymousGet(t *testing.T, url, ca string) int {
	t.Helper()
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
