package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The review APIs beside SelfSubjectAccessReview and SubjectAccessReview
// (access_review.go): a namespace's LocalSubjectAccessReview, the rules a
// user holds (SelfSubjectRulesReview, `kubectl auth can-i --list`) and
// TokenReview. None is stored; each is answered by the authenticators and
// authorizers that guard every request.

const (
	selfSubjectRulesReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
	tokenReviewPath            = "/apis/authentication.k8s.io/v1/tokenreviews"
	// localSubjectAccessReviews is the namespaced resource's name:
	// /apis/authorization.k8s.io/v1/namespaces/<ns>/localsubjectaccessreviews.
	localSubjectAccessReviews = "localsubjectaccessreviews"
)

var (
	ssrrResource = authorizationv1.SchemeGroupVersion.WithResource("selfsubjectrulesreviews").GroupResource()
	lsarResource = authorizationv1.SchemeGroupVersion.WithResource(localSubjectAccessReviews).GroupResource()
	trResource   = authenticationv1.SchemeGroupVersion.WithResource("tokenreviews").GroupResource()
)

// reviewResources are the review APIs in discovery, as upstream lists
// them (create only): kubectl resolves `auth can-i create
// subjectaccessreviews.authorization.k8s.io` and its scope through them.
var reviewResources = map[schema.GroupVersion][]metav1.APIResource{
	authorizationv1.SchemeGroupVersion: {
		{Name: localSubjectAccessReviews, Namespaced: true, Kind: "LocalSubjectAccessReview", Verbs: []string{"create"}},
		{Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview", Verbs: []string{"create"}},
		{Name: "selfsubjectrulesreviews", Kind: "SelfSubjectRulesReview", Verbs: []string{"create"}},
		{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Verbs: []string{"create"}},
	},
	authenticationv1.SchemeGroupVersion: {
		{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Verbs: []string{"create"}},
		{Name: "tokenreviews", Kind: "TokenReview", Verbs: []string{"create"}},
	},
}

// localSubjectAccessReviewNamespace returns the namespace of a
// LocalSubjectAccessReview's path, ok false for any other path.
func localSubjectAccessReviewNamespace(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/apis/authorization.k8s.io/v1/namespaces/")
	if !ok {
		return "", false
	}
	ns, res, ok := strings.Cut(rest, "/")
	if !ok || res != localSubjectAccessReviews || ns == "" {
		return "", false
	}
	return ns, true
}

// serveLocalSubjectAccessReview is a SubjectAccessReview confined to the
// namespace of its path: asking needs create on localsubjectaccessreviews
// in that namespace (upstream's admin and edit roles grant it), and the
// review may only ask about resources in it.
func (s *Server) serveLocalSubjectAccessReview(w http.ResponseWriter, r *http.Request, ns string) {
	if _, ok := s.reviewer(w, r, lsarResource, ns); !ok {
		return
	}
	review := &authorizationv1.LocalSubjectAccessReview{}
	if !s.decodeReview(w, r, review, false) {
		return
	}
	spec := review.Spec
	var errs field.ErrorList
	switch {
	case spec.ResourceAttributes == nil:
		errs = append(errs, field.Required(field.NewPath("spec", "resourceAttributes"), ""))
	case spec.ResourceAttributes.Namespace != ns:
		errs = append(errs, field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), spec.ResourceAttributes.Namespace,
			"must match metadata.namespace"))
	}
	if spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), spec.NonResourceAttributes, "disallowed on this kind of request"))
	}
	if review.Namespace != "" && review.Namespace != ns {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), review.Namespace, "does not match the namespace of the request"))
	}
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified"))
	}
	if len(errs) > 0 {
		writeError(w, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("LocalSubjectAccessReview").GroupKind(), "", errs))
		return
	}
	u := specUser(spec)
	status, err := s.review(r, u, spec.ResourceAttributes, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	review.Namespace = ns
	review.Status = status
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "LocalSubjectAccessReview"}
	writeJSON(w, http.StatusCreated, review)
}

// serveSelfSubjectRulesReview lists what the requesting user may do in
// spec.namespace, as each authorizer can enumerate it: RBAC's rules from
// the cluster's bindings and the namespace's, AlwaysAllow everything. The
// node authorizer cannot enumerate a kubelet's rights (they depend on the
// pods bound to it): for a node the list is incomplete, with the reason,
// as upstream.
func (s *Server) serveSelfSubjectRulesReview(w http.ResponseWriter, r *http.Request) {
	u, ok := s.reviewer(w, r, ssrrResource, "")
	if !ok {
		return
	}
	review := &authorizationv1.SelfSubjectRulesReview{}
	if !s.decodeReview(w, r, review, false) {
		return
	}
	if review.Spec.Namespace == "" {
		writeError(w, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectRulesReview").GroupKind(), "",
			field.ErrorList{field.Required(field.NewPath("spec", "namespace"), "")}))
		return
	}
	rules, incomplete, evalErr := s.rulesFor(r.Context(), u, review.Spec.Namespace)
	status := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{},
		Incomplete: incomplete,
	}
	if evalErr != nil {
		status.EvaluationError = evalErr.Error()
	}
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			status.NonResourceRules = append(status.NonResourceRules, authorizationv1.NonResourceRule{
				Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
			continue
		}
		status.ResourceRules = append(status.ResourceRules, authorizationv1.ResourceRule{
			Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
	}
	review.Status = status
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectRulesReview"}
	writeJSON(w, http.StatusCreated, review)
}

// rulesLister is an authorizer that can enumerate what a user may do in a
// namespace ("" for the cluster's rules only). incomplete says the list
// may lack rules the authorizer would grant.
type rulesLister interface {
	rulesFor(ctx context.Context, u User, namespace string) (rules []rbacv1.PolicyRule, incomplete bool, err error)
}

// rulesFor asks every authorizer of the union that can enumerate rules;
// one that cannot makes the answer incomplete, as upstream's union does.
func (s *Server) rulesFor(ctx context.Context, u User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	union, ok := s.chain.Authz.(unionAuthz)
	if !ok {
		return nil, true, errors.New("the authorizer cannot enumerate rules")
	}
	var (
		rules      []rbacv1.PolicyRule
		incomplete bool
		errs       []error
	)
	for _, d := range union {
		l, ok := d.(rulesLister)
		if !ok {
			continue
		}
		rs, inc, err := l.rulesFor(ctx, u, namespace)
		rules = append(rules, rs...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rules, incomplete, errors.Join(errs...)
}

// everything is AlwaysAllow's rule set, as upstream's enumerates it.
var everything = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

func (alwaysAllow) rulesFor(context.Context, User, string) ([]rbacv1.PolicyRule, bool, error) {
	return everything, false, nil
}

// The superuser group's rights come from its binding to cluster-admin,
// which RBAC lists: the short cut adds nothing.
func (privilegedGroup) rulesFor(context.Context, User, string) ([]rbacv1.PolicyRule, bool, error) {
	return nil, false, nil
}

func (n *nodeAuthorizer) rulesFor(_ context.Context, u User, _ string) ([]rbacv1.PolicyRule, bool, error) {
	if _, ok := nodeIdentity(u); ok {
		return nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, false, nil
}

func (r *rbacAuthorizer) rulesFor(ctx context.Context, u User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("RBAC: %w", err)
	}
	rules := snap.cluster.of(u)
	if namespace != "" {
		if ns, ok := snap.namespaced[namespace]; ok {
			rules = append(rules, ns.of(u)...)
		}
	}
	return rules, false, nil
}

// of returns the rules granted to u, by name and by its groups.
func (s *subjectRules) of(u User) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, rules := range s.users[u.Name] {
		out = append(out, rules...)
	}
	for _, g := range u.Groups {
		for _, rules := range s.groups[g] {
			out = append(out, rules...)
		}
	}
	return out
}

// serveTokenReview authenticates spec.token with the apiserver's own
// token authenticators (what a bearer token on a request would be taken
// for): asking needs create on tokenreviews (upstream's
// system:auth-delegator grants it, and the node, controller-manager and
// scheduler roles). As upstream's: a token no authenticator accepts is
// authenticated false with no error, and kstep's tokens, which carry no
// audience, are valid for the apiserver's implicit one only: a review
// naming audiences without it is not authenticated, one naming it gets it
// back in status.audiences.
func (s *Server) serveTokenReview(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.reviewer(w, r, trResource, ""); !ok {
		return
	}
	review := &authenticationv1.TokenReview{}
	if !s.decodeReview(w, r, review, false) {
		return
	}
	token := review.Spec.Token
	if token == "" {
		writeError(w, apierrors.NewInvalid(authenticationv1.SchemeGroupVersion.WithKind("TokenReview").GroupKind(), "",
			field.ErrorList{field.Required(field.NewPath("spec", "token"), "")}))
		return
	}
	status := authenticationv1.TokenReviewStatus{}
	audienceOK := len(review.Spec.Audiences) == 0 || contains(review.Spec.Audiences, implicitAudience)
	// The token alone, as a request would carry it: no client certificate
	// (r.TLS is nil), so only the token authenticators can accept it.
	probe, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/", nil)
	if err != nil {
		writeError(w, err)
		return
	}
	probe.Header.Set("Authorization", "Bearer "+token)
	if u, err := s.chain.Authn.Authenticate(probe); err == nil && audienceOK {
		status.Authenticated = true
		status.User = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		if len(review.Spec.Audiences) > 0 {
			status.Audiences = []string{implicitAudience}
		}
	}
	review.Status = status
	review.Spec = authenticationv1.TokenReviewSpec{Audiences: review.Spec.Audiences} // the token is not echoed
	review.TypeMeta = metav1.TypeMeta{APIVersion: authenticationv1.SchemeGroupVersion.String(), Kind: "TokenReview"}
	writeJSON(w, http.StatusCreated, review)
}

// implicitAudience is the audience of tokens that name none: upstream's
// default --api-audiences, the service account issuer of a cluster named
// cluster.local.
const implicitAudience = "https://kubernetes.default.svc.cluster.local"
