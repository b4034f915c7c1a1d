package validation

import (
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/apiserver/defaults"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// want is one expected error: "Type field" or "Type field: detail
// substring", e.g. "FieldValueRequired spec.containers".
type want string

func (w want) match(e *field.Error) bool {
	head, detail, _ := strings.Cut(string(w), ": ")
	typ, fld, _ := strings.Cut(head, " ")
	return string(e.Type) == typeNames[typ] && e.Field == fld && strings.Contains(e.Error(), detail)
}

// Short names for the error types used in tables.
var typeNames = map[string]string{
	"Required":     string(field.ErrorTypeRequired),
	"Invalid":      string(field.ErrorTypeInvalid),
	"Forbidden":    string(field.ErrorTypeForbidden),
	"NotSupported": string(field.ErrorTypeNotSupported),
	"TooLong":      string(field.ErrorTypeTooLong),
	"Duplicate":    string(field.ErrorTypeDuplicate),
	"NotFound":     string(field.ErrorTypeNotFound),
	"Internal":     string(field.ErrorTypeInternal),
	"TooMany":      string(field.ErrorTypeTooMany),
}

// expectErrs requires errs to be exactly the wanted errors, in any order.
func expectErrs(t *testing.T, errs field.ErrorList, wants ...want) {
	t.Helper()
	used := make([]bool, len(errs))
	for _, w := range wants {
		found := false
		for i, e := range errs {
			if !used[i] && w.match(e) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing error %q", w)
		}
	}
	for i, e := range errs {
		if !used[i] {
			t.Errorf("unexpected error: [%s] %v", e.Type, e)
		}
	}
}

// defaulted applies defaults.Apply, as the write chain does before
// validation, and returns obj.
func defaulted[T runtime.Object](obj T) T {
	defaults.Apply(obj)
	return obj
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default"}
}

// stored turns a fresh object's metadata into what storage hands back.
func stored(m *metav1.ObjectMeta) {
	m.UID = "0b6c3d5e-1111-2222-3333-444455556666"
	m.ResourceVersion = "42"
	m.CreationTimestamp = metav1.Unix(1700000000, 0)
}

func validPod() *corev1.Pod {
	return defaulted(&corev1.Pod{
		ObjectMeta: meta("web"),
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			}},
		},
	})
}

func storedPod() *corev1.Pod {
	p := validPod()
	stored(&p.ObjectMeta)
	return p
}

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
		},
	}
}

func validReplicaSet() *appsv1.ReplicaSet {
	return defaulted(&appsv1.ReplicaSet{
		ObjectMeta: meta("web"),
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate(map[string]string{"app": "web"}),
		},
	})
}

func validDeployment() *appsv1.Deployment {
	return defaulted(&appsv1.Deployment{
		ObjectMeta: meta("web"),
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate(map[string]string{"app": "web"}),
		},
	})
}

func validService() *corev1.Service {
	return defaulted(&corev1.Service{
		ObjectMeta: meta("web"),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}},
		},
	})
}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

func ptr[T any](v T) *T { return &v }

func TestExpectErrsHelper(t *testing.T) {
	e := field.Required(field.NewPath("spec", "x"), "must be set")
	if !want("Required spec.x: must be set").match(e) || want("Invalid spec.x").match(e) || want("Required spec.y").match(e) {
		t.Fatal("want.match is broken")
	}
}
