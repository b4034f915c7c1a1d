package provider

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/pki"
)

// contextName is the kubeconfig context (and cluster entry) of the i-th
// apiserver: "kstep" for the first, the current context, and
// "kstep-<actor>" for the others.
func contextName(i int, actor string) string {
	if i == 0 {
		return "kstep"
	}
	return "kstep-" + actor
}

// credentials are what a kubeconfig carries to reach a secure apiserver:
// the CA to trust and a client certificate. All empty for an insecure one.
type credentials struct {
	CA        []byte
	Cert, Key []byte
	// Token is a bearer token (hollow nodes use one each; see tokens.go).
	Token string
}

func (c credentials) authInfo() *clientcmdapi.AuthInfo {
	a := clientcmdapi.NewAuthInfo()
	a.ClientCertificateData, a.ClientKeyData, a.Token = c.Cert, c.Key, c.Token
	return a
}

func (c credentials) cluster(server string) *clientcmdapi.Cluster {
	cl := clientcmdapi.NewCluster()
	cl.Server, cl.CertificateAuthorityData = server, c.CA
	return cl
}

// kubeconfigFor builds a kubeconfig with one cluster and context per
// apiserver, all as one user (the admin).
func kubeconfigFor(apiservers []Actor, creds credentials) *clientcmdapi.Config {
	const user = "kstep"
	c := clientcmdapi.NewConfig()
	c.AuthInfos[user] = creds.authInfo()
	for i, a := range apiservers {
		name := contextName(i, a.Name)
		c.Clusters[name] = creds.cluster(a.Endpoint)
		ctx := clientcmdapi.NewContext()
		ctx.Cluster = name
		ctx.AuthInfo = user
		c.Contexts[name] = ctx
	}
	if len(apiservers) > 0 {
		c.CurrentContext = contextName(0, apiservers[0].Name)
	}
	return c
}

// actorKubeconfig is one actor's kubeconfig: its own user entry (named after
// the actor, with the actor's own certificate) and a cluster per apiserver,
// the first (its preferred one) in the current context (named after the
// actor), each other in a context "<actor>@<apiserver>". kubectl reaches the
// preferred one; the actors' client (cluster/apiclient) fails over to the
// others in this order.
func actorKubeconfig(actor string, apiservers []Actor, creds credentials) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.AuthInfos[actor] = creds.authInfo()
	for i, a := range apiservers {
		c.Clusters[a.Name] = creds.cluster(a.Endpoint)
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo = a.Name, actor
		name := actor
		if i > 0 {
			name = actor + "@" + a.Name
		}
		c.Contexts[name] = ctx
	}
	c.CurrentContext = actor
	return c
}

// failoverOrder is every apiserver in cs (plan order), starting at
// preferred and wrapping around, so the clients of one apiserver spread
// over the others in turn.
func failoverOrder(cs []Component, preferred string, serverURL func(string) string) []Actor {
	var names []string
	start := 0
	for _, c := range cs {
		if c.Role == RoleAPIServer {
			if c.Name == preferred {
				start = len(names)
			}
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		names = []string{preferred}
	}
	out := make([]Actor, 0, len(names))
	for i := range names {
		n := names[(start+i)%len(names)]
		out = append(out, Actor{Name: n, Endpoint: serverURL(n)})
	}
	return out
}

// WriteKubeconfigs writes every apiserver client's own kubeconfig (its
// Kubeconfig path, with its own certificate unless the cluster is
// insecure) preferring its APIServer and naming every other apiserver of cs
// to fail over to, each reached at serverURL(apiserver) —
// the URL as the component sees it. The files are written under stateDir
// (as this process sees it) at the same relative paths.
func WriteKubeconfigs(stateDir string, cs []Component, secure bool, serverURL func(apiserver string) string) error {
	is, err := loadIssuer(stateDir, secure)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Kubeconfig == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(c.Kubeconfig), 0o755); err != nil {
			return fmt.Errorf("kubeconfig dir: %w", err)
		}
		creds, err := is.componentCredentials(c)
		if err != nil {
			return err
		}
		servers := failoverOrder(cs, c.APIServer, serverURL)
		if err := clientcmd.WriteToFile(*actorKubeconfig(c.Name, servers, creds), c.Kubeconfig); err != nil {
			return fmt.Errorf("write kubeconfig %s: %w", c.Kubeconfig, err)
		}
	}
	return nil
}

// WriteAdminKubeconfig writes the host's kubeconfig (KubeconfigPath): a
// cluster and context per apiserver at its Endpoint ("kstep" the first,
// current), as the admin (kubernetes-admin in system:masters) unless the
// cluster is insecure. It returns the path.
func WriteAdminKubeconfig(stateDir string, apiservers []Actor, secure bool) (string, error) {
	is, err := loadIssuer(stateDir, secure)
	if err != nil {
		return "", err
	}
	admin, err := is.credentials(pki.AdminUser, pki.MastersGroup)
	if err != nil {
		return "", err
	}
	path := KubeconfigPath(stateDir)
	if err := clientcmd.WriteToFile(*kubeconfigFor(apiservers, admin), path); err != nil {
		return "", fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return path, nil
}
