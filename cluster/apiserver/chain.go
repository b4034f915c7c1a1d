package apiserver

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The write chain of step ①, in order: authentication → authorization →
// mutating admission → validation → validating admission → storage. Each
// stage is one small interface so that TLS identities, RBAC, quota and
// webhooks slot in without touching the handlers.

// User is an authenticated identity, or the one a request impersonates.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what an impersonating request adds (Impersonate-Extra-*).
	Extra map[string][]string
}

// Authenticator says who sent a request. An error is a 401.
type Authenticator interface {
	Authenticate(r *http.Request) (User, error)
}

// Attributes describe a request for authorization.
type Attributes struct {
	User        User
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// FieldSelector is a list's or watch's raw field selector: a kubelet
	// may list only the pods bound to it.
	FieldSelector string
	// Path is set for non-resource requests (discovery, /metrics), whose
	// Verb is the lower-case HTTP method; Resource is empty then.
	Path string
}

// Authorizer decides whether a request may proceed. An error is a 403.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) error
}

// Operation is what a write does to an object.
type Operation string

// The operations admission sees.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// AdmissionRequest is one write as admission sees it.
type AdmissionRequest struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	User        User
	// Object is the object to be written; mutating admission may change it.
	Object runtime.Object
	// OldObject is the stored object for updates and deletes.
	OldObject runtime.Object
	DryRun    bool
}

// MutatingAdmission may change the object on its way to storage.
type MutatingAdmission interface {
	Admit(ctx context.Context, req *AdmissionRequest) error
}

// ValidatingAdmission may refuse a write after validation. It must not
// change the object.
type ValidatingAdmission interface {
	Validate(ctx context.Context, req *AdmissionRequest) error
}

// Chain is the configured write chain.
type Chain struct {
	Authn      Authenticator
	Authz      Authorizer
	Mutating   []MutatingAdmission
	Validating []ValidatingAdmission
}

// insecureAuthn treats every caller as the cluster admin. It is the only
// authenticator until TLS client certificates and tokens arrive; kstep up
// binds to 127.0.0.1 so only local callers reach it.
type insecureAuthn struct{}

func (insecureAuthn) Authenticate(*http.Request) (User, error) {
	return User{Name: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}, nil
}

// allowAll authorizes everything; RBAC replaces it.
type allowAll struct{}

func (allowAll) Authorize(context.Context, Attributes) error { return nil }

// DefaultChain is the chain kstep runs today: no authentication yet, the
// defaulting admission that upstream applies to v1 objects, and validation.
func DefaultChain() Chain {
	return Chain{
		Authn:    insecureAuthn{},
		Authz:    allowAll{},
		Mutating: []MutatingAdmission{defaulting{}},
	}
}
