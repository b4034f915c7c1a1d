package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Descriptions come from the same (older) API types upstream takes them from.

func init() {
	register(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, typed(replicaSetColumns, replicaSetCells), "replicasets")
	register(schema.GroupKind{Group: "apps", Kind: "Deployment"}, typed(deploymentColumns, deploymentCells), "deployments")
	register(schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, typed(daemonSetColumns, daemonSetCells), "daemonsets")
	register(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, typed(statefulSetColumns, statefulSetCells), "statefulsets")
	register(schema.GroupKind{Group: "apps", Kind: "ControllerRevision"}, typed(controllerRevisionColumns, controllerRevisionCells), "controllerrevisions")
}

var replicaSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
}

func replicaSetCells(rs *appsv1.ReplicaSet, now time.Time) []interface{} {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []interface{}{
		rs.Name,
		int64(replicas(rs.Spec.Replicas)),
		int64(rs.Status.Replicas),
		int64(rs.Status.ReadyReplicas),
		since(now, rs.CreationTimestamp),
		names,
		images,
		metav1.FormatLabelSelector(rs.Spec.Selector),
	}
}

var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	{Name: "Up-to-date", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
	{Name: "Available", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]},
}

func deploymentCells(d *appsv1.Deployment, now time.Time) []interface{} {
	// Unlike the other workloads, upstream prints an empty selector as "".
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []interface{}{
		d.Name,
		fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas),
		since(now, d.CreationTimestamp),
		names,
		images,
		selector,
	}
}

var daemonSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
	{Name: "Current", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
	{Name: "Ready", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
	{Name: "Up-to-date", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
	{Name: "Available", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
	{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
}

func daemonSetCells(ds *appsv1.DaemonSet, now time.Time) []interface{} {
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []interface{}{
		ds.Name,
		int64(ds.Status.DesiredNumberScheduled),
		int64(ds.Status.CurrentNumberScheduled),
		int64(ds.Status.NumberReady),
		int64(ds.Status.UpdatedNumberScheduled),
		int64(ds.Status.NumberAvailable),
		labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		since(now, ds.CreationTimestamp),
		names,
		images,
		metav1.FormatLabelSelector(ds.Spec.Selector),
	}
}

var statefulSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	ageColumn,
	containersColumn,
	imagesColumn,
}

func statefulSetCells(ss *appsv1.StatefulSet, now time.Time) []interface{} {
	names, images := containerCells(ss.Spec.Template.Spec.Containers)
	return []interface{}{
		ss.Name,
		fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicas(ss.Spec.Replicas)),
		since(now, ss.CreationTimestamp),
		names,
		images,
	}
}

// ControllerRevision (upstream prints the revision, an int64, under a
// string column).

var controllerRevisionColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Controller", Type: "string", Description: "Controller of the object"},
	{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
	ageColumn,
}

func controllerRevisionCells(cr *appsv1.ControllerRevision, now time.Time) []interface{} {
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			controller = strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
		}
	}
	return []interface{}{cr.Name, controller, cr.Revision, since(now, cr.CreationTimestamp)}
}
