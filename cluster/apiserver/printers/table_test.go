package printers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func TestTableShape(t *testing.T) {
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: objMeta("a"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		&corev1.Namespace{ObjectMeta: objMeta("b"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
	}
	table, err := Table(core("namespaces"), objs, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if table.APIVersion != "meta.k8s.io/v1" || table.Kind != "Table" {
		t.Errorf("TypeMeta = %+v", table.TypeMeta)
	}
	if table.ResourceVersion != "" || table.Continue != "" {
		t.Errorf("ListMeta = %+v, want it left to the handler", table.ListMeta)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[0] != "a" || table.Rows[1].Cells[0] != "b" {
		t.Fatalf("rows out of order: %+v", table.Rows)
	}
	for _, r := range table.Rows {
		if r.Object.Raw != nil || r.Object.Object != nil || r.Conditions != nil {
			t.Errorf("row %v: Object and Conditions should be left zero", r.Cells)
		}
	}
	name := table.ColumnDefinitions[0]
	if name.Name != "Name" || name.Type != "string" || name.Format != "name" || name.Priority != 0 ||
		!strings.HasPrefix(name.Description, "Name must be unique within a namespace.") {
		t.Errorf("NAME column = %+v", name)
	}
	if age := table.ColumnDefinitions[2]; !strings.HasPrefix(age.Description, "CreationTimestamp is a timestamp") {
		t.Errorf("AGE column = %+v", age)
	}

	// noHeaders drops the column definitions, not the cells.
	table, err = Table(core("namespaces"), objs, now, true)
	if err != nil {
		t.Fatal(err)
	}
	if table.ColumnDefinitions != nil || len(table.Rows) != 2 || len(table.Rows[0].Cells) != 3 {
		t.Errorf("noHeaders table = %+v", table)
	}

	// The column definitions do not alias the printer's.
	table, _ = Table(core("namespaces"), objs, now, false)
	table.ColumnDefinitions[0].Name = "changed"
	if table, _ = Table(core("namespaces"), objs, now, false); table.ColumnDefinitions[0].Name != "Name" {
		t.Error("column definitions are shared between tables")
	}
}

func TestEmptyList(t *testing.T) {
	table, err := Table(podsGR, nil, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if table.Rows == nil || len(table.Rows) != 0 {
		t.Errorf("Rows = %#v, want empty, not nil", table.Rows)
	}
	if len(table.ColumnDefinitions) != len(podColumns) {
		t.Errorf("empty pod list has %d columns, want the pod columns", len(table.ColumnDefinitions))
	}
	b, _ := json.Marshal(table)
	if !strings.Contains(string(b), `"rows":[]`) {
		t.Errorf("empty table encodes as %s", b)
	}
}

func TestDefaultPrinter(t *testing.T) {
	tests := []struct {
		name string
		gr   schema.GroupResource
		obj  runtime.Object
	}{
		{"resource without a printer", core("persistentvolumeclaims"), &corev1.PersistentVolumeClaim{ObjectMeta: objMeta("tmpl")}},
		{"metadata only", podsGR, &metav1.PartialObjectMetadata{ObjectMeta: objMeta("tmpl")}},
		{"custom resource", schema.GroupResource{Group: "example.com", Resource: "widgets"}, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]interface{}{"name": "tmpl", "creationTimestamp": "2025-06-01T09:30:00Z"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkColumns(t, tt.gr, tt.obj, []column{{"Name", "string", 0}, {"Age", "string", 0}})
			want := "60m"
			if _, ok := tt.obj.(*unstructured.Unstructured); ok {
				want = "150m"
			}
			checkCells(t, row(t, tt.gr, tt.obj), []interface{}{"tmpl", want})
		})
	}
	table, err := Table(schema.GroupResource{Group: "example.com", Resource: "widgets"}, nil, now, true)
	if err != nil || table.ColumnDefinitions != nil || len(table.Rows) != 0 {
		t.Errorf("empty unknown resource: %+v, %v", table, err)
	}
}

func TestUnstructuredIsConverted(t *testing.T) {
	p := pod(corev1.PodRunning, "app")
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running(), RestartCount: 1, LastTerminationState: lastTerminated(time.Minute)}}
	p.Spec.NodeName = "n1"
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	checkCells(t, row(t, podsGR, u), row(t, podsGR, p))

	// Without apiVersion/kind the resource decides.
	delete(u.Object, "apiVersion")
	delete(u.Object, "kind")
	checkCells(t, row(t, podsGR, u), row(t, podsGR, p))

	// The object's kind wins over the resource it is served for.
	scale := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "autoscaling/v1", "kind": "Scale",
		"metadata": map[string]interface{}{"name": "web"},
		"spec":     map[string]interface{}{"replicas": int64(4)},
		"status":   map[string]interface{}{"replicas": int64(4), "selector": "app=web"},
	}}
	checkCells(t, row(t, apps("deployments"), scale), []interface{}{"web", int64(4), int64(4), "<unknown>"})

	// Content that does not fit the type is an error.
	bad := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]interface{}{"name": "x"}, "spec": "not an object",
	}}
	if _, err := Table(podsGR, []runtime.Object{bad}, now, false); err == nil {
		t.Error("no error for an unconvertible unstructured pod")
	}
}

func TestTypeDecidesOverResource(t *testing.T) {
	// A Scale served for a deployment, a pod listed under the wrong resource.
	checkColumns(t, apps("deployments"), &autoscalingv1.Scale{}, []column{{"Name", "string", 0}, {"Desired", "integer", 0}, {"Available", "integer", 0}, {"Age", "string", 0}})
	checkColumns(t, core("things"), &corev1.Pod{}, []column{
		{"Name", "string", 0}, {"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0}, {"Age", "string", 0},
		{"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1}, {"Readiness Gates", "string", 1},
	})
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		gr   schema.GroupResource
		objs []runtime.Object
	}{
		{"mixed types", podsGR, []runtime.Object{&corev1.Pod{}, &corev1.Node{}}},
		{"nil object", podsGR, []runtime.Object{&corev1.Pod{}, nil}},
		{"typed nil", podsGR, []runtime.Object{(*corev1.Pod)(nil)}},
		{"no metadata", core("statuses"), []runtime.Object{&metav1.Status{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Table(tt.gr, tt.objs, now, false); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestEveryPrinterFitsItsColumns renders a zero object of every registered
// type and checks that its cells fit the columns, with cell types a Table
// allows and that agree with the column types.
func TestEveryPrinterFitsItsColumns(t *testing.T) {
	for typ, p := range byType {
		obj := p.newObj()
		table, err := Table(schema.GroupResource{}, []runtime.Object{obj}, now, false)
		if err != nil {
			t.Errorf("%v: %v", typ, err)
			continue
		}
		for i, cell := range table.Rows[0].Cells {
			col := table.ColumnDefinitions[i]
			switch cell.(type) {
			case string:
				if col.Type == "integer" {
					t.Errorf("%v column %q: string cell in an integer column", typ, col.Name)
				}
			case int64:
				if col.Type != "integer" && col.Type != "string" {
					t.Errorf("%v column %q: int64 cell in a %s column", typ, col.Name, col.Type)
				}
			case bool:
				if col.Type != "boolean" {
					t.Errorf("%v column %q: bool cell in a %s column", typ, col.Name, col.Type)
				}
			default:
				t.Errorf("%v column %q: cell of type %T", typ, col.Name, cell)
			}
		}
	}
	for gr, p := range byResource {
		if gr.Resource == "" || strings.ToLower(gr.Resource) != gr.Resource {
			t.Errorf("bad resource %v", gr)
		}
		if p.columns[0].Name != "Name" && p.columns[0].Name != "Last Seen" {
			t.Errorf("%v: first column %q", gr, p.columns[0].Name)
		}
	}
}

// TestJSONRoundTrip encodes tables with encoding/json and decodes them into
// meta/v1 Table, both with encoding/json and with apimachinery's
// scheme-based decoder, which is what clients use.
func TestJSONRoundTrip(t *testing.T) {
	p := pod(corev1.PodRunning, "app")
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("CrashLoopBackOff"), RestartCount: 5, LastTerminationState: lastTerminated(5 * time.Minute)}}
	inputs := []struct {
		gr   schema.GroupResource
		objs []runtime.Object
	}{
		{podsGR, []runtime.Object{p, pod(corev1.PodPending, "x")}},
		{apps("replicasets"), []runtime.Object{&appsv1.ReplicaSet{ObjectMeta: objMeta("rs"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)), Template: template(web)}}}},
		{schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, []runtime.Object{&schedulingv1.PriorityClass{ObjectMeta: objMeta("pc"), Value: 1000, GlobalDefault: true}}},
	}

	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()

	for _, in := range inputs {
		table, err := Table(in.gr, in.objs, now, false)
		if err != nil {
			t.Fatal(err)
		}
		table.ResourceVersion = "42" // as the handler would
		data, err := json.Marshal(table)
		if err != nil {
			t.Fatalf("%v: marshal: %v", in.gr, err)
		}

		// encoding/json: numbers come back as float64.
		var plain metav1.Table
		if err := json.Unmarshal(data, &plain); err != nil {
			t.Fatalf("%v: unmarshal: %v", in.gr, err)
		}
		if !reflect.DeepEqual(plain.ColumnDefinitions, table.ColumnDefinitions) {
			t.Errorf("%v: columns changed:\n got %+v\nwant %+v", in.gr, plain.ColumnDefinitions, table.ColumnDefinitions)
		}
		if plain.Kind != "Table" || plain.APIVersion != "meta.k8s.io/v1" || plain.ResourceVersion != "42" || len(plain.Rows) != len(table.Rows) {
			t.Fatalf("%v: decoded %+v", in.gr, plain)
		}
		for i := range table.Rows {
			for j, cell := range table.Rows[i].Cells {
				want := cell
				if n, ok := cell.(int64); ok {
					want = float64(n)
				}
				if got := plain.Rows[i].Cells[j]; got != want {
					t.Errorf("%v row %d cell %d: got %#v, want %#v", in.gr, i, j, got, want)
				}
			}
		}

		// The scheme decoder keeps integers as int64: an exact round trip.
		obj, gvk, err := decoder.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("%v: decode: %v", in.gr, err)
		}
		decoded, ok := obj.(*metav1.Table)
		if !ok || gvk.Group != "meta.k8s.io" || gvk.Version != "v1" || gvk.Kind != "Table" {
			t.Fatalf("%v: decoded %T as %v", in.gr, obj, gvk)
		}
		for i := range table.Rows {
			checkCells(t, decoded.Rows[i].Cells, table.Rows[i].Cells)
		}
		if !reflect.DeepEqual(decoded.ColumnDefinitions, table.ColumnDefinitions) {
			t.Errorf("%v: scheme-decoded columns differ", in.gr)
		}
	}
}
