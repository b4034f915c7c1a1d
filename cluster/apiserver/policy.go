package apiserver

import (
	"context"
	"errors"
	"time"

	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/storage"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The bootstrap policy: the ClusterRoles and ClusterRoleBindings every
// RBAC cluster has from its first boot, created by every apiserver if
// absent (as the system namespaces are). Each actor's role covers what its
// code does; kubelets need none, the node authorizer answers for them.

func rule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

var (
	read      = []string{"get", "list", "watch"}
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	core      = []string{""}
	apps      = []string{"apps"}
	coord     = []string{"coordination.k8s.io"}
	discovery = []string{"discovery.k8s.io"}
	// eventWriters may record core/v1 and events.k8s.io/v1 events.
	eventWrite = rbacv1.PolicyRule{Verbs: []string{"create", "update", "patch"}, APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}}
)

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}},
		Rules:      rules,
	}
}

func clusterRoleBinding(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

// nodeRules are what every kubelet may do beyond its own node's objects:
// upstream's system:node role, which the node authorizer applies
// (node_authz.go). A kubelet authorizes the requests to its server by
// asking a SubjectAccessReview.
var nodeRules = []rbacv1.PolicyRule{reviewRule, tokenReviewRule}

// reviewRule lets an actor authorize the callers of its ops port
// (cluster/opsserver) by SubjectAccessReview, as upstream's
// system:kube-controller-manager and system:kube-scheduler may; with
// tokenReviewRule, what upstream's system:auth-delegator grants.
var (
	reviewRule      = rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews")
	tokenReviewRule = rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews")
)

// kubeletAPIAdmin is upstream's system:kubelet-api-admin: the whole
// kubelet API, which the apiserver's kubelet client needs for logs, exec,
// attach, port-forward, nodes/proxy and the metrics API.
const kubeletAPIAdmin = "system:kubelet-api-admin"

// bootstrapPolicy returns the bootstrap roles, then their bindings.
func bootstrapPolicy() []runtime.Object {
	return []runtime.Object{
		clusterRole("cluster-admin",
			rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}),
		clusterRole("system:discovery", rbacv1.PolicyRule{Verbs: []string{"get"},
			NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/", "/healthz", "/livez", "/readyz"}}),
		clusterRole("system:basic-user", rule([]string{"create"}, []string{"authorization.k8s.io"}, "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule([]string{"create"}, []string{"authentication.k8s.io"}, "selfsubjectreviews")),
		// Upstream's: who may read every actor's /metrics and pprof (the
		// apiservers' and the ops ports', cluster/opsserver).
		clusterRole("system:monitoring", rbacv1.PolicyRule{Verbs: []string{"get"},
			NonResourceURLs: []string{"/metrics", "/metrics/*", "/healthz", "/livez", "/readyz", "/debug/pprof", "/debug/pprof/*"}}),
		// The controller-manager: the garbage collector and the namespace
		// controller reach every resource; the others write their own.
		clusterRole("system:kube-controller-manager",
			rule([]string{"get", "list", "watch", "update", "patch", "delete", "deletecollection"}, []string{"*"}, "*"),
			rule([]string{"create"}, core, "pods", "endpoints", "serviceaccounts", "secrets", "configmaps", "services", "namespaces"),
			rule([]string{"create"}, apps, "replicasets", "deployments", "controllerrevisions"),
			rule([]string{"create"}, []string{"batch"}, "jobs"),
			rule([]string{"create"}, discovery, "endpointslices"),
			rule(readWrite, coord, "leases"),
			eventWrite, reviewRule, tokenReviewRule),
		// The scheduler: watches nodes, pods and PodDisruptionBudgets,
		// binds, writes the PodScheduled condition and nominatedNodeName,
		// preempts (DisruptionTarget, delete), leads through a Lease.
		clusterRole("system:kube-scheduler",
			rule(read, core, "nodes", "pods", "namespaces", "services", "replicationcontrollers", "persistentvolumeclaims", "persistentvolumes"),
			rule(read, apps, "replicasets", "statefulsets"),
			rule(read, []string{"scheduling.k8s.io"}, "priorityclasses"),
			rule(read, []string{"policy"}, "poddisruptionbudgets"),
			rule([]string{"create"}, core, "pods/binding", "bindings"),
			rule([]string{"patch", "update"}, core, "pods/status"),
			rule([]string{"delete"}, core, "pods"),
			rule(readWrite, coord, "leases"),
			eventWrite, reviewRule, tokenReviewRule),
		clusterRole("system:node", nodeRules...),
		clusterRole("system:auth-delegator", reviewRule, tokenReviewRule),
		clusterRole(kubeletAPIAdmin,
			rule(read, core, "nodes"),
			rule([]string{"proxy"}, core, "nodes"),
			rule([]string{"*"}, core, "nodes/proxy", "nodes/stats", "nodes/log", "nodes/spec", "nodes/metrics", "nodes/configz", "nodes/healthz", "nodes/pods")),
		clusterRoleBinding("cluster-admin", "cluster-admin", group(pki.MastersGroup)),
		clusterRoleBinding("system:discovery", "system:discovery", group(groupAuthenticated)),
		clusterRoleBinding("system:basic-user", "system:basic-user", group(groupAuthenticated)),
		clusterRoleBinding("system:monitoring", "system:monitoring", group(pki.MonitoringGroup)),
		clusterRoleBinding("system:kube-controller-manager", "system:kube-controller-manager", user(pki.ControllerManagerUser)),
		clusterRoleBinding("system:kube-scheduler", "system:kube-scheduler", user(pki.SchedulerUser)),
		clusterRoleBinding("system:kube-apiserver-kubelet-client", kubeletAPIAdmin, user(pki.APIServerKubeletClientUser)),
	}
}

// bootstrapRBAC creates the bootstrap policy where absent and waits until
// the RBAC caches hold it, so that a ready apiserver authorizes its actors
// at once. Racing apiservers are fine: creation is a transaction on absence.
func (s *Server) bootstrapRBAC(ctx context.Context) {
	for _, obj := range bootstrapPolicy() {
		res := s.resources[rbacv1.SchemeGroupVersion.WithResource(resourceOf(obj))]
		m := objectMeta(obj)
		for ctx.Err() == nil {
			prepareForCreate(res, obj, metav1.NewTime(s.now()))
			val, err := encodeStored(res, obj)
			var rev int64
			if err == nil {
				rev, err = s.store.Create(ctx, res.key("", m.Name), val)
			}
			if errors.Is(err, storage.ErrExists) {
				break
			}
			if err == nil {
				if err = s.cacher(res).WaitFor(ctx, rev); err == nil {
					break
				}
			}
			s.log.Warn("creating bootstrap RBAC policy", "name", m.Name, "err", err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
}

func resourceOf(obj runtime.Object) string {
	switch obj.(type) {
	case *rbacv1.ClusterRole:
		return "clusterroles"
	default:
		return "clusterrolebindings"
	}
}
