package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/pki"
	"k8s.io/client-go/rest"
)

// PKI is a CA and an apiserver serving certificate in a test directory,
// for apiservers that authenticate and authorize (StartAPIServer with
// PKI.Secure). One CA signs the serving and the client certificates.
type PKI struct {
	Dir string
	CA  *pki.CA
}

// NewPKI creates a CA and a serving certificate for 127.0.0.1.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	ca, err := pki.NewCA("kstep-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{Dir: t.TempDir(), CA: ca}
	if err := os.WriteFile(p.path("ca.crt"), ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingCert("kstep-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	if err := serving.Write(p.path("apiserver.crt"), p.path("apiserver.key")); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *PKI) path(name string) string { return filepath.Join(p.Dir, name) }

// CAFile is the CA certificate's path.
func (p *PKI) CAFile() string { return p.path("ca.crt") }

// Secure returns an Options mutator for StartAPIServer: TLS, client
// certificates from this CA, the given token file lines (token,user,uid,
// "groups"; none for no token file) and authorization modes (Node,RBAC when
// none are given).
func (p *PKI) Secure(t testing.TB, tokens []string, modes ...string) func(*apiserver.Options) {
	t.Helper()
	if len(modes) == 0 {
		modes = []string{apiserver.ModeNode, apiserver.ModeRBAC}
	}
	var tokenFile string
	if len(tokens) > 0 {
		tokenFile = p.path("tokens.csv")
		if err := os.WriteFile(tokenFile, []byte(strings.Join(tokens, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(o *apiserver.Options) {
		o.TLSCertFile, o.TLSKeyFile = p.path("apiserver.crt"), p.path("apiserver.key")
		o.ClientCAFile, o.TokenAuthFile, o.AuthorizationModes = p.CAFile(), tokenFile, modes
	}
}

// Flags is Secure for `kstep apiserver` (StartAPIServerProcess): the same
// TLS, client CA, token file and authorization modes as flags.
func (p *PKI) Flags(t testing.TB, tokens []string, modes ...string) []string {
	t.Helper()
	var o apiserver.Options
	p.Secure(t, tokens, modes...)(&o)
	flags := []string{"--tls-cert-file=" + o.TLSCertFile, "--tls-private-key-file=" + o.TLSKeyFile,
		"--client-ca-file=" + o.ClientCAFile, "--authorization-mode=" + strings.Join(o.AuthorizationModes, ",")}
	if o.TokenAuthFile != "" {
		flags = append(flags, "--token-auth-file="+o.TokenAuthFile)
	}
	return flags
}

// ClientConfig is base (an apiserver's Config) with a client certificate
// for user in groups.
func (p *PKI) ClientConfig(t testing.TB, base *rest.Config, user string, groups ...string) *rest.Config {
	t.Helper()
	pair, err := p.CA.ClientCert(user, groups...)
	if err != nil {
		t.Fatal(err)
	}
	c := rest.CopyConfig(base)
	c.TLSClientConfig.CAFile = p.CAFile()
	c.TLSClientConfig.CertData, c.TLSClientConfig.KeyData = pair.CertPEM, pair.KeyPEM
	return c
}

// TokenConfig is base with a bearer token.
func (p *PKI) TokenConfig(base *rest.Config, token string) *rest.Config {
	c := rest.CopyConfig(base)
	c.TLSClientConfig.CAFile = p.CAFile()
	c.BearerToken = token
	return c
}
