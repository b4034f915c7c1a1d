package printers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func apps(resource string) schema.GroupResource {
	return schema.GroupResource{Group: "apps", Resource: resource}
}

func template(containers ...corev1.Container) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}
}

var (
	web     = corev1.Container{Name: "web", Image: "nginx:1.27"}
	sidecar = corev1.Container{Name: "log", Image: "busybox"}
	webSel  = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
)

func TestReplicaSet(t *testing.T) {
	checkColumns(t, apps("replicasets"), &appsv1.ReplicaSet{}, []column{
		{"Name", "string", 0}, {"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	rs := &appsv1.ReplicaSet{
		ObjectMeta: objMeta("web-5d"),
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr(int32(3)),
			Selector: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web", "pod-template-hash": "5d"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
			},
			Template: template(web, sidecar),
		},
		Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1},
	}
	checkCells(t, row(t, apps("replicasets"), rs), []interface{}{
		"web-5d", int64(3), int64(3), int64(1), "60m", "web,log", "nginx:1.27,busybox", "app=web,pod-template-hash=5d,tier in (a,b)",
	})
	rs = &appsv1.ReplicaSet{ObjectMeta: objMeta("defaulted")}
	checkCells(t, row(t, apps("replicasets"), rs), []interface{}{"defaulted", int64(1), int64(0), int64(0), "60m", "", "", "<none>"})
}

func TestDeployment(t *testing.T) {
	checkColumns(t, apps("deployments"), &appsv1.Deployment{}, []column{
		{"Name", "string", 0}, {"Ready", "string", 0}, {"Up-to-date", "string", 0}, {"Available", "string", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	d := &appsv1.Deployment{
		ObjectMeta: objMeta("web"),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: webSel, Template: template(web)},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}
	checkCells(t, row(t, apps("deployments"), d), []interface{}{"web", "2/3", int64(3), int64(2), "60m", "web", "nginx:1.27", "app=web"})
	d = &appsv1.Deployment{ObjectMeta: objMeta("scaled-down"), Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(0))}}
	checkCells(t, row(t, apps("deployments"), d), []interface{}{"scaled-down", "0/0", int64(0), int64(0), "60m", "", "", ""})
	d = &appsv1.Deployment{ObjectMeta: objMeta("bad"), Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}},
	}}}
	checkCells(t, row(t, apps("deployments"), d), []interface{}{"bad", "0/1", int64(0), int64(0), "60m", "", "", "<invalid>"})
}

func TestDaemonSet(t *testing.T) {
	checkColumns(t, apps("daemonsets"), &appsv1.DaemonSet{}, []column{
		{"Name", "string", 0}, {"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0},
		{"Up-to-date", "integer", 0}, {"Available", "integer", 0}, {"Node Selector", "string", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	tmpl := template(web)
	tmpl.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: objMeta("kube-proxy"),
		Spec:       appsv1.DaemonSetSpec{Selector: webSel, Template: tmpl},
		Status:     appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2},
	}
	checkCells(t, row(t, apps("daemonsets"), ds), []interface{}{
		"kube-proxy", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "60m", "web", "nginx:1.27", "app=web",
	})
}

func TestStatefulSet(t *testing.T) {
	checkColumns(t, apps("statefulsets"), &appsv1.StatefulSet{}, []column{
		{"Name", "string", 0}, {"Ready", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1}, {"Images", "string", 1},
	})
	ss := &appsv1.StatefulSet{
		ObjectMeta: objMeta("db"),
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Template: template(web, sidecar)},
		Status:     appsv1.StatefulSetStatus{ReadyReplicas: 1},
	}
	checkCells(t, row(t, apps("statefulsets"), ss), []interface{}{"db", "1/3", "60m", "web,log", "nginx:1.27,busybox"})
}
