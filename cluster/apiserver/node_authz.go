package apiserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// The node authorizer and NodeRestriction confine a kubelet (user
// system:node:<name> in group system:nodes) to its own node: it reads any
// Node, writes only its own Node and its own Lease (kube-node-lease/<name>),
// lists and watches only the pods bound to it (fieldSelector
// spec.nodeName=<name>), reads those pods and the ConfigMaps and Secrets
// they name, writes their status and deletes them, and creates events. It
// cannot create, bind or delete another node's pods.
//
// The authorizer sees no object, so it answers from the pod watch cache;
// NodeRestriction (validating admission) checks each write against the
// stored object, which makes the decision exact even when the cache lags.

// nodeIdentity returns the node a user is the kubelet of.
func nodeIdentity(u User) (string, bool) {
	name, ok := strings.CutPrefix(u.Name, pki.NodeUserPrefix)
	if !ok || name == "" || !contains(u.Groups, pki.NodesGroup) {
		return "", false
	}
	return name, true
}

type nodeAuthorizer struct {
	pods  *resource
	cache *storage.Cacher
}

func (s *Server) newNodeAuthorizer() *nodeAuthorizer {
	pods := s.resources[corev1.SchemeGroupVersion.WithResource("pods")]
	return &nodeAuthorizer{pods: pods, cache: s.cacher(pods)}
}

func (n *nodeAuthorizer) decide(ctx context.Context, a *Attributes) (decision, string) {
	node, ok := nodeIdentity(a.User)
	if !ok || a.Path != "" {
		return noOpinion, ""
	}
	if n.allows(ctx, node, a) {
		return allowed, ""
	}
	return noOpinion, fmt.Sprintf("node %q cannot %s", node, a.describe())
}

func (n *nodeAuthorizer) allows(ctx context.Context, node string, a *Attributes) bool {
	read := a.Verb == "get" || a.Verb == "list" || a.Verb == "watch"
	switch a.APIGroup + "/" + a.Resource {
	case "/nodes":
		switch {
		case read && a.Subresource == "":
			return true
		case a.Verb == "create" && a.Subresource == "":
			return true // NodeRestriction checks the name
		case a.Verb == "update" || a.Verb == "patch" || a.Verb == "delete":
			return a.Name == node && (a.Subresource == "" || a.Subresource == "status")
		}
	case "coordination.k8s.io/leases":
		if a.Namespace != corev1.NamespaceNodeLease {
			return false
		}
		switch a.Verb {
		case "create":
			return true // NodeRestriction checks the name
		case "get", "update", "patch", "delete":
			return a.Name == node
		}
	case "/pods":
		switch {
		case (a.Verb == "list" || a.Verb == "watch") && a.Subresource == "":
			sel, err := fields.ParseSelector(a.FieldSelector)
			if err != nil {
				return false
			}
			v, ok := sel.RequiresExactMatch("spec.nodeName")
			return ok && v == node
		case a.Verb == "get" && (a.Subresource == "" || a.Subresource == "status"),
			(a.Verb == "update" || a.Verb == "patch") && a.Subresource == "status",
			a.Verb == "delete" && a.Subresource == "":
			return n.boundTo(a.Namespace, a.Name, node)
		}
	case "/events", "events.k8s.io/events":
		return a.Verb == "create" || a.Verb == "update" || a.Verb == "patch"
	case "/configmaps", "/secrets":
		return a.Verb == "get" && n.referenced(ctx, node, a.Namespace, a.Resource, a.Name)
	}
	return false
}

// boundTo reports whether the cached pod is bound to node. A pod the cache
// does not hold yet is let through: the handler answers 404 for a pod that
// does not exist, and NodeRestriction checks every write against the
// stored pod.
func (n *nodeAuthorizer) boundTo(namespace, name, node string) bool {
	e, ok := n.cache.Get(n.pods.key(namespace, name))
	if !ok {
		return true
	}
	return e.Object.(*corev1.Pod).Spec.NodeName == node
}

// referenced reports whether a pod bound to node in namespace names the
// ConfigMap or Secret (in volumes, env or envFrom).
func (n *nodeAuthorizer) referenced(ctx context.Context, node, namespace, resource, name string) bool {
	f := storage.Filter{Namespace: namespace, Field: fields.OneTermEqualSelector("spec.nodeName", node)}
	entries, _, err := n.cache.List(ctx, 0, f)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if podReferences(e.Object.(*corev1.Pod), resource, name) {
			return true
		}
	}
	return false
}

func podReferences(p *corev1.Pod, resource, name string) bool {
	cm := resource == "configmaps"
	for _, v := range p.Spec.Volumes {
		if cm && v.ConfigMap != nil && v.ConfigMap.Name == name || !cm && v.Secret != nil && v.Secret.SecretName == name {
			return true
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if cm && src.ConfigMap != nil && src.ConfigMap.Name == name || !cm && src.Secret != nil && src.Secret.Name == name {
					return true
				}
			}
		}
	}
	if !cm {
		for _, s := range p.Spec.ImagePullSecrets {
			if s.Name == name {
				return true
			}
		}
	}
	containers := append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...)
	for _, c := range containers {
		for _, ef := range c.EnvFrom {
			if cm && ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == name || !cm && ef.SecretRef != nil && ef.SecretRef.Name == name {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if cm && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name == name || !cm && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name {
				return true
			}
		}
	}
	return false
}

// nodeRestriction is the admission half: with the object in hand it holds
// a kubelet to its own Node, its own Lease and its own pods.
type nodeRestriction struct{}

func (nodeRestriction) Validate(_ context.Context, req *AdmissionRequest) error {
	node, ok := nodeIdentity(req.User)
	if !ok {
		return nil
	}
	gr := req.Resource.GroupResource()
	deny := func(format string, a ...any) error {
		return apierrors.NewForbidden(gr, req.Name, fmt.Errorf("node %q is not allowed to %s", node, fmt.Sprintf(format, a...)))
	}
	switch gr.String() {
	case "nodes":
		if req.Name != node {
			return deny("modify node %q", req.Name)
		}
	case "leases.coordination.k8s.io":
		if req.Namespace != corev1.NamespaceNodeLease || req.Name != node {
			return deny("modify lease %s/%s", req.Namespace, req.Name)
		}
	case "pods":
		switch {
		case req.Operation == Create:
			return deny("create pods")
		case req.Subresource == "binding":
			return deny("bind pods")
		case req.Operation == Update && req.Subresource != "status":
			return deny("update pod %s/%s other than its status", req.Namespace, req.Name)
		}
		if bound := boundNode(req.OldObject); bound != node {
			return deny("modify pod %s/%s bound to node %q", req.Namespace, req.Name, bound)
		}
	}
	return nil
}

func boundNode(obj runtime.Object) string {
	if p, ok := obj.(*corev1.Pod); ok {
		return p.Spec.NodeName
	}
	return ""
}
