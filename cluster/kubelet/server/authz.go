package server

import (
	"net/http"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/kstep-dev/kstep/cluster/reviewauth"
)

// requestAttributes maps a request to upstream kubelet's attributes
// (pkg/kubelet/server/auth.go): resource nodes, name the node,
// subresource by path, verb by method.
func requestAttributes(u reviewauth.User, node string, r *http.Request) reviewauth.Attributes {
	a := reviewauth.Attributes{User: u, Resource: &authorizationv1.ResourceAttributes{
		Group: "", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: node,
	}}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.Verb = "get"
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
	default:
		a.Verb = strings.ToLower(r.Method)
	}
	p := r.URL.Path
	for _, sp := range []struct{ prefix, sub string }{{"/stats", "stats"}, {"/metrics", "metrics"}, {"/logs", "log"}, {"/spec", "spec"}} {
		if isSubpath(p, sp.prefix) {
			a.Resource.Subresource = sp.sub
			break
		}
	}
	return a
}

// isSubpath is upstream's: path is prefix or below it.
func isSubpath(path, prefix string) bool {
	path, prefix = strings.TrimSuffix(path, "/"), strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
