package reviewauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// Upstream's webhook authorizer's cache: allowed answers 5 min, denied
// 30 s, in a bounded LRU.
const (
	AllowedTTL = 5 * time.Minute
	DeniedTTL  = 30 * time.Second
	entries    = 8192
	// timeout bounds one review.
	timeout = 10 * time.Second
)

// User is an authenticated caller.
type User struct {
	Name   string
	Groups []string
}

// Authenticated is the group of every authenticated user.
const Authenticated = "system:authenticated"

// ErrNoCertificate: the request presented no verified client certificate.
var ErrNoCertificate = errors.New("a client certificate signed by the cluster's CA is required")

// CertUser is the caller of r by its verified client certificate. The
// server's tls.Config verifies the chain (ClientCAs); without a
// certificate, or with one without a common name, it is an error (401).
func CertUser(r *http.Request) (User, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return User{}, ErrNoCertificate
	}
	leaf := r.TLS.PeerCertificates[0]
	if leaf.Subject.CommonName == "" {
		return User{}, errors.New("the client certificate has no common name")
	}
	// Upstream's authenticators add every authenticated user to
	// system:authenticated, which the bootstrap policy binds.
	return User{Name: leaf.Subject.CommonName, Groups: append(append([]string(nil), leaf.Subject.Organization...), Authenticated)}, nil
}

// Attributes is what a request asks: of a resource (Resource set), or of
// a non-resource URL (Path and Verb).
type Attributes struct {
	User     User
	Verb     string
	Path     string
	Resource *authorizationv1.ResourceAttributes
}

// NonResource is the attributes of a request to a non-resource URL:
// upstream's, the path and the lower-case HTTP method (GET → get, POST →
// post).
func NonResource(u User, r *http.Request) Attributes {
	return Attributes{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
}

func (a Attributes) key() string {
	parts := []string{a.User.Name, strings.Join(a.User.Groups, ","), a.Verb, a.Path}
	if ra := a.Resource; ra != nil {
		parts = append(parts, ra.Namespace, ra.Group, ra.Version, ra.Resource, ra.Subresource, ra.Name)
	}
	return strings.Join(parts, "\x00")
}

// String names the request in an error: the user, verb and what.
func (a Attributes) String() string {
	if ra := a.Resource; ra != nil {
		return fmt.Sprintf("user=%s, verb=%s, resource=%s, subresource=%s", a.User.Name, a.Verb, ra.Resource, ra.Subresource)
	}
	return fmt.Sprintf("user=%s, verb=%s, path=%s", a.User.Name, a.Verb, bounded(a.Path))
}

func (a Attributes) review() *authorizationv1.SubjectAccessReview {
	spec := authorizationv1.SubjectAccessReviewSpec{User: a.User.Name, Groups: a.User.Groups}
	if a.Resource != nil {
		ra := *a.Resource
		ra.Verb = a.Verb
		spec.ResourceAttributes = &ra
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.Path, Verb: a.Verb}
	}
	return &authorizationv1.SubjectAccessReview{Spec: spec}
}

// Decision is an answer: allowed or not, and the authorizer's reason.
type Decision struct {
	Allowed bool
	Reason  string
}

// Authorizer asks the apiserver by SubjectAccessReview and caches the
// answers. Safe for concurrent use.
type Authorizer struct {
	cache *cache.LRUExpireCache
}

// NewAuthorizer is an Authorizer with an empty cache.
func NewAuthorizer() *Authorizer { return &Authorizer{cache: cache.NewLRUExpireCache(entries)} }

// Authorize decides a, from the cache or by a review created through
// reviews. An error (the apiserver unreachable) is no decision and is not
// cached.
func (z *Authorizer) Authorize(ctx context.Context, reviews authorizationclient.SubjectAccessReviewsGetter, a Attributes) (Decision, error) {
	key := a.key()
	if v, ok := z.cache.Get(key); ok {
		return v.(Decision), nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := reviews.SubjectAccessReviews().Create(ctx, a.review(), metav1.CreateOptions{})
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: out.Status.Allowed && !out.Status.Denied, Reason: out.Status.Reason}
	ttl := DeniedTTL
	if d.Allowed {
		ttl = AllowedTTL
	}
	z.cache.Add(key, d, ttl)
	return d, nil
}

// Filter serves next only to callers that authenticate by a client
// certificate (else 401) and whom the apiserver allows the request's
// non-resource URL and verb (else 403; 500 when it cannot be asked). The
// refusals are metav1.Status bodies, as upstream's.
func (z *Authorizer) Filter(reviews authorizationclient.SubjectAccessReviewsGetter, onError func(Attributes, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := CertUser(r)
		if err != nil {
			WriteStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized: "+err.Error())
			return
		}
		a := NonResource(u, r)
		d, err := z.Authorize(r.Context(), reviews, a)
		if err != nil {
			if onError != nil {
				onError(a, err)
			}
			WriteStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, fmt.Sprintf("Authorization error (%s)", a))
			return
		}
		if !d.Allowed {
			msg := fmt.Sprintf("Forbidden (%s)", a)
			if d.Reason != "" {
				msg += ": " + d.Reason
			}
			WriteStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// WriteStatus writes a failure metav1.Status.
func WriteStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
}

// ServerTLS is the tls.Config of a server with the serving certificate in
// certFile and keyFile that verifies client certificates against the CAs
// in clientCAFile when a client presents one (VerifyClientCertIfGiven: a
// caller without one reaches the open paths and gets 401 elsewhere).
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	caPEM, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("client CA %s holds no PEM certificate", clientCAFile)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    pool,
	}, nil
}

// bounded cuts a caller's string for an error message.
func bounded(s string) string {
	const n = 256
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
