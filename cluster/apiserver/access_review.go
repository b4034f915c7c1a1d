package apiserver

import (
	"io"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	u, ok := s.selfReviewer(w, r, ssarResource)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes))
	if err != nil {
		writeError(w, badRequest("reading the request body: %v", err))
		return
	}
	review := &authorizationv1.SelfSubjectAccessReview{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), protobufType) {
		_, _, err = protobufCodec.Decode(body, nil, review)
	} else {
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(body, review)
	}
	if err != nil {
		writeError(w, badRequest("the SelfSubjectAccessReview could not be decoded: %v", err))
		return
	}
	a := Attributes{User: u}
	switch spec := review.Spec; {
	case spec.ResourceAttributes != nil:
		ra := spec.ResourceAttributes
		a.Verb, a.APIGroup, a.Resource, a.Subresource, a.Namespace, a.Name = ra.Verb, ra.Group, ra.Resource, ra.Subresource, ra.Namespace, ra.Name
	case spec.NonResourceAttributes != nil:
		a.Verb, a.Path = spec.NonResourceAttributes.Verb, spec.NonResourceAttributes.Path
	default:
		writeError(w, badRequest("spec.resourceAttributes or spec.nonResourceAttributes is required"))
		return
	}
	review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	if err := s.chain.Authz.Authorize(r.Context(), a); err != nil {
		review.Status = authorizationv1.SubjectAccessReviewStatus{Reason: err.Error()}
	}
	review.TypeMeta = metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectAccessReview"}
	writeJSON(w, http.StatusCreated, review)
}

// selfSubjectReviewPath is where a user asks who the apiserver takes it for
// (kubectl auth whoami): the authenticated user after impersonation.
const selfSubjectReviewPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

var ssrResource = authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews").GroupResource()

// serveSelfSubjectReview answers a SelfSubjectReview with the request's
// user; asking needs create on selfsubjectreviews (system:basic-user
// grants it, as upstream). The body, if any, is not read: the review has no
// spec.
func (s *Server) serveSelfSubjectReview(w http.ResponseWriter, r *http.Request) {
	u, ok := s.selfReviewer(w, r, ssrResource)
	if !ok {
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

// selfReviewer admits a review a user asks about itself: a POST by an
// authenticated user allowed to create the review resource gr. It answers
// the refusal itself.
func (s *Server) selfReviewer(w http.ResponseWriter, r *http.Request, gr schema.GroupResource) (User, bool) {
	if r.Method != http.MethodPost {
		writeError(w, apierrors.NewMethodNotSupported(gr, strings.ToLower(r.Method)))
		return User{}, false
	}
	u, ok := userFrom(r.Context())
	if !ok {
		writeError(w, apierrors.NewUnauthorized("Unauthorized"))
		return User{}, false
	}
	asking := Attributes{User: u, Verb: "create", APIGroup: gr.Group, Resource: gr.Resource}
	if err := s.chain.Authz.Authorize(r.Context(), asking); err != nil {
		writeError(w, apierrors.NewForbidden(gr, "", err))
		return User{}, false
	}
	return u, true
}
