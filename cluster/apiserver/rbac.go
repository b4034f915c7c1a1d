package apiserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kstep-dev/kstep/cluster/storage"
	rbacv1 "k8s.io/api/rbac/v1"
)

// rbacAuthorizer evaluates rbac.authorization.k8s.io/v1 objects. It never
// reads etcd on a request: it answers from an index of the bindings, built
// from the watch caches of the four RBAC resources and rebuilt when one of
// them moves. A request therefore sees a role change once this apiserver's
// cache has it, milliseconds after the write, as upstream's informers do.
type rbacAuthorizer struct {
	cachers [4]*storage.Cacher // roles, clusterroles, rolebindings, clusterrolebindings

	snap atomic.Pointer[rbacSnapshot]
	mu   sync.Mutex // one rebuild at a time
}

// rbacSnapshot is the bindings at the caches' revisions rvs, each subject
// mapped to the rules it was granted.
type rbacSnapshot struct {
	rvs        [4]int64
	cluster    subjectRules
	namespaced map[string]subjectRules
}

// subjectRules: the rule sets granted to users and to groups.
type subjectRules struct {
	users  map[string][][]rbacv1.PolicyRule
	groups map[string][][]rbacv1.PolicyRule
}

func (s *subjectRules) add(subjects []rbacv1.Subject, rules []rbacv1.PolicyRule) {
	if len(rules) == 0 {
		return
	}
	for _, sub := range subjects {
		switch sub.Kind {
		case rbacv1.UserKind:
			s.users[sub.Name] = append(s.users[sub.Name], rules)
		case rbacv1.GroupKind:
			s.groups[sub.Name] = append(s.groups[sub.Name], rules)
		case rbacv1.ServiceAccountKind:
			u := "system:serviceaccount:" + sub.Namespace + ":" + sub.Name
			s.users[u] = append(s.users[u], rules)
		}
	}
}

func newSubjectRules() subjectRules {
	return subjectRules{users: map[string][][]rbacv1.PolicyRule{}, groups: map[string][][]rbacv1.PolicyRule{}}
}

func (s *Server) newRBAC() *rbacAuthorizer {
	a := &rbacAuthorizer{}
	for i, res := range []string{"roles", "clusterroles", "rolebindings", "clusterrolebindings"} {
		a.cachers[i] = s.cacher(s.resources[rbacv1.SchemeGroupVersion.WithResource(res)])
	}
	return a
}

func (r *rbacAuthorizer) decide(ctx context.Context, a *Attributes) (decision, string) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return noOpinion, fmt.Sprintf("RBAC: %v", err)
	}
	if snap.cluster.allows(a) {
		return allowed, ""
	}
	if a.Namespace != "" {
		if ns, ok := snap.namespaced[a.Namespace]; ok && ns.allows(a) {
			return allowed, ""
		}
	}
	return noOpinion, fmt.Sprintf("RBAC: User %q cannot %s", a.User.Name, a.describe())
}

func (s *subjectRules) allows(a *Attributes) bool {
	for _, rules := range s.users[a.User.Name] {
		if rulesAllow(rules, a) {
			return true
		}
	}
	for _, g := range a.User.Groups {
		for _, rules := range s.groups[g] {
			if rulesAllow(rules, a) {
				return true
			}
		}
	}
	return false
}

// snapshot returns the index for the caches' current revisions, rebuilding
// it when they moved.
func (r *rbacAuthorizer) snapshot(ctx context.Context) (*rbacSnapshot, error) {
	cur := r.snap.Load()
	if cur != nil && cur.rvs == r.revisions() {
		return cur, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur = r.snap.Load(); cur != nil && cur.rvs == r.revisions() {
		return cur, nil
	}
	next, err := r.build(ctx)
	if err != nil {
		return nil, err
	}
	r.snap.Store(next)
	return next, nil
}

func (r *rbacAuthorizer) revisions() [4]int64 {
	var rvs [4]int64
	for i, c := range r.cachers {
		rvs[i] = c.RV()
	}
	return rvs
}

func (r *rbacAuthorizer) build(ctx context.Context) (*rbacSnapshot, error) {
	// Revisions first: a change after them makes the next request rebuild.
	snap := &rbacSnapshot{rvs: r.revisions(), cluster: newSubjectRules(), namespaced: map[string]subjectRules{}}
	var lists [4][]*storage.Entry
	for i, c := range r.cachers {
		es, _, err := c.List(ctx, 0, storage.Filter{})
		if err != nil {
			return nil, err
		}
		lists[i] = es
	}
	roles := map[string][]rbacv1.PolicyRule{} // namespace/name
	for _, e := range lists[0] {
		ro := e.Object().(*rbacv1.Role)
		roles[ro.Namespace+"/"+ro.Name] = ro.Rules
	}
	clusterRoles := map[string][]rbacv1.PolicyRule{}
	for _, e := range lists[1] {
		cr := e.Object().(*rbacv1.ClusterRole)
		clusterRoles[cr.Name] = cr.Rules
	}
	for _, e := range lists[2] {
		rb := e.Object().(*rbacv1.RoleBinding)
		var rules []rbacv1.PolicyRule
		switch rb.RoleRef.Kind {
		case "Role":
			rules = roles[rb.Namespace+"/"+rb.RoleRef.Name]
		case "ClusterRole":
			rules = clusterRoles[rb.RoleRef.Name]
		}
		// A namespace's bindings grant no non-resource URLs.
		var resourceRules []rbacv1.PolicyRule
		for _, rule := range rules {
			if len(rule.NonResourceURLs) == 0 {
				resourceRules = append(resourceRules, rule)
			}
		}
		ns, ok := snap.namespaced[rb.Namespace]
		if !ok {
			ns = newSubjectRules()
			snap.namespaced[rb.Namespace] = ns
		}
		ns.add(rb.Subjects, resourceRules)
	}
	for _, e := range lists[3] {
		crb := e.Object().(*rbacv1.ClusterRoleBinding)
		if crb.RoleRef.Kind == "ClusterRole" {
			snap.cluster.add(crb.Subjects, clusterRoles[crb.RoleRef.Name])
		}
	}
	return snap, nil
}

// rulesAllow reports whether any rule covers the request.
func rulesAllow(rules []rbacv1.PolicyRule, a *Attributes) bool {
	for i := range rules {
		if ruleAllows(&rules[i], a) {
			return true
		}
	}
	return false
}

func ruleAllows(r *rbacv1.PolicyRule, a *Attributes) bool {
	if !matchesAny(r.Verbs, a.Verb) {
		return false
	}
	if a.Path != "" {
		for _, u := range r.NonResourceURLs {
			if u == "*" || u == a.Path || (strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*"))) {
				return true
			}
		}
		return false
	}
	if !matchesAny(r.APIGroups, a.APIGroup) {
		return false
	}
	if !resourceMatches(r.Resources, a.Resource, a.Subresource) {
		return false
	}
	if len(r.ResourceNames) == 0 {
		return true
	}
	return a.Name != "" && contains(r.ResourceNames, a.Name)
}

func matchesAny(list []string, s string) bool {
	for _, x := range list {
		if x == "*" || x == s {
			return true
		}
	}
	return false
}

// resourceMatches: "*" is every resource and subresource, "pods" the pods
// alone, "pods/status" that subresource, "*/status" it on every resource.
func resourceMatches(rules []string, resource, sub string) bool {
	want := resource
	if sub != "" {
		want += "/" + sub
	}
	for _, r := range rules {
		if r == "*" || r == want || (sub != "" && r == "*/"+sub) {
			return true
		}
	}
	return false
}
