package namespace

import (
	"context"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// content is one namespaced resource a namespace is emptied of.
type content struct {
	gr     schema.GroupResource
	client func(cs kubernetes.Interface, ns string) contentClient
}

// contentClient is what emptying does to one resource of one namespace.
type contentClient interface {
	// count lists the resource: how many objects remain, and how many of
	// them are not yet being deleted. A consistent count is read at etcd's
	// current revision; otherwise the apiserver's watch cache answers
	// as it stands (resourceVersion "0"), which is cheap but may lag.
	count(ctx context.Context, consistent bool) (total, live int, err error)
	// deleteAll is a deletecollection: each object deleted as a delete of
	// it would be (a bound pod gracefully, an owner per its policy).
	deleteAll(ctx context.Context) error
}

// collection is the part of every client-go typed namespaced client that
// emptying uses.
type collection[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
}

type typed[L runtime.Object] struct{ c collection[L] }

func listOptions(consistent bool) metav1.ListOptions {
	if consistent {
		return metav1.ListOptions{}
	}
	return metav1.ListOptions{ResourceVersion: "0"}
}

func (t typed[L]) count(ctx context.Context, consistent bool) (int, int, error) {
	list, err := t.c.List(ctx, listOptions(consistent))
	if err != nil {
		return 0, 0, err
	}
	return countItems(list)
}

// countItems counts a list's items, and those not yet being deleted.
func countItems(list runtime.Object) (total, live int, err error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, 0, err
	}
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil && m.GetDeletionTimestamp() == nil {
			live++
		}
	}
	return len(items), live, nil
}

func (t typed[L]) deleteAll(ctx context.Context) error {
	// Background, as upstream: the owners go at once and the garbage
	// collector (or this same pass) takes their dependents.
	bg := metav1.DeletePropagationBackground
	return t.c.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{})
}

// lister is a typed client without deletecollection (services: upstream
// serves none, and client-go has no method for it).
type lister[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// oneByOne empties a resource with a delete per object.
type oneByOne[L runtime.Object] struct{ c lister[L] }

func (o oneByOne[L]) count(ctx context.Context, consistent bool) (int, int, error) {
	list, err := o.c.List(ctx, listOptions(consistent))
	if err != nil {
		return 0, 0, err
	}
	return countItems(list)
}

func (o oneByOne[L]) deleteAll(ctx context.Context) error {
	list, err := o.c.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	for _, obj := range items {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetDeletionTimestamp() != nil {
			continue
		}
		uid := m.GetUID()
		err = o.c.Delete(ctx, m.GetName(), metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

func rowEach[L runtime.Object](gr schema.GroupResource, client func(cs kubernetes.Interface, ns string) lister[L]) content {
	return content{gr: gr, client: func(cs kubernetes.Interface, ns string) contentClient { return oneByOne[L]{client(cs, ns)} }}
}

func row[L runtime.Object](gr schema.GroupResource, client func(cs kubernetes.Interface, ns string) collection[L]) content {
	return content{gr: gr, client: func(cs kubernetes.Interface, ns string) contentClient { return typed[L]{client(cs, ns)} }}
}

// contents is every namespaced resource the kstep apiserver serves
// (cluster/apiserver/resources.go), in the order they are emptied: the
// owners first, so no controller is still acting on what is being removed
// (creates are refused in a terminating namespace anyway). A resource
// added to the apiserver must be added here; Run warns about any served
// resource missing (uncovered).
func contents() []content {
	core := func(r string) schema.GroupResource { return corev1.SchemeGroupVersion.WithResource(r).GroupResource() }
	return []content{
		// The workload controllers first, so that none makes pods while
		// their pods go: CronJobs before the Jobs they make.
		row(batchv1.SchemeGroupVersion.WithResource("cronjobs").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*batchv1.CronJobList] {
				return cs.BatchV1().CronJobs(ns)
			}),
		row(batchv1.SchemeGroupVersion.WithResource("jobs").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*batchv1.JobList] {
				return cs.BatchV1().Jobs(ns)
			}),
		row(appsv1.SchemeGroupVersion.WithResource("daemonsets").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*appsv1.DaemonSetList] {
				return cs.AppsV1().DaemonSets(ns)
			}),
		row(appsv1.SchemeGroupVersion.WithResource("statefulsets").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*appsv1.StatefulSetList] {
				return cs.AppsV1().StatefulSets(ns)
			}),
		row(appsv1.SchemeGroupVersion.WithResource("controllerrevisions").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*appsv1.ControllerRevisionList] {
				return cs.AppsV1().ControllerRevisions(ns)
			}),
		row(core("podtemplates"), func(cs kubernetes.Interface, ns string) collection[*corev1.PodTemplateList] {
			return cs.CoreV1().PodTemplates(ns)
		}),
		row(appsv1.SchemeGroupVersion.WithResource("deployments").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*appsv1.DeploymentList] {
				return cs.AppsV1().Deployments(ns)
			}),
		row(appsv1.SchemeGroupVersion.WithResource("replicasets").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*appsv1.ReplicaSetList] {
				return cs.AppsV1().ReplicaSets(ns)
			}),
		row(core("replicationcontrollers"), func(cs kubernetes.Interface, ns string) collection[*corev1.ReplicationControllerList] {
			return cs.CoreV1().ReplicationControllers(ns)
		}),
		row(core("pods"), func(cs kubernetes.Interface, ns string) collection[*corev1.PodList] { return cs.CoreV1().Pods(ns) }),
		rowEach(core("services"), func(cs kubernetes.Interface, ns string) lister[*corev1.ServiceList] { return cs.CoreV1().Services(ns) }),
		row(core("endpoints"), func(cs kubernetes.Interface, ns string) collection[*corev1.EndpointsList] {
			return cs.CoreV1().Endpoints(ns)
		}),
		row(discoveryv1.SchemeGroupVersion.WithResource("endpointslices").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*discoveryv1.EndpointSliceList] {
				return cs.DiscoveryV1().EndpointSlices(ns)
			}),
		row(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*policyv1.PodDisruptionBudgetList] {
				return cs.PolicyV1().PodDisruptionBudgets(ns)
			}),
		row(core("configmaps"), func(cs kubernetes.Interface, ns string) collection[*corev1.ConfigMapList] {
			return cs.CoreV1().ConfigMaps(ns)
		}),
		row(core("secrets"), func(cs kubernetes.Interface, ns string) collection[*corev1.SecretList] {
			return cs.CoreV1().Secrets(ns)
		}),
		row(core("serviceaccounts"), func(cs kubernetes.Interface, ns string) collection[*corev1.ServiceAccountList] {
			return cs.CoreV1().ServiceAccounts(ns)
		}),
		row(coordinationv1.SchemeGroupVersion.WithResource("leases").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*coordinationv1.LeaseList] {
				return cs.CoordinationV1().Leases(ns)
			}),
		// events.k8s.io events are stored as these.
		row(core("events"), func(cs kubernetes.Interface, ns string) collection[*corev1.EventList] { return cs.CoreV1().Events(ns) }),
		row(core("resourcequotas"), func(cs kubernetes.Interface, ns string) collection[*corev1.ResourceQuotaList] {
			return cs.CoreV1().ResourceQuotas(ns)
		}),
		row(core("limitranges"), func(cs kubernetes.Interface, ns string) collection[*corev1.LimitRangeList] {
			return cs.CoreV1().LimitRanges(ns)
		}),
		// Access last: nothing in the namespace needs it once the rest is gone.
		row(rbacv1.SchemeGroupVersion.WithResource("rolebindings").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*rbacv1.RoleBindingList] {
				return cs.RbacV1().RoleBindings(ns)
			}),
		row(rbacv1.SchemeGroupVersion.WithResource("roles").GroupResource(),
			func(cs kubernetes.Interface, ns string) collection[*rbacv1.RoleList] {
				return cs.RbacV1().Roles(ns)
			}),
	}
}

// aliases are served resources whose objects are another resource's: they
// go when that one is emptied.
var aliases = map[schema.GroupResource]schema.GroupResource{
	{Group: "events.k8s.io", Resource: "events"}: {Resource: "events"},
}

// uncovered returns the namespaced resources discovery reports as
// deletable that emptying does not reach: what a namespace would leave
// behind.
func uncovered(served []*metav1.APIResourceList, covered []content) []string {
	have := map[schema.GroupResource]bool{}
	for _, c := range covered {
		have[c.gr] = true
	}
	var out []string
	for _, list := range served {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if strings.Contains(r.Name, "/") || !r.Namespaced || !deletable(r.Verbs) || have[gr] || have[aliases[gr]] {
				continue
			}
			out = append(out, gr.String())
		}
	}
	sort.Strings(out)
	return out
}

func deletable(verbs []string) bool {
	for _, v := range verbs {
		if v == "delete" || v == "deletecollection" {
			return true
		}
	}
	return false
}
