package apiserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/apiserver/patch"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// jsonDepth is how deeply the JSON of a value of type t can nest objects
// and arrays; 1000 for a recursive type.
func jsonDepth(t reflect.Type, seen map[reflect.Type]bool) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		switch t {
		case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime](), reflect.TypeFor[apiresource.Quantity](), reflect.TypeFor[intstr.IntOrString]():
			return 0 // scalars in JSON
		case reflect.TypeFor[metav1.FieldsV1]():
			// managedFields' fieldsV1 mirrors the object's own fields
			// ("f:spec":{"f:template":...}): counted where it is used.
			return 0
		}
		if seen[t] {
			return 1000
		}
		seen[t] = true
		defer delete(seen, t)
		deepest := 0
		for i := range t.NumField() {
			f := t.Field(i)
			if f.PkgPath != "" || f.Tag.Get("json") == "-" {
				continue
			}
			d := jsonDepth(f.Type, seen)
			if tag := f.Tag.Get("json"); f.Anonymous && tag == "" || strings.Contains(tag, ",inline") {
				d-- // embedded: its fields are this object's
			}
			deepest = max(deepest, d)
		}
		return 1 + deepest
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return 0 // base64
		}
		return 1 + jsonDepth(t.Elem(), seen)
	case reflect.Map:
		return 1 + jsonDepth(t.Elem(), seen)
	}
	return 0
}

// The nesting limit on patches leaves room for every patch of every served
// kind, managedFields included: a patch as deep as the deepest object, with
// its managedFields (the object's fields again, four levels down), and a
// JSON patch's two levels of array and operation, stays below it.
func TestPatchDepthCoversServedKinds(t *testing.T) {
	deepest, kind := 0, ""
	for _, r := range resources() {
		if d := jsonDepth(reflect.TypeOf(r.newObj()), map[reflect.Type]bool{}); d > deepest {
			deepest, kind = d, r.kind
		}
	}
	// metadata.managedFields[i].fieldsV1 holds {"f:spec":{...}}: the
	// object's depth below four levels.
	withManagedFields := 4 + deepest
	if need := withManagedFields + 2; need > patch.MaxDepth {
		t.Fatalf("the deepest served kind, %s, nests %d levels; with managedFields and a JSON patch's framing a patch needs %d, over patch.MaxDepth %d", kind, deepest, need, patch.MaxDepth)
	}
	t.Logf("deepest served kind: %s, %d levels; patches need at most %d of %d", kind, deepest, withManagedFields+2, patch.MaxDepth)
}
