package printers

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestJob(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	checkColumns(t, gr, &batchv1.Job{}, []column{
		{"Name", "string", 0}, {"Status", "string", 0}, {"Completions", "string", 0}, {"Duration", "string", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	condition := func(t batchv1.JobConditionType) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: t, Status: corev1.ConditionTrue}}
	}
	tests := []struct {
		name                     string
		job                      batchv1.Job
		status, completions, dur string
	}{{
		name: "running",
		job: batchv1.Job{
			Spec:   batchv1.JobSpec{Completions: ptr(int32(3)), Parallelism: ptr(int32(2))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: agoPtr(5 * time.Minute)},
		},
		status: "Running", completions: "1/3", dur: "5m",
	}, {
		name: "complete",
		job: batchv1.Job{
			Spec:   batchv1.JobSpec{Completions: ptr(int32(1))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: agoPtr(50 * time.Minute), CompletionTime: agoPtr(49 * time.Minute), Conditions: condition(batchv1.JobComplete)},
		},
		status: "Complete", completions: "1/1", dur: "60s",
	}, {
		name:   "work queue",
		job:    batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr(int32(4))}, Status: batchv1.JobStatus{Conditions: condition(batchv1.JobFailed)}},
		status: "Failed", completions: "0/1 of 4", dur: "",
	}, {
		name:   "suspended",
		job:    batchv1.Job{Status: batchv1.JobStatus{Conditions: condition(batchv1.JobSuspended)}},
		status: "Suspended", completions: "0/1", dur: "",
	}, {
		name:   "failure target",
		job:    batchv1.Job{Status: batchv1.JobStatus{Conditions: condition(batchv1.JobFailureTarget)}},
		status: "FailureTarget", completions: "0/1", dur: "",
	}, {
		name:   "success criteria met",
		job:    batchv1.Job{Status: batchv1.JobStatus{Conditions: condition(batchv1.JobSuccessCriteriaMet)}},
		status: "SuccessCriteriaMet", completions: "0/1", dur: "",
	}, {
		name:   "terminating",
		job:    batchv1.Job{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(time.Second)}, Status: batchv1.JobStatus{Conditions: condition(batchv1.JobSuspended)}},
		status: "Terminating", completions: "0/1", dur: "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job
			job.Name, job.CreationTimestamp = "j", ago(time.Hour)
			job.Spec.Selector = webSel
			job.Spec.Template = template(web)
			checkCells(t, row(t, gr, &job), []interface{}{"j", tt.status, tt.completions, tt.dur, "60m", "web", "nginx:1.27", "app=web"})
		})
	}
}

func TestCronJob(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "cronjobs"}
	checkColumns(t, gr, &batchv1.CronJob{}, []column{
		{"Name", "string", 0}, {"Schedule", "string", 0}, {"Timezone", "string", 0}, {"Suspend", "boolean", 0}, {"Active", "integer", 0},
		{"Last Schedule", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	cj := &batchv1.CronJob{ObjectMeta: objMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *"}}
	checkCells(t, row(t, gr, cj), []interface{}{"nightly", "0 3 * * *", "<none>", "False", int64(0), "<none>", "60m", "", "", "<none>"})
	cj.Spec.TimeZone = ptr("Europe/Paris")
	cj.Spec.Suspend = ptr(true)
	cj.Spec.JobTemplate.Spec.Template = template(web)
	cj.Status = batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}}, LastScheduleTime: agoPtr(9 * time.Hour)}
	checkCells(t, row(t, gr, cj), []interface{}{"nightly", "0 3 * * *", "Europe/Paris", "True", int64(1), "9h", "60m", "web", "nginx:1.27", "<none>"})
}

func TestLease(t *testing.T) {
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	checkColumns(t, gr, &coordinationv1.Lease{}, []column{{"Name", "string", 0}, {"Holder", "string", 0}, {"Age", "string", 0}})
	l := &coordinationv1.Lease{ObjectMeta: objMeta("kube-scheduler"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("cp_1234")}}
	checkCells(t, row(t, gr, l), []interface{}{"kube-scheduler", "cp_1234", "60m"})
	checkCells(t, row(t, gr, &coordinationv1.Lease{ObjectMeta: objMeta("free")}), []interface{}{"free", "", "60m"})
}

func TestPriorityClass(t *testing.T) {
	gr := schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}
	checkColumns(t, gr, &schedulingv1.PriorityClass{}, []column{
		{"Name", "string", 0}, {"Value", "integer", 0}, {"Global-Default", "boolean", 0}, {"Age", "string", 0}, {"PreemptionPolicy", "string", 0},
	})
	pc := &schedulingv1.PriorityClass{ObjectMeta: objMeta("system-node-critical"), Value: 2000001000}
	checkCells(t, row(t, gr, pc), []interface{}{"system-node-critical", int64(2000001000), false, "60m", "PreemptLowerPriority"})
	never := corev1.PreemptNever
	pc = &schedulingv1.PriorityClass{ObjectMeta: objMeta("batch"), Value: -5, GlobalDefault: true, PreemptionPolicy: &never}
	checkCells(t, row(t, gr, pc), []interface{}{"batch", int64(-5), true, "60m", "Never"})
}

func TestEndpointSlice(t *testing.T) {
	gr := schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
	checkColumns(t, gr, &discoveryv1.EndpointSlice{}, []column{
		{"Name", "string", 0}, {"AddressType", "string", 0}, {"Ports", "string", 0}, {"Endpoints", "string", 0}, {"Age", "string", 0},
	})
	es := &discoveryv1.EndpointSlice{ObjectMeta: objMeta("web-abc"), AddressType: discoveryv1.AddressTypeIPv4}
	checkCells(t, row(t, gr, es), []interface{}{"web-abc", "IPv4", "<unset>", "<unset>", "60m"})
	es.Ports = []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("metrics")}, {}, {Port: ptr(int32(9090))}}
	es.Endpoints = []discoveryv1.Endpoint{
		{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2", "10.0.0.3"}}, {Addresses: []string{"10.0.0.4"}},
	}
	checkCells(t, row(t, gr, es), []interface{}{"web-abc", "IPv4", "80,metrics,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "60m"})
}

func TestRBAC(t *testing.T) {
	rbac := func(r string) schema.GroupResource {
		return schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: r}
	}
	want := []column{
		{"Name", "string", 0}, {"Role", "string", 0}, {"Age", "string", 0},
		{"Users", "string", 1}, {"Groups", "string", 1}, {"ServiceAccounts", "string", 1},
	}
	checkColumns(t, rbac("rolebindings"), &rbacv1.RoleBinding{}, want)
	checkColumns(t, rbac("clusterrolebindings"), &rbacv1.ClusterRoleBinding{}, want)

	subjects := []rbacv1.Subject{
		{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "Group", Name: "system:masters"},
		{Kind: "ServiceAccount", Namespace: "kube-system", Name: "coredns"}, {Kind: "Other", Name: "x"},
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: objMeta("rb"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}, Subjects: subjects}
	checkCells(t, row(t, rbac("rolebindings"), rb), []interface{}{"rb", "Role/reader", "60m", "alice, bob", "system:masters", "kube-system/coredns"})
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("crb"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}}
	checkCells(t, row(t, rbac("clusterrolebindings"), crb), []interface{}{"crb", "ClusterRole/cluster-admin", "60m", "", "", ""})

	// Roles print like upstream's default table convertor.
	for _, obj := range []runtime.Object{&rbacv1.Role{ObjectMeta: objMeta("r")}, &rbacv1.ClusterRole{ObjectMeta: objMeta("r")}} {
		gr := rbac("roles")
		if _, ok := obj.(*rbacv1.ClusterRole); ok {
			gr = rbac("clusterroles")
		}
		checkColumns(t, gr, obj, []column{{"Name", "string", 0}, {"Created At", "date", 0}})
		checkCells(t, row(t, gr, obj), []interface{}{"r", "2025-06-01T11:00:00Z"})
	}
}

func TestScale(t *testing.T) {
	// The scale subresource is served for its parent resource.
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	s := &autoscalingv1.Scale{ObjectMeta: objMeta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: 3}, Status: autoscalingv1.ScaleStatus{Replicas: 2}}
	checkColumns(t, gr, s, []column{{"Name", "string", 0}, {"Desired", "integer", 0}, {"Available", "integer", 0}, {"Age", "string", 0}})
	checkCells(t, row(t, gr, s), []interface{}{"web", int64(3), int64(2), "60m"})
}
