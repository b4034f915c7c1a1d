package process

import (
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
func kubeconfigFor(apiservers []actorState, creds credentials) *clientcmdapi.Config {
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
func actorKubeconfig(actor string, apiserver actorState, creds credentials) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.AuthInfos[actor] = creds.authInfo()
	c.Clusters[apiserver.Name] = creds.cluster(apiserver.Endpoint)
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = apiserver.Name, actor
	c.Contexts[actor] = ctx
	c.CurrentContext = actor
	return c
}
