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

// kubeconfigFor builds a kubeconfig with one cluster and context per
// apiserver. The apiservers serve plain HTTP for now, so the user entry is
// empty.
func kubeconfigFor(apiservers []actorState) *clientcmdapi.Config {
	const user = "kstep"
	c := clientcmdapi.NewConfig()
	c.AuthInfos[user] = clientcmdapi.NewAuthInfo()
	for i, a := range apiservers {
		name := contextName(i, a.Name)
		cl := clientcmdapi.NewCluster()
		cl.Server = a.Endpoint
		c.Clusters[name] = cl
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
// the actor) on one apiserver.
func actorKubeconfig(actor string, apiserver actorState) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.AuthInfos[actor] = clientcmdapi.NewAuthInfo()
	cl := clientcmdapi.NewCluster()
	cl.Server = apiserver.Endpoint
	c.Clusters[apiserver.Name] = cl
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = apiserver.Name, actor
	c.Contexts[actor] = ctx
	c.CurrentContext = actor
	return c
}
