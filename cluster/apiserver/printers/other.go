package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

func init() {
	register(schema.GroupKind{Group: "batch", Kind: "Job"}, typed(jobColumns, jobCells), "jobs")
	register(schema.GroupKind{Group: "batch", Kind: "CronJob"}, typed(cronJobColumns, cronJobCells), "cronjobs")
	register(schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, typed(leaseColumns, leaseCells), "leases")
	register(schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}, typed(pdbColumns, pdbCells), "poddisruptionbudgets")
	register(schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}, typed(priorityClassColumns, priorityClassCells), "priorityclasses")
	register(schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}, typed(endpointSliceColumns, endpointSliceCells), "endpointslices")
	register(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}, typed(roleBindingColumns("roleBinding"), roleBindingCells), "rolebindings")
	register(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, typed(roleBindingColumns("clusterRoleBinding"), clusterRoleBindingCells), "clusterrolebindings")
	// Upstream has no printer for roles and cluster roles.
	register(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, createdAtPrinter, "roles")
	register(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, createdAtPrinter, "clusterroles")
	// The scale subresource of any resource; chosen by the object's type.
	register(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, typed(scaleColumns, scaleCells))
}

// Job

var jobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "Status of the job."},
	{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
	{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

func jobCells(job *batchv1.Job, now time.Time) []interface{} {
	var completions string
	switch {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case job.Spec.Parallelism != nil && *job.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}

	var jobDuration string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}

	var status string
	switch {
	case jobCondition(job, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(job, batchv1.JobFailed):
		status = "Failed"
	case job.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(job, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(job, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(job, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}

	names, images := containerCells(job.Spec.Template.Spec.Containers)
	return []interface{}{
		job.Name,
		status,
		completions,
		jobDuration,
		since(now, job.CreationTimestamp),
		names,
		images,
		metav1.FormatLabelSelector(job.Spec.Selector),
	}
}

// jobCondition reports whether the job's first condition of type t is True.
func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// CronJob

var cronJobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Schedule", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["schedule"]},
	{Name: "Timezone", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
	{Name: "Suspend", Type: "boolean", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["suspend"]},
	{Name: "Active", Type: "integer", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["active"]},
	{Name: "Last Schedule", Type: "string", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

func cronJobCells(cj *batchv1.CronJob, now time.Time) []interface{} {
	lastSchedule := "<none>"
	if cj.Status.LastScheduleTime != nil {
		lastSchedule = since(now, *cj.Status.LastScheduleTime)
	}
	timeZone := "<none>"
	if cj.Spec.TimeZone != nil {
		timeZone = *cj.Spec.TimeZone
	}
	suspend := "False" // v1 default
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		suspend = "True"
	}
	names, images := containerCells(cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
	return []interface{}{
		cj.Name,
		cj.Spec.Schedule,
		timeZone,
		suspend,
		int64(len(cj.Status.Active)),
		lastSchedule,
		since(now, cj.CreationTimestamp),
		names,
		images,
		metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
	}
}

// Lease

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
	ageColumn,
}

func leaseCells(l *coordinationv1.Lease, now time.Time) []interface{} {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []interface{}{l.Name, holder, since(now, l.CreationTimestamp)}
}

// PodDisruptionBudget

var pdbColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Min Available", Type: "string", Description: policyv1.PodDisruptionBudgetSpec{}.SwaggerDoc()["minAvailable"]},
	{Name: "Max Unavailable", Type: "string", Description: policyv1.PodDisruptionBudgetSpec{}.SwaggerDoc()["maxUnavailable"]},
	{Name: "Allowed Disruptions", Type: "integer", Description: policyv1.PodDisruptionBudgetStatus{}.SwaggerDoc()["disruptionsAllowed"]},
	ageColumn,
}

func pdbCells(pdb *policyv1.PodDisruptionBudget, now time.Time) []interface{} {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []interface{}{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), since(now, pdb.CreationTimestamp)}
}

// PriorityClass

var priorityClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
	{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
	ageColumn,
	{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
}

func priorityClassCells(pc *schedulingv1.PriorityClass, now time.Time) []interface{} {
	policy := string(corev1.PreemptLowerPriority) // v1 default
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, since(now, pc.CreationTimestamp), policy}
}

// EndpointSlice

var endpointSliceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "AddressType", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["addressType"]},
	{Name: "Ports", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["ports"]},
	{Name: "Endpoints", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
	ageColumn,
}

func endpointSliceCells(es *discoveryv1.EndpointSlice, now time.Time) []interface{} {
	const max = 3
	var ports []string
	for _, p := range es.Ports {
		if len(ports) == max {
			break
		}
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addrs []string
	count := 0
	for _, ep := range es.Endpoints {
		for _, a := range ep.Addresses {
			if len(addrs) < max {
				addrs = append(addrs, a)
			}
			count++
		}
	}
	return []interface{}{
		es.Name,
		string(es.AddressType),
		listWithMore(ports, len(es.Ports), max),
		listWithMore(addrs, count, max),
		since(now, es.CreationTimestamp),
	}
}

// listWithMore joins the first max of count items, noting how many more
// there are, and is "<unset>" for none.
func listWithMore(list []string, count, max int) string {
	ret := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		return "<unset>"
	}
	return ret
}

// RoleBinding, ClusterRoleBinding

func roleBindingColumns(kind string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Role", Type: "string", Description: rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]},
		ageColumn,
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

func roleBindingCells(rb *rbacv1.RoleBinding, now time.Time) []interface{} {
	return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, since(now, rb.CreationTimestamp))
}

func clusterRoleBindingCells(crb *rbacv1.ClusterRoleBinding, now time.Time) []interface{} {
	return bindingCells(crb.Name, crb.RoleRef, crb.Subjects, since(now, crb.CreationTimestamp))
}

func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, age string) []interface{} {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []interface{}{
		name,
		ref.Kind + "/" + ref.Name,
		age,
		strings.Join(users, ", "),
		strings.Join(groups, ", "),
		strings.Join(sas, ", "),
	}
}

// Scale

// scaleColumns are upstream's; its NAME column has no "name" format.
var scaleColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Description: objectMetaDoc["name"]},
	{Name: "Desired", Type: "integer", Description: autoscalingv1.ScaleSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Available", Type: "integer", Description: autoscalingv1.ScaleStatus{}.SwaggerDoc()["replicas"]},
	ageColumn,
}

func scaleCells(s *autoscalingv1.Scale, now time.Time) []interface{} {
	return []interface{}{s.Name, int64(s.Spec.Replicas), int64(s.Status.Replicas), since(now, s.CreationTimestamp)}
}
