package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Impersonation (kubectl --as, --as-group, --as-uid): a request with an
// Impersonate-User header, and optionally Impersonate-Group (repeated),
// Impersonate-Uid and Impersonate-Extra-<key>, is served as that user once
// the authenticated requester is authorized to impersonate each of them,
// as upstream: verb impersonate on users, groups or serviceaccounts (a
// system:serviceaccount:<ns>:<name> user) in the core group, and on uids
// and userextras/<key> in authentication.k8s.io. A request that may not is
// a 403 and nothing of it is served; groups, a uid or extras without a user
// are a 400. The rest of the chain (authorization, admission, the in-flight
// lanes, access reviews) sees only the impersonated user; the audit log
// records both.

// impersonatorKey carries, in an impersonated request's context, the user
// who authenticated.
type impersonatorKey struct{}

// impersonatorFrom returns who authenticated a request served as another
// user.
func impersonatorFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(impersonatorKey{}).(User)
	return u, ok
}

// serviceAccountPrefix begins a service account's user name.
const serviceAccountPrefix = "system:serviceaccount:"

// impersonationRequest is one thing a request asks to act as, with what
// authorizing it takes.
type impersonationRequest struct {
	group, resource, sub, namespace, name string
}

// impersonate returns the user r asks to be served as, after authorizing
// requester for each part of it; ok is false when r asks for none. The
// impersonation headers are removed from r.
func (s *Server) impersonate(r *http.Request, requester User) (as User, ok bool, err error) {
	h := r.Header
	name := h.Get(authenticationv1.ImpersonateUserHeader)
	groups := h.Values(authenticationv1.ImpersonateGroupHeader)
	uid := h.Get(authenticationv1.ImpersonateUIDHeader)
	extra := map[string][]string{}
	for k, vs := range h {
		if suffix, found := strings.CutPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix); found {
			key := strings.ToLower(suffix)
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			extra[key] = append(extra[key], vs...)
		}
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return User{}, false, badRequest("impersonating groups, a uid or extras needs Impersonate-User too")
		}
		return requester, false, nil
	}
	var reqs []impersonationRequest
	as = User{Name: name, UID: uid}
	if ns, sa, isSA := splitServiceAccount(name); isSA {
		reqs = append(reqs, impersonationRequest{resource: "serviceaccounts", namespace: ns, name: sa})
		if len(groups) == 0 {
			// A service account's groups are fixed: its own when none are asked for.
			as.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	} else {
		reqs = append(reqs, impersonationRequest{resource: "users", name: name})
	}
	for _, g := range groups {
		reqs = append(reqs, impersonationRequest{resource: "groups", name: g})
		as.Groups = append(as.Groups, g)
	}
	for key, vs := range extra {
		for _, v := range vs {
			reqs = append(reqs, impersonationRequest{group: authenticationv1.GroupName, resource: "userextras", sub: key, name: v})
		}
	}
	if len(extra) > 0 {
		as.Extra = extra
	}
	if uid != "" {
		reqs = append(reqs, impersonationRequest{group: authenticationv1.GroupName, resource: "uids", name: uid})
	}
	for _, ir := range reqs {
		a := Attributes{User: requester, Verb: "impersonate", APIGroup: ir.group, Resource: ir.resource, Subresource: ir.sub, Namespace: ir.namespace, Name: ir.name}
		if err := s.chain.Authz.Authorize(r.Context(), a); err != nil {
			return User{}, false, apierrors.NewForbidden(schema.GroupResource{Group: ir.group, Resource: ir.resource}, ir.name,
				fmt.Errorf("User %q cannot impersonate: %v", requester.Name, err))
		}
	}
	// As upstream: the impersonated user is authenticated unless it is
	// anonymous or its groups say otherwise.
	switch {
	case name == "system:anonymous":
		as.Groups = addString(as.Groups, "system:unauthenticated")
	case !contains(as.Groups, groupAuthenticated) && !contains(as.Groups, "system:unauthenticated"):
		as.Groups = append(as.Groups, groupAuthenticated)
	}
	for k := range h {
		if k == authenticationv1.ImpersonateUserHeader || k == authenticationv1.ImpersonateGroupHeader || k == authenticationv1.ImpersonateUIDHeader ||
			strings.HasPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			h.Del(k)
		}
	}
	return as, true, nil
}

// splitServiceAccount reads system:serviceaccount:<namespace>:<name>.
func splitServiceAccount(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(validation.IsDNS1123Label(parts[0])) > 0 || len(validation.IsDNS1123Subdomain(parts[1])) > 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
