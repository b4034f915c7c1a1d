package validation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// selectorTemplateCases hold for both ReplicaSet and Deployment; mutate
// gets the shared fields.
var selectorTemplateCases = []struct {
	name   string
	mutate func(sel **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, replicas **int32)
	want   []want
}{
	{"valid", func(**metav1.LabelSelector, *corev1.PodTemplateSpec, **int32) {}, nil},
	// As upstream, a missing selector matches nothing, so the template
	// check fails too.
	{"selector missing", func(sel **metav1.LabelSelector, _ *corev1.PodTemplateSpec, _ **int32) { *sel = nil },
		[]want{"Required spec.selector", "Invalid spec.template.metadata.labels: `selector` does not match template `labels`"}},
	{"selector empty", func(sel **metav1.LabelSelector, _ *corev1.PodTemplateSpec, _ **int32) { *sel = &metav1.LabelSelector{} },
		[]want{"Invalid spec.selector: empty selector is invalid for deployment"}},
	{"selector does not match", func(sel **metav1.LabelSelector, _ *corev1.PodTemplateSpec, _ **int32) {
		*sel = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	}, []want{"Invalid spec.template.metadata.labels: `selector` does not match template `labels`"}},
	{"selector expression matches", func(sel **metav1.LabelSelector, _ *corev1.PodTemplateSpec, _ **int32) {
		*sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In", Values: []string{"web", "api"}}}}
	}, nil},
	{"selector bad operator", func(sel **metav1.LabelSelector, _ *corev1.PodTemplateSpec, _ **int32) {
		*sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	}, []want{"Invalid spec.selector.matchExpressions[0].operator: not a valid selector operator", "Invalid spec.selector: invalid label selector"}},
	{"negative replicas", func(_ **metav1.LabelSelector, _ *corev1.PodTemplateSpec, r **int32) { *r = ptr(int32(-1)) },
		[]want{"Invalid spec.replicas: must be greater than or equal to 0"}},
	{"zero replicas", func(_ **metav1.LabelSelector, _ *corev1.PodTemplateSpec, r **int32) { *r = ptr(int32(0)) }, nil},
	{"template restartPolicy", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}, []want{`NotSupported spec.template.spec.restartPolicy: supported values: "Always"`}},
	{"template activeDeadlineSeconds", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
		tmpl.Spec.ActiveDeadlineSeconds = ptr(int64(10))
	}, []want{"Forbidden spec.template.spec.activeDeadlineSeconds"}},
	{"template invalid pod spec", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
		tmpl.Spec.Containers[0].Image = ""
	}, []want{"Required spec.template.spec.containers[0].image"}},
	{"template bad label", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
		tmpl.Labels["bad key"] = "x"
	}, []want{"Invalid spec.template.metadata.labels"}},
	{"template ephemeral containers", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
		tmpl.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", Image: "busybox", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"}}}
	}, []want{"Forbidden spec.template.spec.ephemeralContainers: ephemeral containers not allowed in pod template"}},
}

func TestReplicaSet(t *testing.T) {
	for _, tc := range selectorTemplateCases {
		t.Run(tc.name, func(t *testing.T) {
			rs := validReplicaSet()
			tc.mutate(&rs.Spec.Selector, &rs.Spec.Template, &rs.Spec.Replicas)
			expectErrs(t, ValidateCreate(rs), tc.want...)
		})
	}
}

func TestDeployment(t *testing.T) {
	for _, tc := range selectorTemplateCases {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mutate(&d.Spec.Selector, &d.Spec.Template, &d.Spec.Replicas)
			expectErrs(t, ValidateCreate(d), tc.want...)
		})
	}

	ios := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	rolling := func(surge, unavailable *intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: surge, MaxUnavailable: unavailable}}
	}
	strategies := []struct {
		name     string
		strategy appsv1.DeploymentStrategy
		want     []want
	}{
		{"rolling 25%/25%", rolling(ios("25%"), ios("25%")), nil},
		{"rolling 1/0", rolling(ios("1"), ios("0")), nil},
		{"rolling 0/100%", rolling(ios("0"), ios("100%")), nil},
		{"both zero", rolling(ios("0"), ios("0")), []want{"Invalid spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0"}},
		{"both zero percent", rolling(ios("0%"), ios("0")), []want{"Invalid spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0"}},
		{"bad percent", rolling(ios("20Percent"), ios("1")), []want{"Invalid spec.strategy.rollingUpdate.maxSurge: a valid percent string must be"}},
		{"negative", rolling(ios("1"), ios("-1")), []want{"Invalid spec.strategy.rollingUpdate.maxUnavailable: must be greater than or equal to 0"}},
		{"over 100%", rolling(ios("1"), ios("110%")), []want{"Invalid spec.strategy.rollingUpdate.maxUnavailable: must not be greater than 100%"}},
		{"recreate", appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}, nil},
		{"recreate with rollingUpdate", appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}},
			[]want{"Forbidden spec.strategy.rollingUpdate: may not be specified when strategy `type` is 'Recreate'"}},
		{"unknown type", appsv1.DeploymentStrategy{Type: "BlueGreen"},
			[]want{`NotSupported spec.strategy.type: supported values: "Recreate", "RollingUpdate"`}},
	}
	for _, tc := range strategies {
		t.Run("strategy "+tc.name, func(t *testing.T) {
			d := validDeployment()
			d.Spec.Strategy = tc.strategy
			expectErrs(t, ValidateCreate(d), tc.want...)
		})
	}

	t.Run("progressDeadlineSeconds not above minReadySeconds", func(t *testing.T) {
		d := validDeployment()
		d.Spec.MinReadySeconds = 600
		expectErrs(t, ValidateCreate(d), "Invalid spec.progressDeadlineSeconds: must be greater than minReadySeconds")
	})
	t.Run("negative revisionHistoryLimit", func(t *testing.T) {
		d := validDeployment()
		d.Spec.RevisionHistoryLimit = ptr(int32(-1))
		expectErrs(t, ValidateCreate(d), "Invalid spec.revisionHistoryLimit")
	})
}

// apps/v1 selectors are immutable; replicas and the template are not.
func TestAppsUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(sel **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, replicas **int32)
		want   []want
	}{
		{"replicas", func(_ **metav1.LabelSelector, _ *corev1.PodTemplateSpec, r **int32) { *r = ptr(int32(5)) }, nil},
		{"template image", func(_ **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
			tmpl.Spec.Containers[0].Image = "nginx:1.28"
		}, nil},
		{"selector changed", func(sel **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, _ **int32) {
			*sel = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "v": "2"}}
			tmpl.Labels["v"] = "2"
		}, []want{"Invalid spec.selector: field is immutable"}},
	}
	for _, tc := range tests {
		t.Run("replicaset "+tc.name, func(t *testing.T) {
			old := validReplicaSet()
			stored(&old.ObjectMeta)
			rs := old.DeepCopy()
			tc.mutate(&rs.Spec.Selector, &rs.Spec.Template, &rs.Spec.Replicas)
			expectErrs(t, ValidateUpdate(rs, old), tc.want...)
		})
		t.Run("deployment "+tc.name, func(t *testing.T) {
			old := validDeployment()
			stored(&old.ObjectMeta)
			d := old.DeepCopy()
			tc.mutate(&d.Spec.Selector, &d.Spec.Template, &d.Spec.Replicas)
			expectErrs(t, ValidateUpdate(d, old), tc.want...)
		})
	}
}

func TestAppsStatusUpdate(t *testing.T) {
	t.Run("replicaset", func(t *testing.T) {
		old := validReplicaSet()
		stored(&old.ObjectMeta)
		rs := old.DeepCopy()
		rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 1}
		expectErrs(t, ValidateStatusUpdate(rs, old), "Invalid status.readyReplicas: cannot be greater than status.replicas")
		rs.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, FullyLabeledReplicas: 3}
		expectErrs(t, ValidateStatusUpdate(rs, old))
	})
	t.Run("deployment", func(t *testing.T) {
		old := validDeployment()
		stored(&old.ObjectMeta)
		old.Status.CollisionCount = ptr(int32(2))
		d := old.DeepCopy()
		d.Status.UnavailableReplicas = -1
		d.Status.CollisionCount = ptr(int32(1))
		expectErrs(t, ValidateStatusUpdate(d, old),
			"Invalid status.unavailableReplicas: must be greater than or equal to 0",
			"Invalid status.collisionCount: cannot be decremented")
	})
}

func validReplicationController() *corev1.ReplicationController {
	tmpl := podTemplate(map[string]string{"app": "web"})
	return defaulted(&corev1.ReplicationController{
		ObjectMeta: meta("web"),
		Spec:       corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "web"}, Template: &tmpl},
	})
}

// A ReplicationController is checked as upstream's
// ValidateReplicationController: its selector is a map, required and
// non-empty, and its template passes a ReplicaSet's template checks.
func TestReplicationController(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(rc *corev1.ReplicationController)
		want   []want
	}{
		{"valid", func(*corev1.ReplicationController) {}, nil},
		{"selector empty", func(rc *corev1.ReplicationController) { rc.Spec.Selector = nil },
			[]want{"Required spec.selector"}},
		{"selector does not match", func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "api"} },
			[]want{"Invalid spec.template.metadata.labels: `selector` does not match template `labels`"}},
		{"selector a subset of the labels", func(rc *corev1.ReplicationController) { rc.Spec.Template.Labels["tier"] = "fe" }, nil},
		{"template missing", func(rc *corev1.ReplicationController) { rc.Spec.Template = nil },
			[]want{"Required spec.template"}},
		{"negative replicas", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(-1)) },
			[]want{"Invalid spec.replicas: must be greater than or equal to 0"}},
		{"zero replicas", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(0)) }, nil},
		{"negative minReadySeconds", func(rc *corev1.ReplicationController) { rc.Spec.MinReadySeconds = -1 },
			[]want{"Invalid spec.minReadySeconds: must be greater than or equal to 0"}},
		{"template restartPolicy", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		},
			[]want{`NotSupported spec.template.spec.restartPolicy: supported values: "Always"`}},
		{"template activeDeadlineSeconds", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(5)) },
			[]want{"Forbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in ReplicationController is not Supported"}},
		{"template invalid pod spec", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers[0].Image = "" },
			[]want{"Required spec.template.spec.containers[0].image"}},
		{"bad name", func(rc *corev1.ReplicationController) { rc.Name = "Web" }, []want{"Invalid metadata.name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := validReplicationController()
			tc.mutate(rc)
			expectErrs(t, ValidateCreate(rc), tc.want...)
		})
	}

	// Unlike apps/v1's, a ReplicationController's selector may change.
	t.Run("update selector", func(t *testing.T) {
		old := validReplicationController()
		stored(&old.ObjectMeta)
		rc := old.DeepCopy()
		rc.Spec.Selector = map[string]string{"app": "web", "v": "2"}
		rc.Spec.Template.Labels["v"] = "2"
		expectErrs(t, ValidateUpdate(rc, old))
		rc.Spec.Selector = map[string]string{"app": "api"}
		expectErrs(t, ValidateUpdate(rc, old), "Invalid spec.template.metadata.labels: `selector` does not match template `labels`")
	})
	t.Run("status", func(t *testing.T) {
		old := validReplicationController()
		stored(&old.ObjectMeta)
		rc := old.DeepCopy()
		rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 1, FullyLabeledReplicas: -1}
		expectErrs(t, ValidateStatusUpdate(rc, old),
			"Invalid status.readyReplicas: cannot be greater than status.replicas",
			"Invalid status.fullyLabeledReplicas: must be greater than or equal to 0")
		rc.Status = corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, FullyLabeledReplicas: 3, ObservedGeneration: 1}
		expectErrs(t, ValidateStatusUpdate(rc, old))
	})
}
