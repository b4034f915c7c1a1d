package validation

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Names: DNS-1123 subdomains for most kinds, DNS-1123 labels for
// namespaces and services; generateName stands in for an empty name.
func TestNames(t *testing.T) {
	withName := func(obj runtime.Object, name, generateName string) runtime.Object {
		m := obj.(metav1.Object)
		m.SetName(name)
		m.SetGenerateName(generateName)
		return obj
	}
	ns := func() runtime.Object { return defaulted(&corev1.Namespace{}) }
	node := func() runtime.Object { return defaulted(&corev1.Node{}) }
	cm := func() runtime.Object { return &corev1.ConfigMap{ObjectMeta: meta("")} }
	svc := func() runtime.Object { return validService() }
	pod := func() runtime.Object { return validPod() }
	tests := []struct {
		name         string
		obj          func() runtime.Object
		objName, gen string
		want         []want
	}{
		{"pod subdomain", pod, "web.v1", "", nil},
		{"pod uppercase", pod, "Bad_Name", "", []want{"Invalid metadata.name: a lowercase RFC 1123 subdomain"}},
		{"pod too long", pod, strings.Repeat("a", 254), "", []want{"Invalid metadata.name: must be no more than 253 characters"}},
		{"pod no name", pod, "", "", []want{"Required metadata.name: name or generateName is required"}},
		{"pod generateName", pod, "", "web-", nil},
		{"pod bad generateName", pod, "", "Web-", []want{"Invalid metadata.generateName"}},
		{"configmap subdomain", cm, "my.config", "", nil},
		{"node subdomain", node, "node-1.example.com", "", nil},
		{"node bad", node, "node_1", "", []want{"Invalid metadata.name"}},
		{"namespace label", ns, "team-a", "", nil},
		{"namespace dots", ns, "team.a", "", []want{"Invalid metadata.name: must not contain dots"}},
		{"namespace caps", ns, "Team", "", []want{"Invalid metadata.name: a lowercase RFC 1123 label"}},
		{"namespace too long", ns, strings.Repeat("a", 64), "", []want{"Invalid metadata.name: must be no more than 63 characters"}},
		{"service label", svc, "web-1", "", nil},
		{"service dots", svc, "web.v1", "", []want{"Invalid metadata.name: must not contain dots"}},
		{"service leading digit", svc, "1web", "", nil},
		{"service caps", svc, "Web", "", []want{"Invalid metadata.name: a lowercase RFC 1123 label"}},
		{"service generateName", svc, "", "web-", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := withName(tc.obj(), tc.objName, tc.gen)
			if n, ok := obj.(*corev1.Namespace); ok {
				n.Labels = nil // the defaulted metadata.name label would carry the bad name
			}
			expectErrs(t, ValidateCreate(obj), tc.want...)
		})
	}
}

// Namespaced kinds need a namespace (the handler fills it from the URL);
// cluster-scoped kinds may not have one.
func TestNamespaceRequired(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want []want
	}{
		{"pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: validPod().Spec}, []want{"Required metadata.namespace"}},
		{"configmap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, []want{"Required metadata.namespace"}},
		{"secret", defaulted(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}), []want{"Required metadata.namespace"}},
		{"serviceaccount", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, []want{"Required metadata.namespace"}},
		{"lease", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, []want{"Required metadata.namespace"}},
		{"deployment", func() runtime.Object { d := validDeployment(); d.Namespace = ""; return d }(), []want{"Required metadata.namespace"}},
		{"bad namespace", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "Bad"}}, []want{"Invalid metadata.namespace"}},
		{"node with namespace", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "default"}}, []want{"Forbidden metadata.namespace: not allowed on this type"}},
		{"namespace with namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "a"}}, []want{"Forbidden metadata.namespace"}},
		{"node", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectErrs(t, ValidateCreate(tc.obj), tc.want...)
		})
	}
}

// Label keys are qualified names and values label values; annotation keys
// are qualified names and their total size is capped at 256 KiB.
func TestLabelsAndAnnotations(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        []want
	}{
		{"valid", map[string]string{"app.kubernetes.io/name": "web", "tier": ""}, map[string]string{"example.com/note": strings.Repeat("x", 1000)}, nil},
		{"bad label key", map[string]string{"bad key": "v"}, nil, []want{"Invalid metadata.labels: name part must consist of alphanumeric"}},
		{"bad label prefix", map[string]string{"Bad_Prefix/key": "v"}, nil, []want{"Invalid metadata.labels: prefix part"}},
		{"label value too long", map[string]string{"k": strings.Repeat("v", 64)}, nil, []want{"Invalid metadata.labels: must be no more than 63 bytes"}},
		{"label value bad chars", map[string]string{"k": "a b"}, nil, []want{"Invalid metadata.labels: a valid label must be an empty string"}},
		{"bad annotation key", nil, map[string]string{"-bad": "v"}, []want{"Invalid metadata.annotations"}},
		{"annotations too big", nil, map[string]string{"big": strings.Repeat("x", 256*1024)}, []want{"TooLong metadata.annotations: may not be more than 262144 bytes"}},
		{"annotations at limit", nil, map[string]string{"big": strings.Repeat("x", 256*1024-3)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: meta("c")}
			cm.Labels, cm.Annotations = tc.labels, tc.annotations
			expectErrs(t, ValidateCreate(cm), tc.want...)
		})
	}
}

// Metadata updates: uid, creationTimestamp, name and namespace are
// immutable; resourceVersion must be given.
func TestObjectMetaUpdate(t *testing.T) {
	base := func() *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"k": "v"}}
		stored(&cm.ObjectMeta)
		return cm
	}
	tests := []struct {
		name   string
		mutate func(cm *corev1.ConfigMap)
		want   []want
	}{
		{"data change", func(cm *corev1.ConfigMap) { cm.Data["k"] = "w" }, nil},
		{"labels change", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"a": "b"} }, nil},
		{"uid", func(cm *corev1.ConfigMap) { cm.UID = "other" }, []want{"Invalid metadata.uid: field is immutable"}},
		{"creationTimestamp", func(cm *corev1.ConfigMap) { cm.CreationTimestamp = metav1.Unix(1, 0) }, []want{"Invalid metadata.creationTimestamp: field is immutable"}},
		{"name", func(cm *corev1.ConfigMap) { cm.Name = "d" }, []want{"Invalid metadata.name: field is immutable"}},
		{"namespace", func(cm *corev1.ConfigMap) { cm.Namespace = "other" }, []want{"Invalid metadata.namespace: field is immutable"}},
		{"no resourceVersion", func(cm *corev1.ConfigMap) { cm.ResourceVersion = "" }, []want{"Invalid metadata.resourceVersion: must be specified for an update"}},
		{"bad label on update", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"a b": "c"} }, []want{"Invalid metadata.labels"}},
		{"bad finalizer", func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"mine"} }, []want{"Invalid metadata.finalizers[0]: name is neither a standard finalizer name nor is it fully qualified"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, cm := base(), base()
			tc.mutate(cm)
			expectErrs(t, ValidateUpdate(cm, old), tc.want...)
		})
	}
	// The same rules hold for every kind and for /status.
	oldPod, pod := storedPod(), storedPod()
	pod.UID = "other"
	expectErrs(t, ValidateStatusUpdate(pod, oldPod), "Invalid metadata.uid: field is immutable")
	oldD, d := validDeployment(), validDeployment()
	stored(&oldD.ObjectMeta)
	stored(&d.ObjectMeta)
	d.CreationTimestamp = metav1.Unix(5, 0)
	expectErrs(t, ValidateUpdate(d, oldD), "Invalid metadata.creationTimestamp: field is immutable")
}

// Every served kind dispatches, and a type mismatch is an internal error.
func TestDispatch(t *testing.T) {
	valid := []runtime.Object{
		defaulted(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}),
		validPod(),
		defaulted(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}),
		validService(),
		defaulted(&corev1.Endpoints{ObjectMeta: meta("web"), Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}),
		&corev1.Event{ObjectMeta: meta("web.1"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started"},
		validEventsV1(),
		&corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"a.b": "c"}},
		defaulted(&corev1.Secret{ObjectMeta: meta("s"), StringData: map[string]string{"password": "x"}}),
		&corev1.ServiceAccount{ObjectMeta: meta("default")},
		&coordinationv1.Lease{ObjectMeta: meta("l"), Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(15))}},
		validReplicaSet(),
		validDeployment(),
		&autoscalingv1.Scale{ObjectMeta: meta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: 3}},
		&corev1.Binding{ObjectMeta: meta("web"), Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}},
	}
	for _, obj := range valid {
		t.Run(fmt.Sprintf("%T", obj), func(t *testing.T) {
			expectErrs(t, ValidateCreate(obj))
			old := obj.DeepCopyObject()
			newObj := obj.DeepCopyObject()
			if m, ok := newObj.(metav1.Object); ok {
				stored(metaOf(old))
				m.SetUID(metaOf(old).UID)
				m.SetResourceVersion("43")
				m.SetCreationTimestamp(metaOf(old).CreationTimestamp)
			}
			expectErrs(t, ValidateUpdate(newObj, old))
			expectErrs(t, ValidateStatusUpdate(newObj, old))
		})
	}
	expectErrs(t, ValidateUpdate(validPod(), validService()), "Internal []: old object is *v1.Service, want *v1.Pod")
	expectErrs(t, ValidateCreate(&corev1.PersistentVolumeClaim{})) // a kind kstep does not serve
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *corev1.Namespace:
		return &o.ObjectMeta
	case *corev1.Pod:
		return &o.ObjectMeta
	case *corev1.Node:
		return &o.ObjectMeta
	case *corev1.Service:
		return &o.ObjectMeta
	case *corev1.Endpoints:
		return &o.ObjectMeta
	case *corev1.Event:
		return &o.ObjectMeta
	case *eventsv1.Event:
		return &o.ObjectMeta
	case *corev1.ConfigMap:
		return &o.ObjectMeta
	case *corev1.Secret:
		return &o.ObjectMeta
	case *corev1.ServiceAccount:
		return &o.ObjectMeta
	case *coordinationv1.Lease:
		return &o.ObjectMeta
	case *appsv1.ReplicaSet:
		return &o.ObjectMeta
	case *appsv1.Deployment:
		return &o.ObjectMeta
	case *autoscalingv1.Scale:
		return &o.ObjectMeta
	case *corev1.Binding:
		return &o.ObjectMeta
	}
	panic("unknown type")
}
