package printers

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// now is the fixed "current time" of every test.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// ago is the metav1.Time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// agoPtr is a pointer to ago(d).
func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

// objMeta is the ObjectMeta of an object named name, created an hour ago.
func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(time.Hour)}
}

func ptr[T any](v T) *T { return &v }

// row renders obj as the only object of gr and returns its cells.
func row(t *testing.T, gr schema.GroupResource, obj runtime.Object) []interface{} {
	t.Helper()
	table, err := Table(gr, []runtime.Object{obj}, now, false)
	if err != nil {
		t.Fatalf("Table: %v", err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	if len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
		t.Fatalf("got %d cells for %d columns", len(table.Rows[0].Cells), len(table.ColumnDefinitions))
	}
	return table.Rows[0].Cells
}

// checkCells compares cells, including their Go types.
func checkCells(t *testing.T, got, want []interface{}) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells:\n got %#v\nwant %#v", got, want)
	}
}

// column is a column's name and priority, the part kubectl shows.
type column struct {
	Name     string
	Type     string
	Priority int32
}

// checkColumns compares the names, types and priorities of the columns of
// gr's table for obj, and checks that NAME (when present) is a "name" column.
func checkColumns(t *testing.T, gr schema.GroupResource, obj runtime.Object, want []column) {
	t.Helper()
	table, err := Table(gr, []runtime.Object{obj}, now, false)
	if err != nil {
		t.Fatalf("Table: %v", err)
	}
	var got []column
	for _, c := range table.ColumnDefinitions {
		got = append(got, column{c.Name, c.Type, c.Priority})
		if c.Description == "" {
			t.Errorf("column %q has no description", c.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns:\n got %+v\nwant %+v", got, want)
	}
}
