package apiserver

import (
	"net/http"
	"reflect"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// selfSubjectAccessReviewPath is where a user asks the authorizers about
// itself (kubectl auth can-i). Nothing is stored: the answer is computed
// by the same authorizers that guard every request.
const selfSubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

var ssarResource = authorizationv1.SchemeGroupVersion.WithResource("selfsubjectaccessreviews").GroupResource()

// serveSelfSubjectAccessReview answers a SelfSubjectAccessReview for the
// authenticated user; asking needs create on selfsubjectaccessreviews
// (system:basic-user grants it to every authenticated user).
func (s *Server) serveSelfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	u, ok := s.reviewer(w, r, ssarResource, "")
	if !ok {
		return
	}
	review := &authorizationv1.SelfSubjectAccessReview{}
	if !s.decodeReview(w, r, review, false) {
		return
	}
	status, err := s.review(r, u, review.Spec.ResourceAttributes, review.Spec.NonResourceAttributes)
	if err != nil {
		writeError(w, err)
		return
	}
	review.Status = status
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectAccessReview"}
	writeJSON(w, http.StatusCreated, review)
}

// subjectAccessReviewPath is where a caller asks the authorizers about
// any user: how a kubelet authorizes the requests to its own server
// (upstream's webhook authorizer), the apiserver's among them.
const subjectAccessReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

var sarResource = authorizationv1.SchemeGroupVersion.WithResource("subjectaccessreviews").GroupResource()

// serveSubjectAccessReview answers a SubjectAccessReview for the spec's
// user, groups, uid and extra, exactly as that user's request would be
// authorized; asking needs create on subjectaccessreviews (the node
// authorizer grants it to every kubelet, as upstream's system:node role).
func (s *Server) serveSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.reviewer(w, r, sarResource, ""); !ok {
		return
	}
	review := &authorizationv1.SubjectAccessReview{}
	if !s.decodeReview(w, r, review, false) {
		return
	}
	spec := review.Spec
	if spec.User == "" && len(spec.Groups) == 0 {
		writeError(w, invalidReview("spec.user: Invalid value: \"\": at least one of user or group must be specified"))
		return
	}
	u := specUser(spec)
	status, err := s.review(r, u, spec.ResourceAttributes, spec.NonResourceAttributes)
	if err != nil {
		writeError(w, err)
		return
	}
	review.Status = status
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SubjectAccessReview"}
	writeJSON(w, http.StatusCreated, review)
}

func invalidReview(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: "SubjectAccessReview is invalid: " + msg,
		Details: &metav1.StatusDetails{Group: authorizationv1.GroupName, Kind: "SubjectAccessReview"}}}
}

// decodeReview reads a review's body (JSON or protobuf; bounded in size
// and time, readBody) into review, answering a failure itself. An empty
// body decodes to nothing only when emptyOK.
func (s *Server) decodeReview(w http.ResponseWriter, r *http.Request, review runtime.Object, emptyOK bool) bool {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return false
	}
	if len(body) == 0 && emptyOK {
		return true
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), protobufType) {
		_, _, err = protobufCodec.Decode(body, nil, review)
	} else {
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(body, review)
	}
	if err != nil {
		writeError(w, badRequest("the %s could not be decoded: %v", reflect.TypeOf(review).Elem().Name(), err))
		return false
	}
	return true
}

// review asks the authorizers whether u may do what the attributes say:
// the same authorizers that guard every request.
func (s *Server) review(r *http.Request, u User, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	a := Attributes{User: u}
	switch {
	case ra != nil && nra != nil:
		return authorizationv1.SubjectAccessReviewStatus{}, invalidReview("spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified")
	case ra != nil:
		a.Verb, a.APIGroup, a.Resource, a.Subresource, a.Namespace, a.Name = ra.Verb, ra.Group, ra.Resource, ra.Subresource, ra.Namespace, ra.Name
		if ra.FieldSelector != nil {
			a.FieldSelector = ra.FieldSelector.RawSelector
		}
	case nra != nil:
		a.Verb, a.Path = nra.Verb, nra.Path
	default:
		return authorizationv1.SubjectAccessReviewStatus{}, badRequest("spec.resourceAttributes or spec.nonResourceAttributes is required")
	}
	if err := s.chain.Authz.Authorize(r.Context(), a); err != nil {
		return authorizationv1.SubjectAccessReviewStatus{Reason: err.Error()}, nil
	}
	return authorizationv1.SubjectAccessReviewStatus{Allowed: true}, nil
}

// selfSubjectReviewPath is where a user asks who the apiserver takes it for
// (kubectl auth whoami): the authenticated user after impersonation.
const selfSubjectReviewPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

var ssrResource = authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews").GroupResource()

// serveSelfSubjectReview answers a SelfSubjectReview with the request's
// user; asking needs create on selfsubjectreviews (system:basic-user
// grants it, as upstream). The review has no spec, but its body (kubectl
// sends one; none is taken too) is read and decoded before the answer:
// over HTTP/2 an answer before the body's end resets the client's stream,
// which then failed now and then.
func (s *Server) serveSelfSubjectReview(w http.ResponseWriter, r *http.Request) {
	u, ok := s.reviewer(w, r, ssrResource, "")
	if !ok {
		return
	}
	if !s.decodeReview(w, r, &authenticationv1.SelfSubjectReview{}, true) {
		return
	}
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	review := &authenticationv1.SelfSubjectReview{
		TypeMeta:   metav1.TypeMeta{APIVersion: authenticationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectReview"},
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: info},
	}
	writeJSON(w, http.StatusCreated, review)
}

// reviewer admits a review: a POST by an authenticated user allowed to
// create the review resource gr (in namespace ns, for a namespaced one).
// It answers the refusal itself.
func (s *Server) reviewer(w http.ResponseWriter, r *http.Request, gr schema.GroupResource, ns string) (User, bool) {
	if r.Method != http.MethodPost {
		writeError(w, apierrors.NewMethodNotSupported(gr, strings.ToLower(r.Method)))
		return User{}, false
	}
	u, ok := userFrom(r.Context())
	if !ok {
		writeError(w, apierrors.NewUnauthorized("Unauthorized"))
		return User{}, false
	}
	asking := Attributes{User: u, Verb: "create", APIGroup: gr.Group, Resource: gr.Resource, Namespace: ns}
	if err := s.chain.Authz.Authorize(r.Context(), asking); err != nil {
		writeError(w, apierrors.NewForbidden(gr, "", err))
		return User{}, false
	}
	return u, true
}

// specUser is the user a (Local)SubjectAccessReview's spec asks about.
func specUser(spec authorizationv1.SubjectAccessReviewSpec) User {
	u := User{Name: spec.User, UID: spec.UID, Groups: append([]string(nil), spec.Groups...)}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = append([]string(nil), v...)
		}
	}
	return u
}
