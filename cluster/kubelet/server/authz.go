package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/kstep-dev/kstep/cluster/kubelet"
)

// Upstream's webhook authorizer's cache: allowed answers 5 min, denied
// 30 s, in a bounded LRU.
const (
	allowedTTL   = 5 * time.Minute
	deniedTTL    = 30 * time.Second
	authzEntries = 8192
)

type user struct {
	name   string
	groups []string
}

// attributes is what a request asks of the node: upstream kubelet's
// (pkg/kubelet/server/auth.go).
type attributes struct {
	user        user
	node        string
	verb        string
	subresource string
}

// requestAttributes maps a request to upstream kubelet's attributes.
func requestAttributes(u user, node string, r *http.Request) attributes {
	a := attributes{user: u, node: node, subresource: "proxy"}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.verb = "get"
	case http.MethodPost:
		a.verb = "create"
	case http.MethodPut:
		a.verb = "update"
	case http.MethodPatch:
		a.verb = "patch"
	case http.MethodDelete:
		a.verb = "delete"
	default:
		a.verb = strings.ToLower(r.Method)
	}
	p := r.URL.Path
	for _, sp := range []struct{ prefix, sub string }{{"/stats", "stats"}, {"/metrics", "metrics"}, {"/logs", "log"}, {"/spec", "spec"}} {
		if isSubpath(p, sp.prefix) {
			a.subresource = sp.sub
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

func (a attributes) key() string {
	return strings.Join([]string{a.user.name, strings.Join(a.user.groups, ","), a.node, a.verb, a.subresource}, "\x00")
}

type verdict struct {
	allowed bool
	reason  string
}

// authorizer asks the apiserver by SubjectAccessReview, through the
// node's own client, and caches the answers.
type authorizer struct {
	cache *cache.LRUExpireCache
}

func newAuthorizer() *authorizer { return &authorizer{cache: cache.NewLRUExpireCache(authzEntries)} }

func (z *authorizer) authorize(ctx context.Context, k *kubelet.Kubelet, a attributes) (bool, string, error) {
	key := a.key()
	if v, ok := z.cache.Get(key); ok {
		v := v.(verdict)
		return v.allowed, v.reason, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: a.user.name, Groups: a.user.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: "", Version: "v1", Resource: "nodes", Subresource: a.subresource, Name: a.node,
		},
	}}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := k.Client().AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	v := verdict{allowed: out.Status.Allowed && !out.Status.Denied, reason: out.Status.Reason}
	if v.allowed {
		z.cache.Add(key, v, allowedTTL)
	} else {
		z.cache.Add(key, v, deniedTTL)
	}
	return v.allowed, v.reason, nil
}
