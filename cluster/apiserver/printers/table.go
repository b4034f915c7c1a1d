package printers

import (
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Table renders objs (all of one resource) as a meta.k8s.io/v1 Table. now is
// injected for AGE and the other "time since" cells.
//
// The handler fills Table.ResourceVersion/Continue and each row's Object per
// the request's includeObject; Table leaves row Objects and Conditions zero.
// With noHeaders the column definitions are omitted, as upstream does for
// TableOptions.NoHeaders.
//
// The printer is chosen by gr, unless the objects are of another kind (for
// example an autoscaling/v1 Scale served for apps/deployments), in which case
// it is chosen by the objects' type. Objects of a resource without a printer
// get NAME and AGE. An error is returned for objects of mixed types or
// objects without metadata.
func Table(gr schema.GroupResource, objs []runtime.Object, now time.Time, noHeaders bool) (*metav1.Table, error) {
	p := choosePrinter(gr, objs)

	table := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		Rows:     make([]metav1.TableRow, 0, len(objs)),
	}
	if !noHeaders {
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition(nil), p.columns...)
	}
	for i, obj := range objs {
		in, err := p.accept(obj)
		if err != nil {
			return nil, fmt.Errorf("printers: %s: object %d: %w", gr, i, err)
		}
		cells, err := p.cells(in, now)
		if err != nil {
			return nil, fmt.Errorf("printers: %s: object %d: %w", gr, i, err)
		}
		if len(cells) != len(p.columns) {
			// A bug in a printer, not in the request.
			return nil, fmt.Errorf("printers: %s: object %d: %d cells for %d columns", gr, i, len(cells), len(p.columns))
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells})
	}
	return table, nil
}

// printer renders one kind of object.
type printer struct {
	columns []metav1.TableColumnDefinition
	// typ is the Go type cells takes; nil for printers that take any object
	// with metadata.
	typ reflect.Type
	// newObj returns a zero object of typ, for converting unstructured input.
	newObj func() runtime.Object
	cells  func(obj runtime.Object, now time.Time) ([]interface{}, error)
}

// typed builds a printer for the object type *T.
func typed[T any, PT interface {
	*T
	runtime.Object
}](columns []metav1.TableColumnDefinition, cells func(obj PT, now time.Time) []interface{}) *printer {
	return &printer{
		columns: columns,
		typ:     reflect.TypeOf(PT(nil)),
		newObj:  func() runtime.Object { return PT(new(T)) },
		cells: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			return cells(obj.(PT), now), nil
		},
	}
}

// accept returns obj in the form p.cells takes.
func (p *printer) accept(obj runtime.Object) (runtime.Object, error) {
	if v := reflect.ValueOf(obj); obj == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("nil object")
	}
	if p.typ == nil || reflect.TypeOf(obj) == p.typ {
		return obj, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := p.newObj()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
			return nil, fmt.Errorf("converting %s to %T: %w", u.GroupVersionKind().Kind, out, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("got %T, want %v", obj, p.typ)
}

// choosePrinter picks the printer for objs of resource gr.
func choosePrinter(gr schema.GroupResource, objs []runtime.Object) *printer {
	p := byResource[gr]
	if len(objs) == 0 || objs[0] == nil {
		if p == nil {
			return defaultPrinter
		}
		return p
	}
	first := objs[0]
	if u, ok := first.(*unstructured.Unstructured); ok {
		// Trust the object's own kind over the resource it was served for.
		if q, ok := byKind[u.GroupVersionKind().GroupKind()]; ok {
			return q
		}
		if p != nil {
			return p
		}
		return defaultPrinter
	}
	if p != nil && (p.typ == nil || reflect.TypeOf(first) == p.typ) {
		return p
	}
	if q, ok := byType[reflect.TypeOf(first)]; ok {
		return q
	}
	return defaultPrinter
}

var (
	// byResource maps a resource to its printer.
	byResource = map[schema.GroupResource]*printer{}
	// byType maps an object's Go type to its printer.
	byType = map[reflect.Type]*printer{}
	// byKind maps an object's group and kind to its printer, for
	// unstructured input.
	byKind = map[schema.GroupKind]*printer{}
)

// register makes p the printer for the kind gk and the given resources of
// gk's group.
func register(gk schema.GroupKind, p *printer, resources ...string) {
	for _, r := range resources {
		byResource[schema.GroupResource{Group: gk.Group, Resource: r}] = p
	}
	byKind[gk] = p
	if p.typ != nil {
		byType[p.typ] = p
	}
}

var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// nameColumn is the first column of almost every printer.
var nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}

// ageColumn is the AGE column of almost every printer.
var ageColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}

// defaultPrinter prints NAME and AGE for any object with metadata.
var defaultPrinter = &printer{
	columns: []metav1.TableColumnDefinition{nameColumn, ageColumn},
	cells: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%T has no object metadata", obj)
		}
		return []interface{}{m.GetName(), since(now, m.GetCreationTimestamp())}, nil
	},
}

// createdAtPrinter is upstream's default table convertor
// (k8s.io/apiserver/pkg/registry/rest.NewDefaultTableConvertor), which it
// uses for the few built-in resources without a printer.
var createdAtPrinter = &printer{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	},
	cells: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%T has no object metadata", obj)
		}
		return []interface{}{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
	},
}

// since is the human-readable time from t to now, "<unknown>" for a zero t.
func since(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// sinceMicro is since for a MicroTime.
func sinceMicro(now time.Time, t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
