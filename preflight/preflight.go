package preflight

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/loadgen"
)

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
// bench, load and chaos exit 2 on it.
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

// Check asks the apiserver, one SelfSubjectAccessReview per access,
// whether the credentials may do each of needs, and returns a
// *PermissionError naming every one they may not (asking itself needs
// create on selfsubjectaccessreviews, which every authenticated user has
// upstream). An error that is not an answer is returned as it is.
func Check(ctx context.Context, cs kubernetes.Interface, who string, needs []Access) error {
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
