package process

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// A secure cluster (the default; Config.Insecure turns it off) has its PKI
// in <state-dir>/pki: a CA made at Up, the apiservers' serving certificate,
// and a token file. Kubeconfigs embed a client certificate per identity:
// the admin (kubernetes-admin in system:masters), the controller-managers,
// the schedulers, each real node's kubelet (system:node:<name> in
// system:nodes). Hollow nodes share one process and one connection, so each
// has a bearer token instead (hollow-nodes.tokens, also in the apiservers'
// token file) that the hollow-nodes actor sends per node.

// pkiFiles are the paths of a cluster's PKI.
type pkiFiles struct{ dir string }

func pkiPaths(stateDir string) pkiFiles { return pkiFiles{dir: filepath.Join(stateDir, "pki")} }

func (f pkiFiles) path(name string) string { return filepath.Join(f.dir, name) }
func (f pkiFiles) caCert() string          { return f.path("ca.crt") }
func (f pkiFiles) caKey() string           { return f.path("ca.key") }
func (f pkiFiles) servingCert() string     { return f.path("apiserver.crt") }
func (f pkiFiles) servingKey() string      { return f.path("apiserver.key") }

// tokens is the apiservers' token file; hollowTokens the hollow-nodes
// actor's share of it.
func (f pkiFiles) tokens() string       { return f.path("tokens.csv") }
func (f pkiFiles) hollowTokens() string { return f.path("hollow-nodes.tokens") }

// apiserverArgs are the flags that make an apiserver secure.
func (f pkiFiles) apiserverArgs() []string {
	return []string{
		"--tls-cert-file=" + f.servingCert(),
		"--tls-private-key-file=" + f.servingKey(),
		"--client-ca-file=" + f.caCert(),
		"--token-auth-file=" + f.tokens(),
		"--authorization-mode=Node,RBAC",
	}
}

// writePKI creates the cluster's CA, the serving certificate and the token
// files (the hollow nodes' tokens and users' lines). Client certificates are
// issued with the kubeconfigs.
func writePKI(stateDir string, actors []actorState, users []string) error {
	f := pkiPaths(stateDir)
	if err := os.RemoveAll(f.dir); err != nil {
		return fmt.Errorf("clear old pki: %w", err)
	}
	ca, err := pki.NewCA("kstep-ca")
	if err != nil {
		return err
	}
	if err := ca.Pair().Write(f.caCert(), f.caKey()); err != nil {
		return err
	}
	serving, err := ca.ServingCert("kstep-apiserver")
	if err != nil {
		return err
	}
	if err := serving.Write(f.servingCert(), f.servingKey()); err != nil {
		return err
	}
	var lines []string
	for _, a := range actors {
		if a.Role != provider.RoleHollowNodes {
			continue
		}
		for _, node := range hollowNodeNames(a.Args) {
			tok, err := newToken()
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s,%s,%s,%q", tok, pki.NodeUser(node), pki.NodeUser(node), pki.NodesGroup))
		}
	}
	for path, lines := range map[string][]string{f.hollowTokens(): lines, f.tokens(): append(lines, users...)} {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// hollowNodeNames are the node names a hollow-nodes actor's argv runs:
// <name-prefix><first-index + i> for i < count, with that command's
// defaults.
func hollowNodeNames(args []string) []string {
	prefix, first, count := "hollow-", 0, 0
	for i := 0; i < len(args); i++ {
		name, val, ok := strings.Cut(args[i], "=")
		if !ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			val = args[i+1]
		}
		switch name {
		case "--name-prefix":
			prefix = val
		case "--first-index":
			first, _ = strconv.Atoi(val)
		case "--count":
			count, _ = strconv.Atoi(val)
		}
	}
	names := make([]string, count)
	for i := range names {
		names[i] = prefix + strconv.Itoa(first+i)
	}
	return names
}

// identity is the user and groups an actor's certificate names; ok is
// false for actors that have no certificate of their own (hollow nodes).
func identity(a actorState) (user string, groups []string, ok bool) {
	switch a.Role {
	case provider.RoleControllerManager:
		return pki.ControllerManagerUser, nil, true
	case provider.RoleScheduler:
		return pki.SchedulerUser, nil, true
	case provider.RoleNode:
		return pki.NodeUser(a.Name), []string{pki.NodesGroup}, true
	}
	return "", nil, false
}

// issuer issues client credentials from a cluster's CA.
type issuer struct {
	ca *pki.CA
}

func loadIssuer(stateDir string) (*issuer, error) {
	f := pkiPaths(stateDir)
	ca, err := pki.LoadCA(f.caCert(), f.caKey())
	if err != nil {
		return nil, err
	}
	return &issuer{ca: ca}, nil
}

func (is *issuer) credentials(user string, groups ...string) (credentials, error) {
	if is == nil {
		return credentials{}, nil
	}
	pair, err := is.ca.ClientCert(user, groups...)
	if err != nil {
		return credentials{}, err
	}
	return credentials{CA: is.ca.CertPEM(), Cert: pair.CertPEM, Key: pair.KeyPEM}, nil
}

// actorCredentials: the actor's own certificate, or for hollow nodes only
// the CA (their tokens travel separately).
func (is *issuer) actorCredentials(a actorState) (credentials, error) {
	if is == nil {
		return credentials{}, nil
	}
	user, groups, ok := identity(a)
	if !ok {
		return credentials{CA: is.ca.CertPEM()}, nil
	}
	return is.credentials(user, groups...)
}
