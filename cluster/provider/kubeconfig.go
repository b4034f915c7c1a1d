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
// the actor, with the actor's own certificate) on one apiserver.
func actorKubeconfig(actor string, apiserver Actor, creds credentials) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.AuthInfos[actor] = creds.authInfo()
	c.Clusters[apiserver.Name] = creds.cluster(apiserver.Endpoint)
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = apiserver.Name, actor
	c.Contexts[actor] = ctx
	c.CurrentContext = actor
	return c
}

// WriteKubeconfigs writes every apiserver client's own kubeconfig (its
// Kubeconfig path, with its own certificate unless the cluster is
// insecure) pointing at its APIServer, reached at serverURL(apiserver) —
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
		server := Actor{Name: c.APIServer, Endpoint: serverURL(c.APIServer)}
		if err := clientcmd.WriteToFile(*actorKubeconfig(c.Name, server, creds), c.Kubeconfig); err != nil {
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
