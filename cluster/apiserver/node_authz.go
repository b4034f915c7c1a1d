package apiserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kstep-dev/kstep/cluster/nodelabels"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// The node authorizer and NodeRestriction confine a kubelet (user
// system:node:<name> in group system:nodes) to its own node, as upstream
// 1.37 does (with AuthorizeNodeWithSelectors): it reads only its own Node
// (get by name; list and watch with fieldSelector metadata.name=<name>),
// writes only its own Node (never deletes it) and its own Lease
// (kube-node-lease/<name>),
// lists and watches only the pods bound to it (fieldSelector
// spec.nodeName=<name>), reads those pods and the ConfigMaps and Secrets
// they name, writes their status and deletes them, and creates events and
// SubjectAccessReviews (nodeRules, upstream's system:node role). It
// cannot create, bind or delete another node's pods.
//
// On its own Node it may not add, change or remove taints (after
// registering with them), labels in node-restriction.kubernetes.io, nor
// kubernetes.io and k8s.io labels other than the kubelet's own (hostname,
// os, arch, instance type, zone and region, and *.kubelet.kubernetes.io
// and *.node.kubernetes.io): with those it could steer workloads meant for
// other nodes to itself. node-role.kubernetes.io labels are among them.
// Other labels are its own to set.
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
	if rulesAllow(nodeRules, a) {
		return true
	}
	read := a.Verb == "get" || a.Verb == "list" || a.Verb == "watch"
	switch a.APIGroup + "/" + a.Resource {
	case "/nodes":
		switch {
		case read && a.Subresource == "":
			return readsOwnNode(node, a)
		case a.Verb == "create" && a.Subresource == "":
			return true // NodeRestriction checks the name
		case a.Verb == "update" || a.Verb == "patch":
			// Not delete, as upstream: a Node deleted and registered again
			// would shed its taints.
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

// readsOwnNode: a get (or a watch) of its own Node by name, or a list or
// watch selected to it by metadata.name. A kubelet may try the read before
// its Node exists.
func readsOwnNode(node string, a *Attributes) bool {
	if a.Name != "" {
		return a.Name == node
	}
	sel, err := fields.ParseSelector(a.FieldSelector)
	if err != nil {
		return false
	}
	v, ok := sel.RequiresExactMatch("metadata.name")
	return ok && v == node
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
	return e.Attrs.Fields.Get("spec.nodeName") == node
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
		if podReferences(e.Object().(*corev1.Pod), resource, name) {
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
		return admitOwnNode(req, deny)
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

// admitOwnNode holds a kubelet's writes to its own Node to upstream's
// rules: labels it may set, and taints only when registering.
func admitOwnNode(req *AdmissionRequest, deny func(format string, a ...any) error) error {
	n, ok := req.Object.(*corev1.Node)
	if !ok || req.Operation == Delete {
		return nil
	}
	var oldLabels map[string]string
	if req.Operation == Update {
		old, ok := req.OldObject.(*corev1.Node)
		if !ok {
			return nil
		}
		if !apiequality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return deny("modify taints")
		}
		if !apiequality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return deny("update its configSource")
		}
		oldLabels = old.Labels
	} else if n.Spec.ConfigSource != nil {
		return deny("create a Node with a configSource")
	}
	if bad := forbiddenNodeLabels(n.Labels, oldLabels); len(bad) > 0 {
		return deny("modify labels: %s", strings.Join(bad, ", "))
	}
	return nil
}

// forbiddenNodeLabels lists, sorted, the labels added, changed or removed
// between old and cur that a kubelet may not set on its Node.
func forbiddenNodeLabels(cur, old map[string]string) []string {
	var bad []string
	check := func(k string) {
		if !nodelabels.KubeletMaySet(k) {
			bad = append(bad, k)
		}
	}
	for k, v := range cur {
		if ov, ok := old[k]; !ok || ov != v {
			check(k)
		}
	}
	for k := range old {
		if _, ok := cur[k]; !ok {
			check(k)
		}
	}
	sort.Strings(bad)
	return bad
}

func boundNode(obj runtime.Object) string {
	if p, ok := obj.(*corev1.Pod); ok {
		return p.Spec.NodeName
	}
	return ""
}
