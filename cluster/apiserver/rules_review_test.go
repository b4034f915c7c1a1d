package apiserver_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// canIEnv: namespace team with ServiceAccount builder, which a Role lets
// get and list pods and create configmaps there; nothing else is granted
// but upstream's bootstrap roles.
func canIEnv(t *testing.T) *secureEnv {
	t.Helper()
	e := newSecureEnv(t)
	ctx := ctxT(t)
	if _, err := e.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "team"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
	}}
	if _, err := e.admin.RbacV1().Roles("team").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "builder"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "team"}}}
	if _, err := e.admin.RbacV1().RoleBindings("team").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC answers from its watch caches: wait until they hold the binding.
	testenv.Eventually(t, 10*time.Second, "the builder binding in RBAC", func() error {
		r, err := e.admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: builderSA, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team"}}}, metav1.CreateOptions{})
		if err == nil && !r.Status.Allowed {
			err = errors.New(r.Status.Reason)
		}
		return err
	})
	return e
}

const builderSA = "system:serviceaccount:team:builder"

// TestKubectlAuthCanI: real kubectl's `auth can-i` as the admin, as a
// namespace's ServiceAccount (impersonated by the admin, as `--as` does)
// and as a node, against a table of expected answers; each answer is also
// the one a SubjectAccessReview for that user gives (the authorizers'
// own), and `--list` lists the rules RBAC granted.
func TestKubectlAuthCanI(t *testing.T) {
	e := canIEnv(t)
	ctx := ctxT(t)
	adminCfg := e.certClientConfig(pki.AdminUser, pki.MastersGroup)
	admin := kubectlFor(t, adminCfg)
	node := kubectlFor(t, e.certClientConfig(pki.NodeUser("n1"), pki.NodesGroup))
	asSA := func(args ...string) (string, error) { return admin(append(args, "--as", builderSA)...) }

	type who struct {
		name    string
		kubectl func(...string) (string, error)
		user    string
		groups  []string
	}
	adminW := who{"admin", admin, pki.AdminUser, []string{pki.MastersGroup, "system:authenticated"}}
	saW := who{"serviceaccount", asSA, builderSA, []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"}}
	nodeW := who{"node", node, pki.NodeUser("n1"), []string{pki.NodesGroup, "system:authenticated"}}
	for _, c := range []struct {
		who  who
		args []string // after "auth can-i"
		ra   *authorizationv1.ResourceAttributes
		nra  *authorizationv1.NonResourceAttributes
		want bool
	}{
		{adminW, []string{"create", "pods", "-n", "team"}, &authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "team"}, nil, true},
		{adminW, []string{"delete", "nodes"}, &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes"}, nil, true},
		{adminW, []string{"get", "/metrics"}, nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}, true},
		{saW, []string{"list", "pods", "-n", "team"}, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team"}, nil, true},
		{saW, []string{"create", "configmaps", "-n", "team"}, &authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: "team"}, nil, true},
		{saW, []string{"delete", "pods", "-n", "team"}, &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "team"}, nil, false},
		{saW, []string{"list", "pods", "-n", "default"}, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "default"}, nil, false},
		{saW, []string{"get", "secrets", "-n", "team"}, &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "team"}, nil, false},
		{saW, []string{"get", "/metrics"}, nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}, false},
		{nodeW, []string{"get", "nodes/n1"}, &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Name: "n1"}, nil, true},
		{nodeW, []string{"create", "subjectaccessreviews.authorization.k8s.io"}, &authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, nil, true},
		{nodeW, []string{"create", "tokenreviews.authentication.k8s.io"}, &authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, nil, true},
		{nodeW, []string{"list", "secrets", "-A"}, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, nil, false},
		{nodeW, []string{"delete", "nodes/n1"}, &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes", Name: "n1"}, nil, false},
	} {
		name := c.who.name + " " + strings.Join(c.args, " ")
		out, err := c.who.kubectl(append([]string{"auth", "can-i"}, c.args...)...)
		var exit *exec.ExitError
		got := err == nil
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Errorf("%s: %v\n%s", name, err, out)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n") // warnings first, the answer last
		if want := map[bool]string{true: "yes", false: "no"}[c.want]; got != c.want || !strings.HasPrefix(lines[len(lines)-1], want) || strings.Contains(out, "doesn't have a resource type") {
			t.Errorf("kubectl auth can-i %s: %q (exit 0: %v), want %s", name, strings.TrimSpace(out), got, want)
		}
		sar, err := e.admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: c.who.user, Groups: c.who.groups, ResourceAttributes: c.ra, NonResourceAttributes: c.nra}}, metav1.CreateOptions{})
		if err != nil || sar.Status.Allowed != c.want {
			t.Errorf("%s: SubjectAccessReview %+v %v, want allowed %v (kubectl said %v)", name, sar.Status, err, c.want, got)
		}
	}

	// --list: the ServiceAccount's rules in team are the Role's and the
	// bootstrap ones every authenticated user holds; in default only the
	// bootstrap ones.
	out, err := asSA("auth", "can-i", "--list", "-n", "team")
	if err != nil {
		t.Fatalf("can-i --list as the ServiceAccount: %v\n%s", err, out)
	}
	for _, line := range [][]string{
		{"pods", "[get list]"},
		{"configmaps", "[create]"},
		{"selfsubjectaccessreviews.authorization.k8s.io", "[create]"},
		{"selfsubjectrulesreviews.authorization.k8s.io", "[create]"},
		{"[/api/*]", "[get]"},
	} {
		if !hasRow(out, line...) {
			t.Errorf("can-i --list -n team as the ServiceAccount: no row %v in\n%s", line, out)
		}
	}
	if hasRow(out, "secrets") || hasRow(out, "[/metrics]") {
		t.Errorf("can-i --list -n team as the ServiceAccount lists what it may not do:\n%s", out)
	}
	if out, err := asSA("auth", "can-i", "--list", "-n", "default"); err != nil || hasRow(out, "pods", "[get list]") {
		t.Errorf("can-i --list -n default as the ServiceAccount: %v, want no pods row:\n%s", err, out)
	}
	if out, err := admin("auth", "can-i", "--list"); err != nil || !hasRow(out, "*.*", "[*]") {
		t.Errorf("can-i --list as the admin: %v, want *.* [*]:\n%s", err, out)
	}
	// A node's rights depend on its pods: the node authorizer cannot
	// enumerate them, and the list says it is incomplete.
	rules, err := e.certClient(pki.NodeUser("n1"), pki.NodesGroup).AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
	if err != nil || !rules.Status.Incomplete || !strings.Contains(rules.Status.EvaluationError, "node authorizer") {
		t.Errorf("a node's rules review: %+v %v, want incomplete with the node authorizer's reason", rules, err)
	}
	_, err = e.admin.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
	wantCode(t, "a rules review without a namespace", err, 422)
}

// hasRow reports whether a `kubectl auth can-i --list` table has a row
// whose first column is cols[0] and whose last is cols[1] (when given).
func hasRow(table string, cols ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != cols[0] {
			continue
		}
		if len(cols) == 1 || strings.HasSuffix(strings.TrimSpace(line), cols[len(cols)-1]) {
			return true
		}
	}
	return false
}

// LocalSubjectAccessReview: asked in a namespace, about that namespace
// only; asking needs create on localsubjectaccessreviews there.
func TestLocalSubjectAccessReview(t *testing.T) {
	e := canIEnv(t)
	ctx := ctxT(t)
	lsar := func(cs *kubernetes.Clientset, ns string, ra *authorizationv1.ResourceAttributes) (*authorizationv1.LocalSubjectAccessReview, error) {
		return cs.AuthorizationV1().LocalSubjectAccessReviews(ns).Create(ctx, &authorizationv1.LocalSubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: builderSA, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: ra}}, metav1.CreateOptions{})
	}
	r, err := lsar(e.admin, "team", &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team"})
	if err != nil || !r.Status.Allowed || r.Namespace != "team" {
		t.Errorf("list pods in team: %+v %v, want allowed", r, err)
	}
	r, err = lsar(e.admin, "team", &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "team"})
	if err != nil || r.Status.Allowed || r.Status.Reason == "" {
		t.Errorf("delete pods in team: %+v %v, want denied with a reason", r, err)
	}
	_, err = lsar(e.admin, "team", &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "default"})
	wantCode(t, "a review in team about default", err, 422)
	_, err = lsar(e.admin, "team", nil)
	wantCode(t, "a review without resource attributes", err, 422)
	// bob may not ask in team, until a Role lets him.
	bob := e.tokenClient("bob-token")
	_, err = lsar(bob, "team", &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team"})
	wantCode(t, "bob asks in team", err, 403)
	grant(t, e, "bob", rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"localsubjectaccessreviews"}})
	testenv.Eventually(t, 10*time.Second, "bob may ask", func() error {
		r, err := lsar(bob, "team", &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team"})
		if err == nil && !r.Status.Allowed {
			t.Errorf("bob's review: %+v, want allowed", r.Status)
		}
		return err
	})
}

// TokenReview: a known token is its user, an unknown one is
// unauthenticated with no error, audiences other than the apiserver's own
// are refused, the token is not echoed, and asking needs create on
// tokenreviews (system:auth-delegator).
func TestTokenReview(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	review := func(cs *kubernetes.Clientset, token string, auds ...string) (*authenticationv1.TokenReview, error) {
		return cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: auds}}, metav1.CreateOptions{})
	}
	r, err := review(e.admin, "alice-token")
	if err != nil || !r.Status.Authenticated || r.Status.User.Username != "alice" || r.Status.User.UID != "1001" ||
		!strings.Contains(strings.Join(r.Status.User.Groups, ","), "team-a") || r.Spec.Token != "" {
		t.Errorf("alice's token: %+v %v", r, err)
	}
	r, err = review(e.admin, "no-such-token")
	if err != nil || r.Status.Authenticated || r.Status.Error != "" {
		t.Errorf("an unknown token: %+v %v, want unauthenticated, no error", r.Status, err)
	}
	r, err = review(e.admin, "alice-token", "https://kubernetes.default.svc.cluster.local")
	if err != nil || !r.Status.Authenticated || len(r.Status.Audiences) != 1 {
		t.Errorf("alice's token for the apiserver's audience: %+v %v", r.Status, err)
	}
	r, err = review(e.admin, "alice-token", "vault")
	if err != nil || r.Status.Authenticated {
		t.Errorf("alice's token for another audience: %+v %v, want unauthenticated", r.Status, err)
	}
	_, err = review(e.admin, "")
	wantCode(t, "no token", err, 422)
	_, err = review(e.tokenClient("bob-token"), "alice-token")
	wantCode(t, "bob asks", err, 403)
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-delegates"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}
	if _, err := e.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "bob delegates", func() error {
		r, err := review(e.tokenClient("bob-token"), "alice-token")
		if err == nil && r.Status.User.Username != "alice" {
			t.Errorf("bob's review of alice's token: %+v", r.Status)
		}
		return err
	})
}
