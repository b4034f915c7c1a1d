package apiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/pki"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRuleMatching(t *testing.T) {
	pods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	status := rbacv1.PolicyRule{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"*/status"}}
	named := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"web"}}
	metrics := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/apis/*"}}
	for _, c := range []struct {
		rule rbacv1.PolicyRule
		a    Attributes
		want bool
	}{
		{pods, Attributes{Verb: "get", Resource: "pods", Name: "x"}, true},
		{pods, Attributes{Verb: "list", Resource: "pods"}, true},
		{pods, Attributes{Verb: "delete", Resource: "pods", Name: "x"}, false},
		{pods, Attributes{Verb: "get", Resource: "pods", Subresource: "status", Name: "x"}, false},
		{pods, Attributes{Verb: "get", APIGroup: "apps", Resource: "pods"}, false},
		{status, Attributes{Verb: "patch", Resource: "pods", Subresource: "status"}, true},
		{status, Attributes{Verb: "patch", Resource: "pods"}, false},
		{named, Attributes{Verb: "get", APIGroup: "apps", Resource: "deployments", Name: "web"}, true},
		{named, Attributes{Verb: "get", APIGroup: "apps", Resource: "deployments", Name: "db"}, false},
		{metrics, Attributes{Verb: "get", Path: "/metrics"}, true},
		{metrics, Attributes{Verb: "get", Path: "/apis/apps/v1"}, true},
		{metrics, Attributes{Verb: "get", Path: "/debug/pprof/"}, false},
		{pods, Attributes{Verb: "get", Path: "/metrics"}, false},
	} {
		if got := ruleAllows(&c.rule, &c.a); got != c.want {
			t.Errorf("rule %v on %s: %v, want %v", c.rule, c.a.describe(), got, c.want)
		}
	}
}

func TestParseTokens(t *testing.T) {
	tokens, err := parseTokens(strings.NewReader("# comment\nt1,alice,1,\"a,b\"\nt2,bob,2\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if u := tokens["t1"]; u.Name != "alice" || fmt.Sprint(u.Groups) != "[a b]" {
		t.Errorf("t1 = %+v", u)
	}
	if u := tokens["t2"]; u.Name != "bob" || len(u.Groups) != 0 {
		t.Errorf("t2 = %+v", u)
	}
	for _, bad := range []string{"t1,alice\n", "t1,alice,1\nt1,bob,2\n", ",alice,1\n"} {
		if _, err := parseTokens(strings.NewReader(bad), "test"); err == nil {
			t.Errorf("token file %q accepted", bad)
		}
	}
}

// BenchmarkRBACAllows: what RBAC adds to a request once the index is
// built: the bootstrap policy plus 1,000 namespaces with a RoleBinding
// each, a token user allowed by its namespace's binding.
func BenchmarkRBACAllows(b *testing.B) {
	snap := &rbacSnapshot{cluster: newSubjectRules(), namespaced: map[string]subjectRules{}}
	roles := map[string][]rbacv1.PolicyRule{}
	var bindings []*rbacv1.ClusterRoleBinding
	for _, obj := range bootstrapPolicy() {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			roles[o.Name] = o.Rules
		case *rbacv1.ClusterRoleBinding:
			bindings = append(bindings, o)
		}
	}
	for _, crb := range bindings {
		snap.cluster.add(crb.Subjects, roles[crb.RoleRef.Name])
	}
	create := []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	for i := range 1000 {
		ns := newSubjectRules()
		ns.add([]rbacv1.Subject{{Kind: rbacv1.UserKind, Name: fmt.Sprintf("user-%d", i)}}, create)
		snap.namespaced[fmt.Sprintf("ns-%d", i)] = ns
	}
	a := &Attributes{User: User{Name: "user-500", Groups: []string{groupAuthenticated}}, Verb: "create", Resource: "pods", Namespace: "ns-500"}
	master := &Attributes{User: User{Name: pki.AdminUser, Groups: []string{pki.MastersGroup, groupAuthenticated}}, Verb: "create", Resource: "pods", Namespace: "ns-500"}
	b.Run("token-user-rolebinding", func(b *testing.B) {
		for b.Loop() {
			if snap.cluster.allows(a) {
				b.Fatal("cluster-wide allow")
			}
			ns := snap.namespaced[a.Namespace]
			if !ns.allows(a) {
				b.Fatal("denied")
			}
		}
	})
	b.Run("masters", func(b *testing.B) {
		for b.Loop() {
			if d, _ := (privilegedGroup{}).decide(context.Background(), master); d != allowed {
				b.Fatal("denied")
			}
		}
	})
}
