package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`[]`, 1},
		{`{"a":{"b":[1,{}]}}`, 4},
		{`{"a":"{{{[[["}`, 1},
		{`{"a\"{":"\\"}`, 1},
		{`[{},{},[[]]]`, 3},
		{strings.Repeat(`{"f:a":`, 9993) + "{}" + strings.Repeat("}", 9993), 9994},
	} {
		if got := JSONDepth([]byte(tc.in)); got != tc.want {
			t.Errorf("JSONDepth(%.40s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// Managed fields nested deeper than the object could need are refused, on
// the entry that nests; ordinary ones, and any up to fieldsV1Floor, pass.
func TestValidateNesting(t *testing.T) {
	cm := func(depths ...int) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "1"}, Data: map[string]string{"a": "b"}}
		for _, d := range depths {
			raw := strings.Repeat(`{"f:a":`, d-1) + "{}" + strings.Repeat("}", d-1)
			c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}})
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		obj    *corev1.ConfigMap
		fields []string
	}{
		{"ordinary", cm(3), nil},
		{"up to the floor", cm(fieldsV1Floor), nil},
		{"9,994 deep", cm(3, 9994), []string{"metadata.managedFields[1].fieldsV1"}},
		{"just past the floor", cm(fieldsV1Floor + 1), []string{"metadata.managedFields[0].fieldsV1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.obj.ManagedFields)
			errs := ValidateCreate(tc.obj)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("errors %v, want on %v", errs, tc.fields)
			}
			if len(tc.obj.ManagedFields) != before {
				t.Fatal("validation changed the object's managed fields")
			}
		})
	}
}
