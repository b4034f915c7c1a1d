package validation

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestConfigMap(t *testing.T) {
	tests := []struct {
		name   string
		data   map[string]string
		binary map[string][]byte
		want   []want
	}{
		{"valid keys", map[string]string{"app.properties": "x", "KEY_1": "y", "-dash": "z"}, map[string][]byte{"logo.png": {1}}, nil},
		{"key with slash", map[string]string{"a/b": "x"}, nil, []want{"Invalid data[a/b]: a valid config key must consist of alphanumeric characters"}},
		{"key with space", nil, map[string][]byte{"a b": nil}, []want{"Invalid binaryData[a b]"}},
		{"dot key", map[string]string{"..": "x"}, nil, []want{"Invalid data[..]: must not be '..'"}},
		{"key in both", map[string]string{"k": "x"}, map[string][]byte{"k": nil}, []want{"Invalid data[k]: duplicate of key present in binaryData"}},
		{"at 1 MiB", map[string]string{"k": strings.Repeat("x", 1<<20)}, nil, nil},
		{"over 1 MiB", map[string]string{"a": strings.Repeat("x", 1<<19)}, map[string][]byte{"b": make([]byte, 1<<19+1)},
			[]want{"TooLong []: may not be more than 1048576 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: meta("c"), Data: tc.data, BinaryData: tc.binary}
			expectErrs(t, ValidateCreate(cm), tc.want...)
		})
	}

	t.Run("immutable", func(t *testing.T) {
		old := &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"k": "v"}, Immutable: ptr(true)}
		stored(&old.ObjectMeta)
		cm := old.DeepCopy()
		cm.Data["k"] = "w"
		cm.Immutable = nil
		expectErrs(t, ValidateUpdate(cm, old),
			"Forbidden data: field is immutable when `immutable` is set",
			"Forbidden immutable: field is immutable when `immutable` is set")
		cm = old.DeepCopy()
		cm.Labels = map[string]string{"a": "b"}
		expectErrs(t, ValidateUpdate(cm, old))
	})
}

func TestSecret(t *testing.T) {
	tests := []struct {
		name   string
		secret corev1.Secret
		want   []want
	}{
		{"opaque", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("x")}}, nil},
		{"bad key", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"pass word": nil}},
			[]want{"Invalid data[pass word]"}},
		{"bad stringData key", corev1.Secret{Type: corev1.SecretTypeOpaque, StringData: map[string]string{"a:b": "x"}},
			[]want{"Invalid stringData[a:b]"}},
		{"too big", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": make([]byte, 1<<20), "b": {1}}},
			[]want{"TooLong data: may not be more than 1048576 bytes"}},
		{"tls missing key", corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c")}},
			[]want{"Required data[tls.key]"}},
		{"dockerconfigjson not json", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}},
			[]want{"Invalid data[.dockerconfigjson]"}},
		{"service account token", corev1.Secret{Type: corev1.SecretTypeServiceAccountToken},
			[]want{"Required metadata.annotations[kubernetes.io/service-account.name]"}},
		{"basic auth", corev1.Secret{Type: corev1.SecretTypeBasicAuth, StringData: map[string]string{"username": "u"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.secret
			s.ObjectMeta = meta("s")
			expectErrs(t, ValidateCreate(&s), tc.want...)
		})
	}
	t.Run("type is immutable", func(t *testing.T) {
		old := defaulted(&corev1.Secret{ObjectMeta: meta("s"), Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}})
		stored(&old.ObjectMeta)
		s := old.DeepCopy()
		s.Type = corev1.SecretTypeTLS
		expectErrs(t, ValidateUpdate(s, old), "Invalid type: field is immutable")
	})
}

func TestNamespace(t *testing.T) {
	ns := defaulted(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	expectErrs(t, ValidateCreate(ns))
	ns.Spec.Finalizers = []corev1.FinalizerName{"kubernetes", "example.com/cleanup", "mine"}
	expectErrs(t, ValidateCreate(ns), "Invalid spec.finalizers[2]: name is neither a standard finalizer name nor is it fully qualified")

	old := defaulted(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	stored(&old.ObjectMeta)
	tests := []struct {
		name   string
		mutate func(ns *corev1.Namespace)
		want   []want
	}{
		{"active", func(ns *corev1.Namespace) {}, nil},
		{"terminating without deletion", func(ns *corev1.Namespace) { ns.Status.Phase = corev1.NamespaceTerminating },
			[]want{"Invalid status.phase: may only be 'Active' if `deletionTimestamp` is empty"}},
	}
	for _, tc := range tests {
		t.Run("status "+tc.name, func(t *testing.T) {
			ns := old.DeepCopy()
			tc.mutate(ns)
			expectErrs(t, ValidateStatusUpdate(ns, old), tc.want...)
		})
	}
}

func TestNode(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []want
	}{
		{"valid", func(n *corev1.Node) {}, nil},
		{"taints", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: "NoSchedule"}, {Key: "k", Effect: "NoExecute"}}
		}, nil},
		{"duplicate taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: "NoSchedule"}, {Key: "k", Value: "v", Effect: "NoSchedule"}}
		}, []want{"Duplicate spec.taints[1]: taints must be unique by key and effect pair"}},
		{"taint effect", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k"}} }, []want{"Required spec.taints[0].effect"}},
		{"podCIDR", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.0.0/33"} }, []want{"Invalid spec.podCIDRs[0]"}},
		{"negative capacity", func(n *corev1.Node) { n.Status.Capacity = corev1.ResourceList{"cpu": qty("-1")} },
			[]want{"Invalid status.capacity[cpu]: must be greater than or equal to 0",
				"Invalid status.allocatable[cpu]: must be greater than or equal to 0"}}, // allocatable defaults to capacity
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1.example.com"}}
			tc.mutate(n)
			expectErrs(t, ValidateCreate(defaulted(n)), tc.want...)
		})
	}
	t.Run("podCIDRs and providerID fixed once set", func(t *testing.T) {
		old := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{PodCIDRs: []string{"10.244.0.0/24"}, ProviderID: "kstep://n"}}
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.PodCIDRs = []string{"10.244.1.0/24"}
		n.Spec.ProviderID = "other://n"
		expectErrs(t, ValidateUpdate(n, old),
			`Forbidden spec.podCIDRs: node updates may not change podCIDR except from "" to valid`,
			`Forbidden spec.providerID: node updates may not change providerID except from "" to valid`)
		n = old.DeepCopy()
		n.Spec.Unschedulable = true
		expectErrs(t, ValidateUpdate(n, old))
	})
}

func TestLease(t *testing.T) {
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want []want
	}{
		{"empty", coordinationv1.LeaseSpec{}, nil},
		{"holder", coordinationv1.LeaseSpec{HolderIdentity: ptr("a"), LeaseDurationSeconds: ptr(int32(15)), LeaseTransitions: ptr(int32(0))}, nil},
		{"zero duration", coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(0))}, []want{"Invalid spec.leaseDurationSeconds: must be greater than 0"}},
		{"negative duration", coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(-5))}, []want{"Invalid spec.leaseDurationSeconds: must be greater than 0"}},
		{"negative transitions", coordinationv1.LeaseSpec{LeaseTransitions: ptr(int32(-1))}, []want{"Invalid spec.leaseTransitions"}},
		{"preferred holder without strategy", coordinationv1.LeaseSpec{PreferredHolder: ptr("b")},
			[]want{"Forbidden spec.preferredHolder: may only be specified if `strategy` is defined"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectErrs(t, ValidateCreate(&coordinationv1.Lease{ObjectMeta: meta("l"), Spec: tc.spec}), tc.want...)
		})
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		name     string
		replicas int32
		want     []want
	}{
		{"zero", 0, nil},
		{"some", 7, nil},
		{"negative", -1, []want{"Invalid spec.replicas: must be greater than or equal to 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &autoscalingv1.Scale{ObjectMeta: meta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: tc.replicas}}
			expectErrs(t, ValidateCreate(s), tc.want...)
			// A scale update checks the Scale only: no resourceVersion needed.
			expectErrs(t, ValidateUpdate(s, s.DeepCopy()), tc.want...)
		})
	}
}

func TestCoreEvent(t *testing.T) {
	ref := func(ns string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web"}
	}
	tests := []struct {
		name   string
		mutate func(e *corev1.Event)
		want   []want
	}{
		{"valid", func(e *corev1.Event) {}, nil},
		{"namespace mismatch", func(e *corev1.Event) { e.InvolvedObject = ref("other") },
			[]want{`Invalid involvedObject.namespace: "other": does not match event.namespace`}},
		{"cluster-scoped object in default", func(e *corev1.Event) {
			e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, nil},
		{"cluster-scoped object elsewhere", func(e *corev1.Event) {
			e.Namespace = "team-a"
			e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, []want{"Invalid involvedObject.namespace: does not match event.namespace"}},
		{"name with dots and caps is fine", func(e *corev1.Event) { e.Name = "Web.17a8b" }, nil},
		{"name with slash", func(e *corev1.Event) { e.Name = "a/b" }, []want{"Invalid metadata.name"}},
		{"new-style needs reporter", func(e *corev1.Event) { e.EventTime = metav1.NowMicro() },
			// As upstream, the empty controller is also not a qualified name.
			[]want{"Required reportingController", "Required reportingInstance", "Required action",
				"Invalid reportingController: name part must be non-empty",
				"Invalid reportingController: name part must consist of"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &corev1.Event{ObjectMeta: meta("web.17a8b"), InvolvedObject: ref("default"), Reason: "Started", Type: "Normal"}
			tc.mutate(e)
			expectErrs(t, ValidateCreate(e), tc.want...)
		})
	}
}

func validEventsV1() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          meta("web.17a8b"),
		EventTime:           metav1.NewMicroTime(time.Unix(1700000000, 0)),
		ReportingController: "kstep.dev/scheduler",
		ReportingInstance:   "scheduler-1",
		Action:              "Binding",
		Reason:              "Scheduled",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		Note:                "assigned",
		Type:                corev1.EventTypeNormal,
	}
}

func TestEventsV1(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(e *eventsv1.Event)
		want   []want
	}{
		{"valid", func(e *eventsv1.Event) {}, nil},
		{"no eventTime", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} }, []want{"Required eventTime"}},
		{"bad type", func(e *eventsv1.Event) { e.Type = "Info" }, []want{"Invalid type: has invalid value: Info"}},
		{"regarding cluster-scoped from a namespace", func(e *eventsv1.Event) {
			e.Namespace = "team-a"
			e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, []want{"Invalid regarding.namespace: does not match event.namespace"}},
		{"regarding cluster-scoped from kube-system", func(e *eventsv1.Event) {
			e.Namespace = "kube-system"
			e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, nil},
		{"no action", func(e *eventsv1.Event) { e.Action = "" }, []want{"Required action"}},
		{"long note", func(e *eventsv1.Event) { e.Note = strings.Repeat("x", 1025) }, []want{"Invalid note: can have at most 1024 characters"}},
		{"bad controller", func(e *eventsv1.Event) { e.ReportingController = "not a name" }, []want{"Invalid reportingController"}},
		{"deprecated count", func(e *eventsv1.Event) { e.DeprecatedCount = 3 }, []want{"Invalid deprecatedCount: needs to be unset"}},
		{"series", func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1} },
			[]want{"Invalid series.count: should be at least 2", "Required series.lastObservedTime"}},
		{"subdomain name", func(e *eventsv1.Event) { e.Name = "Web" }, []want{"Invalid metadata.name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := validEventsV1()
			tc.mutate(e)
			expectErrs(t, ValidateCreate(e), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := validEventsV1()
		stored(&old.ObjectMeta)
		e := old.DeepCopy()
		e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()}
		expectErrs(t, ValidateUpdate(e, old))
		e.Note = "changed"
		expectErrs(t, ValidateUpdate(e, old), "Invalid note: field is immutable")
	})
}

func TestServiceAccount(t *testing.T) {
	expectErrs(t, ValidateCreate(&corev1.ServiceAccount{ObjectMeta: meta("builder.v1")}))
	expectErrs(t, ValidateCreate(&corev1.ServiceAccount{ObjectMeta: meta("Builder")}), "Invalid metadata.name")
}

// A ConfigMap's and a Secret's key errors are what checking every key in
// key order gives (the way validation checked them before keyProblems),
// error for error, however many keys are refused and in whatever order the
// maps give them.
func TestConfigMapKeysAsSorted(t *testing.T) {
	keys := []string{"a", "b b", "..x", ".", "..", "", ".a", "a..", "-", "_", "Z9", "a/b", "ü", "k:1", "x\n",
		strings.Repeat("k", 253), strings.Repeat("k", 254), strings.Repeat(".", 254)}
	data, binary := map[string]string{}, map[string][]byte{}
	secretData, stringData := map[string][]byte{}, map[string]string{}
	for i, k := range keys {
		for j := range 3 {
			key := k + strings.Repeat("~", j%2) // "~" is refused too
			data[key] = "v"
			stringData[key] = "v"
			if (i+j)%2 == 0 {
				binary[key] = []byte("v")
				secretData[key] = []byte("v")
			}
		}
	}
	asSorted := func(path string, m []string, dup func(string) bool) field.ErrorList {
		var errs field.ErrorList
		for _, key := range sets.List(sets.New(m...)) {
			p := field.NewPath(path).Key(key)
			for _, msg := range validation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(p, key, msg))
			}
			if dup != nil && dup(key) {
				errs = append(errs, field.Invalid(p, key, "duplicate of key present in binaryData"))
			}
		}
		return errs
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta("c"), Data: data, BinaryData: binary}
	want := append(asSorted("data", slices.Collect(maps.Keys(data)), func(k string) bool { _, ok := binary[k]; return ok }),
		asSorted("binaryData", slices.Collect(maps.Keys(binary)), nil)...)
	for range 5 { // each walk of the maps is in another order
		if got := ValidateCreate(cm); !reflect.DeepEqual(got, want) {
			t.Fatalf("ConfigMap:\n got %v\nwant %v", got, want)
		}
	}
	s := &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Data: secretData, StringData: stringData}
	want = append(asSorted("data", slices.Collect(maps.Keys(secretData)), nil),
		asSorted("stringData", slices.Collect(maps.Keys(stringData)), nil)...)
	for range 5 {
		if got := ValidateCreate(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Secret:\n got %v\nwant %v", got, want)
		}
	}
}

// A key plainConfigMapKey accepts is one IsConfigMapKey accepts.
func FuzzPlainConfigMapKey(f *testing.F) {
	for _, k := range []string{"a", ".", "..", "..a", ".a", "a.b", "-_.", "", "a b", strings.Repeat("a", 253), strings.Repeat("a", 254)} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if msgs := validation.IsConfigMapKey(key); plainConfigMapKey(key) && len(msgs) > 0 {
			t.Fatalf("plainConfigMapKey(%q), but IsConfigMapKey says %v", key, msgs)
		} else if !plainConfigMapKey(key) && len(msgs) == 0 {
			t.Fatalf("IsConfigMapKey accepts %q, but plainConfigMapKey does not", key)
		}
	})
}
