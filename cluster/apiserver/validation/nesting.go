package validation

import (
	"encoding/json"
	"fmt"
	"reflect"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Nesting: an object is stored only if every client can read it back, in a
// list too. client-go's and kubectl's decoders (sigs.k8s.io/json,
// json-iterator, the YAML ones) refuse JSON nested more than 10,000 deep,
// and a list or a Table wraps each object in a few more levels: one object
// nested 9,995 deep would be accepted alone and break every list of its
// kind for every client. The served types' fields nest a few levels (a
// pod's deepest, its affinity terms' match expressions, about a dozen);
// the one field a client can nest at will is a managed fields entry's
// fieldsV1 (raw JSON the field manager keeps as it decodes it). A
// fieldsV1 describes fields of the object itself, so it nests at most a
// level deeper than the object (its leaves are {}): one nested deeper than
// the object plus fieldsV1Slack, and deeper than fieldsV1Floor (below it no
// entry is examined further, so ordinary writes never pay for encoding the
// object), is refused.
const (
	// fieldsV1Floor is the depth up to which a fieldsV1 is accepted
	// without measuring the object: more than any served type nests.
	fieldsV1Floor = 32
	// fieldsV1Slack is how much deeper than the object a fieldsV1 may
	// nest (one level is its leaves; the rest is room).
	fieldsV1Slack = 4
	// MaxObjectDepth is the deepest an object's JSON may nest: a list
	// (the List, its items) or a Table (rows, each row's object) wraps it
	// in up to four levels, a watch event in one, and the decoders stop at
	// 10,000; the rest is room.
	MaxObjectDepth = 10000 - 16
)

// validateNesting refuses an object whose managed fields nest deeper than
// the object could need (see fieldsV1Floor), or whose JSON nests deeper
// than MaxObjectDepth.
func validateNesting(obj runtime.Object) field.ErrorList {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil
	}
	mf := m.GetManagedFields()
	depths := make([]int, len(mf))
	deepest := 0
	for i, e := range mf {
		if e.FieldsV1 != nil {
			depths[i] = JSONDepth(e.FieldsV1.Raw)
			deepest = max(deepest, depths[i])
		}
	}
	if deepest <= fieldsV1Floor {
		return nil
	}
	own, err := depthWithoutManagedFields(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata", "managedFields"), err)}
	}
	var errs field.ErrorList
	if own > MaxObjectDepth {
		errs = append(errs, field.Invalid(field.NewPath(""), fmt.Sprintf("nested %d deep", own),
			fmt.Sprintf("must not nest more than %d deep", MaxObjectDepth)))
	}
	limit := max(fieldsV1Floor, own+fieldsV1Slack)
	for i, d := range depths {
		if d > limit {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "managedFields").Index(i).Child("fieldsV1"),
				fmt.Sprintf("nested %d deep", d),
				fmt.Sprintf("must not nest deeper than the object itself (%d levels) could need: at most %d", own, limit)))
		}
	}
	return errs
}

// depthWithoutManagedFields is the JSON depth of obj without its managed
// fields, measured on a shallow copy (obj is not changed).
func depthWithoutManagedFields(obj runtime.Object) (int, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	m, err := apimeta.Accessor(c.Interface())
	if err != nil {
		return 0, err
	}
	m.SetManagedFields(nil)
	b, err := json.Marshal(c.Interface())
	if err != nil {
		return 0, err
	}
	return JSONDepth(b), nil
}

// JSONDepth is how deeply the JSON text b nests objects and arrays: 0 for
// a scalar, 1 for {} or [], 2 for {"a":{}}. b is not validated: brackets
// inside strings do not count, and an unbalanced text counts what it
// opens.
func JSONDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
