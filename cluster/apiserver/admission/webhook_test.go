package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRuleMatches(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	rule := func(op admissionregistrationv1.OperationType, res string, scope admissionregistrationv1.ScopeType) *admissionregistrationv1.RuleWithOperations {
		return &admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{op},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{res}, Scope: &scope}}
	}
	cases := []struct {
		name string
		rule *admissionregistrationv1.RuleWithOperations
		sub  string
		op   admissionv1.Operation
		want bool
	}{
		{"exact", rule("CREATE", "pods", "*"), "", admissionv1.Create, true},
		{"other operation", rule("UPDATE", "pods", "*"), "", admissionv1.Create, false},
		{"any operation", rule("*", "pods", "*"), "", admissionv1.Delete, true},
		{"resource without subresource skips status", rule("*", "pods", "*"), "status", admissionv1.Update, false},
		{"pods/status", rule("*", "pods/status", "*"), "status", admissionv1.Update, true},
		{"pods/* includes status", rule("*", "pods/*", "*"), "status", admissionv1.Update, true},
		{"*/* includes everything", rule("*", "*/*", "*"), "", admissionv1.Create, true},
		{"* is main resources", rule("*", "*", "*"), "binding", admissionv1.Create, false},
		{"cluster scope skips namespaced", rule("*", "pods", "Cluster"), "", admissionv1.Create, false},
		{"other resource", rule("*", "services", "*"), "", admissionv1.Create, false},
	}
	for _, tc := range cases {
		a := &Attributes{Operation: tc.op, Resource: pods, Subresource: tc.sub, Namespaced: true}
		if got := ruleMatches(tc.rule, a); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	h := &hook{
		rules:             []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"*"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}},
		namespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"hooked": "yes"}},
		objectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}
	pod := func(l map[string]string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: l}} }
	cases := []struct {
		name     string
		ns       map[string]string
		obj, old *corev1.Pod
		want     bool
	}{
		{"both match", map[string]string{"hooked": "yes"}, pod(map[string]string{"app": "web"}), nil, true},
		{"namespace does not", map[string]string{}, pod(map[string]string{"app": "web"}), nil, false},
		{"object does not", map[string]string{"hooked": "yes"}, pod(nil), nil, false},
		{"old object does", map[string]string{"hooked": "yes"}, pod(nil), pod(map[string]string{"app": "web"}), true},
	}
	for _, tc := range cases {
		a := &Attributes{Operation: admissionv1.Update, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true,
			NamespaceLabels: tc.ns, Object: tc.obj}
		if tc.old != nil {
			a.OldObject = tc.old
		}
		if got, err := matches(h, a); err != nil || got != tc.want {
			t.Errorf("%s: got %v %v, want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestDefaultTolerations(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	DefaultTolerations(p, 300, 300)
	if len(p.Spec.Tolerations) != 1 {
		t.Fatalf("a pod tolerating everything got %v", p.Spec.Tolerations)
	}
	p = &corev1.Pod{}
	DefaultTolerations(p, 300, -1)
	if len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0].Key != corev1.TaintNodeNotReady || *p.Spec.Tolerations[0].TolerationSeconds != 300 {
		t.Fatalf("got %v, want not-ready only", p.Spec.Tolerations)
	}
}
