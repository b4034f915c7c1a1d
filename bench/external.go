package bench

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/results"
)

// Node kinds as the external provider's run records them (results.External).
const (
	KindHollowKstep = "hollow (kstep)"
	KindFakeKwok    = "fake (kwok)"
	KindReal        = "real"
)

// kindsBy says how inspect tells node kinds apart.
const kindsBy = `nodeInfo.osImage "kstep hollow node" is a kstep hollow node; annotation kwok.x-k8s.io/node=fake is a kwok node; any other node is real`

// nodeKind is what ran n's pods, by what the node object says of itself.
func nodeKind(n *corev1.Node) string {
	switch {
	case n.Status.NodeInfo.OSImage == "kstep hollow node":
		return KindHollowKstep
	case n.Annotations["kwok.x-k8s.io/node"] == "fake":
		return KindFakeKwok
	}
	return KindReal
}

// inspect counts the cluster's nodes by kind, and maps each node to the
// population its pods belong to (results.NodesReal, results.NodesHollow:
// kstep's hollow nodes and kwok's fake ones run no container).
func inspect(ctx context.Context, cs kubernetes.Interface, e *results.External) (map[string]string, error) {
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	e.Nodes, e.Ready, e.Kinds, e.KindsBy = len(l.Items), 0, map[string]int{}, kindsBy
	pop := map[string]string{}
	for i := range l.Items {
		n := &l.Items[i]
		k := nodeKind(n)
		e.Kinds[k]++
		pop[n.Name] = results.NodesHollow
		if k == KindReal {
			pop[n.Name] = results.NodesReal
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				e.Ready++
			}
		}
	}
	return pop, nil
}

// Access is one thing a run does to the cluster: a verb on a resource (in
// a namespace; "" is cluster scope).
type Access struct {
	Verb, Group, Resource, Namespace string
	// Subresource, if set: scale, eviction, ...
	Subresource string
}

func (a Access) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Namespace == "" {
		return a.Verb + " " + r
	}
	return a.Verb + " " + r + " in namespace " + a.Namespace
}

// Needs is every access the profile's run makes: the load generator's
// namespaces, objects and watches, the harness's node list, and the
// cleanup's lists and deletes. Nothing the run can do without (the
// Events, the Leases it watches for disruptions) is in it.
func Needs(job *loadgen.Job) []Access {
	out := []Access{
		{Verb: "list", Resource: "nodes"},
		{Verb: "create", Resource: "namespaces"},
		{Verb: "list", Resource: "namespaces"},
		{Verb: "delete", Resource: "namespaces"},
	}
	// The cleanup (external.Clean, kstep clean) finds what carries the
	// run's label in every namespace.
	for _, r := range []Access{{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "replicasets"}, {Resource: "services"}, {Resource: "pods"}} {
		r.Verb = "list"
		out = append(out, r)
	}
	kind := "replicasets"
	if job.Object.Kind == loadgen.KindDeployment {
		kind = "deployments"
	}
	for _, ns := range job.Namespaces {
		for _, v := range []string{"create", "get", "list", "delete"} {
			out = append(out, Access{Verb: v, Group: "apps", Resource: kind, Namespace: ns})
		}
		if job.Phases.ScaleTo > 0 {
			out = append(out, Access{Verb: "patch", Group: "apps", Resource: kind, Namespace: ns})
		}
		for _, v := range []string{"list", "watch", "delete"} {
			out = append(out, Access{Verb: v, Resource: "pods", Namespace: ns})
		}
		if job.Object.Service {
			for _, v := range []string{"create", "list", "delete"} {
				out = append(out, Access{Verb: v, Resource: "services", Namespace: ns})
			}
			for _, v := range []string{"list", "watch"} {
				out = append(out, Access{Verb: v, Resource: "endpoints", Namespace: ns})
			}
		}
	}
	return out
}

// PermissionError: the credentials cannot do what the run needs. kstep
// bench exits 2 on it.
type PermissionError struct {
	// Who are the credentials (the kubeconfig and its context).
	Who     string
	Missing []Access
}

func (e *PermissionError) Error() string {
	names := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		names[i] = m.String()
	}
	return fmt.Sprintf("the credentials of %s may not do what the run needs (SelfSubjectAccessReview said no): %s; grant them (a Role or ClusterRole bound to that user) or use other credentials",
		e.Who, strings.Join(names, ", "))
}

// Preflight asks the apiserver, one SelfSubjectAccessReview per access,
// whether the credentials may do each of needs, and returns a
// *PermissionError naming every one they may not (asking itself needs
// create on selfsubjectaccessreviews, which every authenticated user has
// upstream). An error that is not an answer is returned as it is.
func Preflight(ctx context.Context, cs kubernetes.Interface, who string, needs []Access) error {
	var missing []Access
	for _, a := range needs {
		rev, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.Verb, Group: a.Group, Resource: a.Resource, Subresource: a.Subresource, Namespace: a.Namespace}},
		}, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return &PermissionError{Who: who, Missing: []Access{{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}}}
		}
		if err != nil {
			return fmt.Errorf("preflight: ask whether the credentials may %s: %w", a, err)
		}
		if !rev.Status.Allowed {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return &PermissionError{Who: who, Missing: missing}
	}
	return nil
}
