package apiserver_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// impersonationPolicy: bob reads pods in default; team-x reads pods in
// team; alice may impersonate bob and the group team-x, and nothing else.
const impersonationPolicy = `apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-reader}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-reads, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-x-reads, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: team-x}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules:
- {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [bob]}
- {apiGroups: [""], resources: [groups], verbs: [impersonate], resourceNames: [team-x]}
- {apiGroups: [authentication.k8s.io], resources: [uids], verbs: [impersonate], resourceNames: ["1002"]}
- {apiGroups: [authentication.k8s.io], resources: [userextras/scopes], verbs: [impersonate], resourceNames: [view]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-impersonates-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
`

// kubectl --as and --as-group, and kubectl auth can-i --as: the request is
// served as the impersonated user, when RBAC's impersonate verb allows the
// impersonation, and audited with both identities; 403 otherwise.
func TestImpersonationWithKubectl(t *testing.T) {
	url, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	secure := p.Secure(t, testTokens)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) {
		secure(o)
		o.AuditLogPath, o.AuditLevel = auditPath, apiserver.AuditMetadata
	})
	e := &secureEnv{t: t, pki: p, api: api}
	e.admin = e.certClient(pki.AdminUser, pki.MastersGroup)
	admin := kubectlFor(t, e.pki.ClientConfig(t, api.Config, pki.AdminUser, pki.MastersGroup))
	alice := kubectlFor(t, e.pki.TokenConfig(api.Config, "alice-token"))
	run := func(k func(...string) (string, error), args ...string) string {
		t.Helper()
		out, err := k(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	refused := func(k func(...string) (string, error), args ...string) {
		t.Helper()
		if out, err := k(args...); err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("kubectl %s: %v, want forbidden\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(admin, "run", "p", "--image=registry.kstep.local/app:v1")
	run(admin, "run", "q", "-n", "default", "--image=registry.kstep.local/app:v1")

	// The admin --as bob, before bob has any role: bob's answer, not the
	// admin's.
	refused(admin, "--as=bob", "get", "pods")
	if out, _ := admin("auth", "can-i", "list", "pods", "--as=bob"); !strings.HasPrefix(out, "no") {
		t.Errorf("admin: auth can-i list pods --as=bob before bob's role: %q, want no", out)
	}
	if out := run(admin, "auth", "can-i", "list", "pods"); strings.TrimSpace(out) != "yes" {
		t.Errorf("admin: auth can-i list pods: %q, want yes", out)
	}

	f := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(f, []byte(impersonationPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	run(admin, "apply", "-f", f)
	run(admin, "run", "r", "-n", "team", "--image=registry.kstep.local/app:v1")
	testenv.Eventually(t, 10*time.Second, "the admin --as bob lists pods", func() error {
		if out, err := admin("--as=bob", "get", "pods"); err != nil {
			return errors.New(out)
		}
		return nil
	})
	// Least privilege, checked with --as: bob reads, and may not delete.
	refused(admin, "--as=bob", "delete", "pod", "p")
	if _, err := e.admin.CoreV1().Pods("default").Get(ctxT(t), "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod p after bob's refused delete: %v", err)
	}
	for verb, want := range map[string]string{"list": "yes", "delete": "no"} {
		if out, _ := admin("auth", "can-i", verb, "pods", "--as=bob"); !strings.HasPrefix(out, want) {
			t.Errorf("admin: auth can-i %s pods --as=bob: %q, want %s", verb, out, want)
		}
	}
	refused(admin, "--as=bob", "get", "pods", "-n", "team")
	run(admin, "--as=bob", "--as-group=team-x", "get", "pods", "-n", "team")

	// The admin --as a node: NodeRestriction holds the node to its rules.
	if _, err := e.certClient(pki.NodeUser("n1"), pki.NodesGroup).CoreV1().Nodes().Create(ctxT(t), probeNode(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused(admin, "--as=system:node:n1", "--as-group=system:nodes", "label", "node", "n1", "node-role.kubernetes.io/worker=")
	run(admin, "--as=system:node:n1", "--as-group=system:nodes", "label", "node", "n1", "example.com/rack=r1")
	refused(admin, "--as=system:node:n1", "--as-group=system:nodes", "get", "node", "n2")

	// alice may impersonate bob and team-x, and nobody and nothing else.
	run(alice, "--as=bob", "get", "pods")
	refused(alice, "get", "pods")
	run(alice, "--as=bob", "--as-group=team-x", "get", "pods", "-n", "team")
	if out := run(alice, "auth", "can-i", "list", "pods", "-n", "team", "--as=bob", "--as-group=team-x"); strings.TrimSpace(out) != "yes" {
		t.Errorf("alice: auth can-i list pods -n team --as=bob --as-group=team-x: %q", out)
	}
	refused(alice, "--as=carol", "get", "pods")
	refused(alice, "--as=kubernetes-admin", "get", "pods")
	refused(alice, "--as=bob", "--as-group=system:masters", "get", "pods")
	refused(alice, "--as=system:serviceaccount:default:robot", "get", "pods")
	run(alice, "--as=bob", "--as-uid=1002", "get", "pods")
	refused(alice, "--as=bob", "--as-uid=0", "get", "pods")

	// Extras (kubectl has no flag for them): client-go's Impersonate.
	extra := func(v string) error {
		c := e.pki.TokenConfig(api.Config, "alice-token")
		c.Impersonate = rest.ImpersonationConfig{UserName: "bob", Extra: map[string][]string{"scopes": {v}}}
		_, err := e.clientFor(c).CoreV1().Pods("default").List(ctxT(t), metav1.ListOptions{})
		return err
	}
	if err := extra("view"); err != nil {
		t.Errorf("alice as bob with extra scopes=view: %v", err)
	}
	wantCode(t, "alice as bob with extra scopes=admin", extra("admin"), 403)

	// Groups without a user are a 400; an access review as bob answers
	// for bob.
	hc, err := rest.HTTPClientFor(e.pki.TokenConfig(api.Config, "alice-token"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", api.URL+"/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Impersonate-Group", "team-x")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("Impersonate-Group without Impersonate-User: HTTP %d, want 400", resp.StatusCode)
	}
	asBob := e.pki.TokenConfig(api.Config, "alice-token")
	asBob.Impersonate.UserName = "bob"
	review, err := e.clientFor(asBob).AuthorizationV1().SelfSubjectAccessReviews().Create(ctxT(t), &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "bob"}}}, metav1.CreateOptions{})
	if err != nil || review.Status.Allowed {
		t.Errorf("bob's own access review of impersonating bob: %v %+v, want denied (it is alice who may)", err, review.Status)
	}

	// The audit log: both identities of a served impersonation, and the
	// refused ones.
	type auditUser struct {
		Username string
		UID      string
		Groups   []string
	}
	type event struct {
		Verb             string
		User             auditUser
		ImpersonatedUser *auditUser
		ObjectRef        struct{ Resource, Namespace, Name string }
		ResponseStatus   struct{ Code int }
	}
	testenv.Eventually(t, 10*time.Second, "the audit events of impersonated requests", func() error {
		f, err := os.Open(auditPath)
		if err != nil {
			return err
		}
		defer f.Close()
		var servedAsBob, refusedCarol, deniedDelete bool
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return err
			}
			as := ev.ImpersonatedUser
			switch {
			case ev.User.Username == "alice" && as != nil && as.Username == "bob" && as.UID == "1002" && ev.Verb == "list" && ev.ResponseStatus.Code == 200:
				servedAsBob = true
			case ev.User.Username == pki.AdminUser && as != nil && as.Username == "bob" && ev.Verb == "delete" && ev.ResponseStatus.Code == 403:
				deniedDelete = true
			case ev.User.Username == "alice" && as == nil && ev.Verb == "list" && ev.ResponseStatus.Code == 403:
				refusedCarol = true
			}
		}
		if !servedAsBob || !refusedCarol || !deniedDelete {
			return fmt.Errorf("served as bob %v, refused impersonation %v, bob's refused delete %v", servedAsBob, refusedCarol, deniedDelete)
		}
		return nil
	})
}
