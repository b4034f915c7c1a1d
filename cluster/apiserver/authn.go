package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Authentication: who sent a request. With a client CA or a token file
// configured, a request carries an x509 client certificate (CommonName is
// the user, Organizations the groups) or a bearer token from the token
// file; every authenticated user is also in system:authenticated. Anything
// else is a 401 Status, except the health endpoints.

// groupAuthenticated is added to every authenticated user's groups.
const groupAuthenticated = "system:authenticated"

// errNoCredentials: the request carried neither a certificate nor a token.
var errNoCredentials = errors.New("no client certificate or bearer token")

// publicPaths answer anonymous requests: load balancers and the provider
// probe them without credentials. Credentials that are sent are checked
// there too, as upstream: a wrong token or a certificate of another CA is a
// 401 on every path, so a client learns its credentials are bad from its
// first request (kubectl version), not its second.
var publicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// userKey carries the authenticated User in a request's context.
type userKey struct{}

func withUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// userFrom returns the user the request was authenticated as.
func userFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}

// authenticate wraps the API: every request is authenticated once, here,
// and one without credentials is refused unless it is for a public path.
// The user goes into the request's context for the audit log and
// authorizeRequest.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.chain.Authn.Authenticate(r)
		if publicPaths[r.URL.Path] && errors.Is(err, errNoCredentials) {
			if asks(r) {
				writeError(w, apierrors.NewUnauthorized("Unauthorized: impersonation needs credentials"))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			writeError(w, apierrors.NewUnauthorized("Unauthorized: "+err.Error()))
			return
		}
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}

// authorizeRequest runs inside the audit log: it serves an impersonating
// request as the user it impersonates, once authorized (impersonation.go),
// and authorizes non-resource paths (discovery, OpenAPI, /metrics, pprof);
// resource requests are authorized in serveResource, which knows their
// attributes.
func (s *Server) authorizeRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := userFrom(r.Context())
		if !ok { // anonymous, on a public path
			next.ServeHTTP(w, r)
			return
		}
		as, impersonated, err := s.impersonate(r, u)
		if err != nil {
			writeError(w, err)
			return
		}
		if impersonated {
			ctx := context.WithValue(r.Context(), impersonatorKey{}, u)
			r, u = r.WithContext(withUser(ctx, as)), as
			auditImpersonation(r.Context(), as)
		}
		if !publicPaths[r.URL.Path] && !resourcePath(r.URL.Path) {
			if err := s.authorizeNonResource(r, u); err != nil {
				writeError(w, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// asks reports whether r carries an impersonation header.
func asks(r *http.Request) bool {
	for k := range r.Header {
		if strings.HasPrefix(k, "Impersonate-") {
			return true
		}
	}
	return false
}

// resourcePath: /api/<v>/... or /apis/<g>/<v>/...; everything shorter is
// discovery, a non-resource URL as upstream's RBAC sees it.
func resourcePath(path string) bool {
	p := strings.Trim(path, "/")
	switch {
	case strings.HasPrefix(p, "api/"):
		return strings.Count(p, "/") >= 2
	case strings.HasPrefix(p, "apis/"):
		return strings.Count(p, "/") >= 3
	}
	return false
}

func (s *Server) authorizeNonResource(r *http.Request, u User) error {
	a := Attributes{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	if a.Verb == "head" {
		a.Verb = "get"
	}
	if err := s.chain.Authz.Authorize(r.Context(), a); err != nil {
		return apierrors.NewGenericServerResponse(http.StatusForbidden, "", schema.GroupResource{}, "",
			fmt.Sprintf("forbidden: User %q cannot %s path %q: %v", u.Name, a.Verb, a.Path, err), 0, false)
	}
	return nil
}

// unionAuthn tries each authenticator in turn: the first that accepts the
// request's credentials names the user (as upstream, a bad certificate
// beside a good token is the token's user).
type unionAuthn []Authenticator

func (u unionAuthn) Authenticate(r *http.Request) (User, error) {
	var errs []error
	for _, a := range u {
		user, err := a.Authenticate(r)
		if errors.Is(err, errNoCredentials) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		user.Groups = addString(user.Groups, groupAuthenticated)
		return user, nil
	}
	if len(errs) > 0 {
		return User{}, errors.Join(errs...)
	}
	return User{}, errNoCredentials
}

// x509Authn reads the user from a client certificate signed by the client
// CA. The TLS handshake only requests the certificate, so that a bad one is
// a 401 Status rather than a broken handshake; verified certificates are
// remembered, so a connection's requests verify once.
type x509Authn struct {
	opts x509.VerifyOptions

	mu       sync.Mutex
	verified map[string]x509Verified // by the certificate's signature
}

type x509Verified struct {
	user     User
	notAfter time.Time
}

// maxVerifiedCerts bounds the memory of verified certificates.
const maxVerifiedCerts = 4096

func newX509Authn(caFile string) (*x509Authn, *x509.CertPool, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, nil, fmt.Errorf("client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("client CA %s: no certificate found", caFile)
	}
	return &x509Authn{
		opts:     x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		verified: map[string]x509Verified{},
	}, pool, nil
}

func (a *x509Authn) Authenticate(r *http.Request) (User, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return User{}, errNoCredentials
	}
	cert := r.TLS.PeerCertificates[0]
	now := time.Now()
	key := string(cert.Signature)
	a.mu.Lock()
	v, ok := a.verified[key]
	a.mu.Unlock()
	if ok && now.Before(v.notAfter) {
		return v.user, nil
	}
	opts := a.opts
	opts.CurrentTime = now
	opts.Intermediates = x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cert.Verify(opts); err != nil {
		return User{}, fmt.Errorf("x509: %w", err)
	}
	if cert.Subject.CommonName == "" {
		return User{}, errors.New("x509: client certificate has no CommonName")
	}
	u := User{Name: cert.Subject.CommonName, Groups: append([]string(nil), cert.Subject.Organization...)}
	a.mu.Lock()
	if len(a.verified) >= maxVerifiedCerts {
		clear(a.verified)
	}
	a.verified[key] = x509Verified{user: u, notAfter: cert.NotAfter}
	a.mu.Unlock()
	return u, nil
}

// tokenAuthn reads the user from a bearer token listed in a static token
// file.
type tokenAuthn map[string]User

// loadTokenFile reads upstream's static token file: CSV lines of
// token,user,uid and an optional quoted, comma-separated group list.
func loadTokenFile(path string) (tokenAuthn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	return parseTokens(f, path)
}

func parseTokens(r io.Reader, path string) (tokenAuthn, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	tokens := tokenAuthn{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return tokens, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file %s: %w", path, err)
		}
		if len(rec) < 3 || rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("token file %s: line %d: want token,user,uid[,\"group,...\"]", path, line)
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		if _, dup := tokens[rec[0]]; dup {
			return nil, fmt.Errorf("token file %s: line %d: duplicate token", path, line)
		}
		tokens[rec[0]] = u
	}
}

func (t tokenAuthn) Authenticate(r *http.Request) (User, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return User{}, errNoCredentials
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return User{}, errors.New("invalid bearer token")
	}
	u, ok := t[strings.TrimSpace(token)]
	if !ok {
		return User{}, errors.New("invalid bearer token")
	}
	u.Groups = append([]string(nil), u.Groups...)
	return u, nil
}

// serverTLS is the listener's TLS configuration: the serving certificate,
// and client certificates requested (verified by x509Authn) when a client
// CA is configured.
func serverTLS(certFile, keyFile string, clientCAs *x509.CertPool) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = clientCAs // advertised to clients choosing a certificate
	}
	return cfg, nil
}

// configureSecurity sets the chain's authenticator and authorizer, and the
// listener's TLS, from the options. Without a client CA or token file the
// insecure defaults stay (every caller is the admin).
func (s *Server) configureSecurity(o Options) error {
	s.policyReady = make(chan struct{})
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.ClientCAFile != "" && o.TLSCertFile == "" {
		return errors.New("--client-ca-file needs --tls-cert-file: client certificates come over TLS")
	}
	var authn unionAuthn
	var clientCAs *x509.CertPool
	if o.ClientCAFile != "" {
		a, pool, err := newX509Authn(o.ClientCAFile)
		if err != nil {
			return err
		}
		authn, clientCAs = append(authn, a), pool
	}
	if o.TokenAuthFile != "" {
		t, err := loadTokenFile(o.TokenAuthFile)
		if err != nil {
			return err
		}
		authn = append(authn, t)
	}
	if o.TLSCertFile != "" {
		cfg, err := serverTLS(o.TLSCertFile, o.TLSKeyFile, clientCAs)
		if err != nil {
			return err
		}
		s.tlsConfig = cfg
	}
	if !o.authenticates() {
		close(s.policyReady)
		return nil
	}
	authz, err := s.newAuthorizer(o.AuthorizationModes)
	if err != nil {
		return err
	}
	s.chain.Authn, s.chain.Authz = authn, authz
	if contains(o.AuthorizationModes, ModeNode) {
		s.chain.Validating = append([]ValidatingAdmission{nodeRestriction{}}, s.chain.Validating...)
	}
	if !contains(o.AuthorizationModes, ModeRBAC) {
		close(s.policyReady)
	}
	return nil
}
