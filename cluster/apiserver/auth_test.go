package apiserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// secureEnv is an apiserver with TLS, client certificates, a token file
// and Node,RBAC authorization.
type secureEnv struct {
	t     *testing.T
	pki   *testenv.PKI
	api   *testenv.APIServer
	admin *kubernetes.Clientset
}

var testTokens = []string{
	`alice-token,alice,1001,"team-a"`,
	`bob-token,bob,1002`,
	`watcher-token,prometheus,1003,"system:monitoring"`,
}

func newSecureEnv(t *testing.T) *secureEnv {
	t.Helper()
	url, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	api := testenv.StartAPIServer(t, url, p.Secure(t, testTokens))
	e := &secureEnv{t: t, pki: p, api: api}
	e.admin = e.certClient(pki.AdminUser, pki.MastersGroup)
	return e
}

func (e *secureEnv) clientFor(c *rest.Config) *kubernetes.Clientset {
	e.t.Helper()
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

func (e *secureEnv) certClientConfig(user string, groups ...string) *rest.Config {
	return e.pki.ClientConfig(e.t, e.api.Config, user, groups...)
}

func (e *secureEnv) certClient(user string, groups ...string) *kubernetes.Clientset {
	return e.clientFor(e.certClientConfig(user, groups...))
}

func (e *secureEnv) tokenClient(token string) *kubernetes.Clientset {
	return e.clientFor(e.pki.TokenConfig(e.api.Config, token))
}

// rawGet GETs path with config c's credentials and returns the code and body.
func rawGet(t *testing.T, c *rest.Config, path string) (int, []byte) {
	t.Helper()
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(c.Host + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func wantCode(t *testing.T, what string, err error, code int32) {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Code != code {
		t.Fatalf("%s: err %v, want a %d Status", what, err, code)
	}
}

func TestAuthentication(t *testing.T) {
	e := newSecureEnv(t)
	anon := e.api.Config

	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if code, body := rawGet(t, anon, path); code != http.StatusOK {
			t.Errorf("anonymous GET %s: %d %s, want 200", path, code, body)
		}
	}
	for _, path := range []string{"/api/v1/namespaces/default/pods", "/api", "/apis/apps/v1", "/metrics", "/openapi/v2"} {
		code, body := rawGet(t, anon, path)
		var st metav1.Status
		if code != http.StatusUnauthorized || json.Unmarshal(body, &st) != nil || st.Kind != "Status" || st.Code != 401 {
			t.Errorf("anonymous GET %s: %d %s, want a 401 Status", path, code, body)
		}
	}
	ctx := ctxT(t)
	_, err := e.tokenClient("wrong-token").CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantCode(t, "unknown token", err, 401)

	// A certificate from another CA is a 401, not a broken handshake.
	other := testenv.NewPKI(t)
	foreign := other.ClientConfig(t, e.api.Config, pki.AdminUser, pki.MastersGroup)
	foreign.TLSClientConfig.CAFile = e.pki.CAFile()
	_, err = e.clientFor(foreign).CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantCode(t, "certificate of another CA", err, 401)

	// Credentials that are sent are checked on every path, the public ones
	// too: bad ones are a 401 there, good ones are served.
	bad := map[string]*rest.Config{
		"a wrong token":               e.pki.TokenConfig(anon, "wrong-token"),
		"a certificate of another CA": foreign,
		"an expired certificate":      certConfig(t, e, anon, true),
		"a self-signed certificate":   certConfig(t, e, anon, false),
	}
	for _, path := range []string{"/version", "/healthz", "/livez", "/readyz", "/api"} {
		for what, c := range bad {
			code, body := rawGet(t, c, path)
			var st metav1.Status
			if code != http.StatusUnauthorized || json.Unmarshal(body, &st) != nil || st.Code != 401 {
				t.Errorf("GET %s with %s: %d %s, want a 401 Status", path, what, code, body)
			}
		}
		if code, body := rawGet(t, e.pki.TokenConfig(anon, "bob-token"), path); code != http.StatusOK {
			t.Errorf("GET %s with a good token: %d %s", path, code, body)
		}
	}

	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin create: %v", err)
	}
	// A user without roles is authenticated (discovery works) but may do
	// nothing else.
	bob := e.tokenClient("bob-token")
	if _, err := bob.Discovery().ServerGroups(); err != nil {
		t.Fatalf("bob discovery: %v", err)
	}
	_, err = bob.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantCode(t, "bob lists pods", err, 403)
}

// certConfig is base with a client certificate for the admin that does not
// authenticate: signed by the cluster's CA but expired (expired=true), or
// signed by its own key.
func certConfig(t *testing.T, e *secureEnv, base *rest.Config, expired bool) *rest.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: pki.AdminUser, Organization: []string{pki.MastersGroup}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	parent, signer := tmpl, any(key)
	if expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
		block, _ := pem.Decode(e.pki.CA.Pair().KeyPEM)
		caKey, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		parent, signer = e.pki.CA.Cert, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := rest.CopyConfig(base)
	c.TLSClientConfig.CAFile = e.pki.CAFile()
	c.TLSClientConfig.CertData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c.TLSClientConfig.KeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return c
}

func TestRBAC(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	for _, name := range []string{"cluster-admin", "system:kube-scheduler", "system:kube-controller-manager", "system:discovery"} {
		if _, err := e.admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("bootstrap ClusterRole %s: %v", name, err)
		}
	}
	if _, err := e.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team", "default"} {
		if _, err := e.admin.CoreV1().Pods(ns).Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	alice := e.tokenClient("alice-token")
	_, err := alice.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
	wantCode(t, "alice before her Role", err, 403)

	// A narrow Role: read pods in team, bound to alice by name.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "team"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := e.admin.RbacV1().Roles("team").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	if _, err := e.admin.RbacV1().RoleBindings("team").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "alice lists pods in team", func() error {
		_, err := alice.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := alice.CoreV1().Pods("team").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("alice get pod in team: %v", err)
	}
	_, err = alice.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantCode(t, "alice lists pods in default", err, 403)
	for verb, want := range map[string]bool{"list": true, "delete": false} {
		review, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "pods", Namespace: "team"}}}, metav1.CreateOptions{})
		if err != nil || review.Status.Allowed != want {
			t.Errorf("alice's access review of %s pods in team: %v %+v, want allowed=%v", verb, err, review.Status, want)
		}
	}
	_, err = alice.CoreV1().Pods("team").Create(ctx, testPod("q"), metav1.CreateOptions{})
	wantCode(t, "alice creates a pod", err, 403)
	err = alice.CoreV1().Pods("team").Delete(ctx, "p", metav1.DeleteOptions{})
	wantCode(t, "alice deletes a pod", err, 403)
	_, err = alice.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{})
	wantCode(t, "alice lists secrets", err, 403)

	// A ClusterRoleBinding to her group grants cluster-wide; deleting it
	// takes it back.
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-a-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-a"}}}
	if _, err := e.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "team-a creates pods in default", func() error {
		_, err := alice.CoreV1().Pods("default").Create(ctx, testPod("by-alice"), metav1.CreateOptions{})
		return err
	})
	if err := e.admin.RbacV1().ClusterRoleBindings().Delete(ctx, "team-a-admin", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "team-a loses cluster-admin", func() error {
		_, err := alice.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return nil
		}
		return errors.New("still allowed")
	})

	// /metrics: the admin and system:monitoring, nobody else.
	if code, body := rawGet(t, e.pki.TokenConfig(e.api.Config, "watcher-token"), "/metrics"); code != 200 {
		t.Errorf("system:monitoring GET /metrics: %d %s", code, body)
	}
	if code, _ := rawGet(t, e.pki.ClientConfig(t, e.api.Config, pki.AdminUser, pki.MastersGroup), "/metrics"); code != 200 {
		t.Errorf("admin GET /metrics: %d", code)
	}
	if code, _ := rawGet(t, e.pki.TokenConfig(e.api.Config, "bob-token"), "/metrics"); code != 403 {
		t.Errorf("bob GET /metrics: %d, want 403", code)
	}
	// The link control (chaos faults on actor → apiserver): the admin only.
	if code, body := rawGet(t, e.certClientConfig(pki.AdminUser, pki.MastersGroup), netfault.ControlPath); code != 200 {
		t.Errorf("admin GET %s: %d %s", netfault.ControlPath, code, body)
	}
	if code, _ := rawGet(t, e.pki.TokenConfig(e.api.Config, "bob-token"), netfault.ControlPath); code != 403 {
		t.Errorf("bob GET %s: %d, want 403", netfault.ControlPath, code)
	}
	if code, _ := rawGet(t, e.certClientConfig(pki.NodeUser("n1"), pki.NodesGroup), netfault.ControlPath+"/apiserver"); code != 403 {
		t.Errorf("a node GET %s/apiserver: %d, want 403", netfault.ControlPath, code)
	}

	// The scheduler binds but cannot create pods.
	sched := e.certClient(pki.SchedulerUser)
	err = sched.CoreV1().Pods("team").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("scheduler binds: %v", err)
	}
	_, err = sched.CoreV1().Pods("team").Create(ctx, testPod("s"), metav1.CreateOptions{})
	wantCode(t, "scheduler creates a pod", err, 403)

	// The controller-manager writes EndpointSlices (its EndpointSlice and
	// mirroring controllers); the scheduler does not.
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}}}}
	cm := e.certClient(pki.ControllerManagerUser)
	got, err := cm.DiscoveryV1().EndpointSlices("team").Create(ctx, slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("controller-manager creates an endpointslice: %v", err)
	}
	if err := cm.DiscoveryV1().EndpointSlices("team").Delete(ctx, got.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("controller-manager deletes an endpointslice: %v", err)
	}
	_, err = sched.DiscoveryV1().EndpointSlices("team").Create(ctx, slice, metav1.CreateOptions{})
	wantCode(t, "scheduler creates an endpointslice", err, 403)
}

func TestNodeAuthorizerAndRestriction(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	n1 := e.certClient(pki.NodeUser("n1"), pki.NodesGroup)

	// Its own Node and Lease, nobody else's.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	created, err := n1.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("n1 registers itself: %v", err)
	}
	created.Status.Phase = corev1.NodeRunning
	if _, err := n1.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("n1 writes its status: %v", err)
	}
	_, err = n1.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{})
	wantCode(t, "n1 creates node n2", err, 403)
	n2, err := e.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// It reads its own Node only, as upstream 1.37: by name, or listed and
	// watched with a metadata.name selector.
	if _, err := n1.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Errorf("n1 reads its Node: %v", err)
	}
	own := metav1.ListOptions{FieldSelector: "metadata.name=n1"}
	if l, err := n1.CoreV1().Nodes().List(ctx, own); err != nil || len(l.Items) != 1 {
		t.Errorf("n1 lists its Node by name: %v", err)
	}
	if w, err := n1.CoreV1().Nodes().Watch(ctx, own); err != nil {
		t.Errorf("n1 watches its Node by name: %v", err)
	} else {
		w.Stop()
	}
	_, err = n1.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	wantCode(t, "n1 reads node n2", err, 403)
	_, err = n1.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	wantCode(t, "n1 lists every Node", err, 403)
	_, err = n1.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=n2"})
	wantCode(t, "n1 watches n2", err, 403)
	_, err = n1.CoreV1().Nodes().UpdateStatus(ctx, n2, metav1.UpdateOptions{})
	wantCode(t, "n1 writes n2's status", err, 403)
	err = n1.CoreV1().Nodes().Delete(ctx, "n2", metav1.DeleteOptions{})
	wantCode(t, "n1 deletes n2", err, 403)
	err = n1.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{})
	wantCode(t, "n1 deletes its own Node (it would shed its taints)", err, 403)

	lease := func(name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease}}
	}
	if _, err := n1.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease("n1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("n1 creates its lease: %v", err)
	}
	_, err = n1.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease("n2"), metav1.CreateOptions{})
	wantCode(t, "n1 creates n2's lease", err, 403)
	_, err = n1.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	wantCode(t, "n1 creates a lease in kube-system", err, 403)

	// Pods: only those bound to it.
	for name, nodeName := range map[string]string{"mine": "n1", "theirs": "n2"} {
		p := testPod(name)
		p.Spec.NodeName = nodeName
		if _, err := e.admin.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, testPod("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mine, err := n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(mine.Items) != 1 {
		t.Errorf("n1 lists its pods: %v (%d pods)", err, len(mine.Items))
	}
	_, err = n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	wantCode(t, "n1 lists every pod", err, 403)
	_, err = n1.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n2"})
	wantCode(t, "n1 watches n2's pods", err, 403)
	testenv.Eventually(t, 10*time.Second, "n1 reads its pod", func() error {
		_, err := n1.CoreV1().Pods("default").Get(ctx, "mine", metav1.GetOptions{})
		return err
	})
	_, err = n1.CoreV1().Pods("default").Get(ctx, "theirs", metav1.GetOptions{})
	wantCode(t, "n1 reads n2's pod", err, 403)
	status := []byte(`{"status":{"phase":"Running"}}`)
	if _, err := n1.CoreV1().Pods("default").Patch(ctx, "mine", types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("n1 patches its pod's status: %v", err)
	}
	_, err = n1.CoreV1().Pods("default").Patch(ctx, "theirs", types.MergePatchType, status, metav1.PatchOptions{}, "status")
	wantCode(t, "n1 patches n2's pod status", err, 403)
	_, err = n1.CoreV1().Pods("default").Patch(ctx, "mine", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	wantCode(t, "n1 patches its pod's spec", err, 403)
	err = n1.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{})
	wantCode(t, "n1 binds a pod", err, 403)
	_, err = n1.CoreV1().Pods("default").Create(ctx, testPod("new"), metav1.CreateOptions{})
	wantCode(t, "n1 creates a pod", err, 403)
	err = n1.CoreV1().Pods("default").Delete(ctx, "theirs", metav1.DeleteOptions{})
	wantCode(t, "n1 deletes n2's pod", err, 403)
	if err := n1.CoreV1().Pods("default").Delete(ctx, "mine", *metav1.NewDeleteOptions(0)); err != nil {
		t.Errorf("n1 deletes its pod: %v", err)
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1"}, InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "n1"}, Reason: "Started"}
	if _, err := n1.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Errorf("n1 records an event: %v", err)
	}

	// ConfigMaps: only those its pods use.
	for _, name := range []string{"used", "unused"} {
		if _, err := e.admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := testPod("with-config")
	p.Spec.NodeName = "n1"
	p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "used"}}}}
	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "n1 reads a ConfigMap its pod uses", func() error {
		_, err := n1.CoreV1().ConfigMaps("default").Get(ctx, "used", metav1.GetOptions{})
		return err
	})
	_, err = n1.CoreV1().ConfigMaps("default").Get(ctx, "unused", metav1.GetOptions{})
	wantCode(t, "n1 reads an unrelated ConfigMap", err, 403)

	// The node identity needs its group: the name alone is no kubelet.
	impostor := e.certClient(pki.NodeUser("n1"))
	_, err = impostor.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	wantCode(t, "system:node:n1 outside system:nodes", err, 403)
}

// TestInsecureByDefault: with no credentials configured, every caller is
// the admin, as before TLS existed.
func TestInsecureByDefault(t *testing.T) {
	e := newEnv(t)
	if _, err := e.cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, _ := rawGet(t, e.api.Config, "/metrics"); code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
}
