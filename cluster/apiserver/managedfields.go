package apiserver

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kstep-dev/kstep/cluster/apiserver/openapi"
)

// Managed fields and server-side apply are apimachinery's field manager on
// structured-merge-diff, as upstream's apiserver uses them. The types'
// schemas, with upstream's list-map keys (containers by name, ports by
// containerPort and protocol, ...), are client-go's built-in ones: the
// schemas upstream generates its apply configurations from.

// fieldManagers holds one field manager per served kind and tracked
// subresource, built when the server starts and read without a lock.
type fieldManagers map[fieldManagerKey]*managedfields.FieldManager

type fieldManagerKey struct {
	gvk schema.GroupVersionKind
	sub string
}

// trackedSubresource says whether writes through sub record managed
// fields: the main resource, status and scale do, as upstream; the
// scheduler's binding and the namespace finalizer's write do not.
func trackedSubresource(sub string) bool {
	return sub == "" || sub == "status" || sub == "scale"
}

// newFieldManagers builds the field managers of rs: a kind the schemas do
// not know has none, and its writes carry no managed fields.
func newFieldManagers(rs []*resource) fieldManagers {
	f := fieldManagers{}
	for _, r := range rs {
		subs := []string{""}
		if r.status {
			subs = append(subs, "status")
		}
		if r.scale {
			subs = append(subs, "scale")
		}
		for _, sub := range subs {
			if fm := newFieldManager(r, sub); fm != nil {
				f[fieldManagerKey{r.gvk(), sub}] = fm
			}
		}
	}
	return f
}

func newFieldManager(r *resource, sub string) *managedfields.FieldManager {
	gvk := r.gvk()
	v := fieldpath.APIVersion(gvk.GroupVersion().String())
	var reset map[fieldpath.APIVersion]*fieldpath.Set
	if fields := resetFields(r, sub); fields != nil {
		set := fieldpath.NewSet()
		for _, f := range fields {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		reset = map[fieldpath.APIVersion]*fieldpath.Set{v: set}
	}
	var filters map[fieldpath.APIVersion]fieldpath.Filter
	if reset != nil {
		filters = fieldpath.NewExcludeFilterSetMap(reset)
	}
	fm, err := managedfields.NewDefaultFieldManager(updateTypeConverter(), fieldManagerConverter, scheme.Scheme, scheme.Scheme,
		gvk, gvk.GroupVersion(), sub, filters)
	if err != nil {
		return nil
	}
	return fm
}

// resetFields are the top-level fields of r's objects that writes through
// sub never own, whatever they send (upstream's reset fields): the main
// resource's writes do not own the status (it is reset to the stored one),
// and a status write owns neither the spec nor the metadata.
func resetFields(r *resource, sub string) []string {
	switch {
	case sub == "" && r.status:
		return []string{"status"}
	case sub == "status":
		return []string{"spec", "metadata"}
	}
	return nil
}

// updateTypeConverter is the field managers' view of the types: client-go's
// (openapi.TypeConverter) except that the objects an update compares,
// the stored one and the one about to be stored, are not validated against
// their schema again. Both are typed Go objects that the write chain has
// validated; the field manager asks for them with typed.AllowDuplicates,
// and structured-merge-diff's validating walk then only re-derived what the
// comparison derives anyway (it fails on the same missing list-map keys),
// at 40 % of the field manager's time: a fifth of an apiserver's CPU under
// load. What an apply sends (an unstructured partial object, asked for
// without AllowDuplicates) is validated as before.
var updateTypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return &unvalidatedUpdates{TypeConverter: openapi.TypeConverter()}
})

type unvalidatedUpdates struct {
	managedfields.TypeConverter
	// types: GroupVersionKind → typeOf, learnt from an empty object of the
	// kind when the first object of the kind is converted, not by
	// validating that object, which may be as large as a client can send
	// (a ConfigMap of 110,000 keys: 0.03 s more for the first writer).
	// The objects converted after it were never validated either.
	types sync.Map
}

type typeOf struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

func (c *unvalidatedUpdates) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	if _, ok := obj.(*unstructured.Unstructured); ok || !slices.Contains(opts, typed.AllowDuplicates) {
		return c.TypeConverter.ObjectToTyped(obj, opts...)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if t, ok := c.types.Load(gvk); ok {
		v, err := value.NewValueReflect(obj)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", gvk, err)
		}
		return typed.AsTypedUnvalidated(sortedValue{v}, t.(typeOf).schema, t.(typeOf).ref), nil
	}
	if empty, ok := emptyOf(obj); ok {
		if tv, err := c.TypeConverter.ObjectToTyped(empty, opts...); err == nil {
			c.types.Store(gvk, typeOf{schema: tv.Schema(), ref: tv.TypeRef()})
			return c.ObjectToTyped(obj, opts...)
		}
	}
	tv, err := c.TypeConverter.ObjectToTyped(obj, opts...)
	if err != nil {
		return nil, err
	}
	c.types.Store(gvk, typeOf{schema: tv.Schema(), ref: tv.TypeRef()})
	return typed.AsTypedUnvalidated(sortedValue{tv.AsValue()}, tv.Schema(), tv.TypeRef()), nil
}

// emptyOf is a zero object of obj's Go type, of obj's apiVersion and kind
// (false: obj is not a pointer to a struct).
func emptyOf(obj runtime.Object) (runtime.Object, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	empty, ok := reflect.New(v.Elem().Type()).Interface().(runtime.Object)
	if ok {
		empty.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	}
	return empty, ok
}

// sortedValue is a value whose large maps (more than sortedMapMin
// entries: a ConfigMap's data, a Secret's) are walked in key order. What
// the field manager compares, structured-merge-diff walks map by map in the
// order the map gives, and inserts each added, changed or removed field
// into a fieldpath.Set: a sorted slice, so each insert in Go's random map
// order moved half the set. A create of a ConfigMap of 110,000 keys moved
// 10^11 bytes (5 s of CPU, 85 % memmove); in key order each insert is an
// append, and the walk costs a sort (n log n). Structs are walked in their
// own field order as before, and small maps as Go gives them: their
// inserts move little. Everything a walk hands out is wrapped again, so a
// large map anywhere below (a pod's annotations) is ordered too; what a
// method is handed back (the other map of a zip, a value to compare) is
// unwrapped, since structured-merge-diff's fast paths type-assert their
// own types.
type sortedValue struct{ value.Value }

// sortedMapMin is the size from which a map is walked in key order.
const sortedMapMin = 64

// sorted wraps v if it is a map or a list (a scalar has nothing to walk,
// and is handed out as it is: no allocation).
func sorted(v value.Value) value.Value {
	if v == nil || !v.IsMap() && !v.IsList() {
		return v
	}
	return sortedValue{v}
}

func unsortedValue(v value.Value) value.Value {
	if s, ok := v.(sortedValue); ok {
		return s.Value
	}
	return v
}

func unsortedMap(m value.Map) value.Map {
	if s, ok := m.(sortedMap); ok {
		return s.Map
	}
	return m
}

func unsortedList(l value.List) value.List {
	if s, ok := l.(sortedList); ok {
		return s.List
	}
	return l
}

func (v sortedValue) AsMap() value.Map                       { return sortedMap{v.Value.AsMap()} }
func (v sortedValue) AsMapUsing(a value.Allocator) value.Map { return sortedMap{v.Value.AsMapUsing(a)} }
func (v sortedValue) AsList() value.List                     { return sortedList{v.Value.AsList()} }
func (v sortedValue) AsListUsing(a value.Allocator) value.List {
	return sortedList{v.Value.AsListUsing(a)}
}

type sortedMap struct{ value.Map }

func (m sortedMap) Set(key string, v value.Value) { m.Map.Set(key, unsortedValue(v)) }

func (m sortedMap) Get(key string) (value.Value, bool) {
	v, ok := m.Map.Get(key)
	return sorted(v), ok
}

func (m sortedMap) GetUsing(a value.Allocator, key string) (value.Value, bool) {
	v, ok := m.Map.GetUsing(a, key)
	return sorted(v), ok
}

func (m sortedMap) Equals(o value.Map) bool { return m.Map.Equals(unsortedMap(o)) }

func (m sortedMap) EqualsUsing(a value.Allocator, o value.Map) bool {
	return m.Map.EqualsUsing(a, unsortedMap(o))
}

func (m sortedMap) Iterate(fn func(string, value.Value) bool) bool {
	return m.IterateUsing(value.HeapAllocator, fn)
}

func (m sortedMap) IterateUsing(a value.Allocator, fn func(string, value.Value) bool) bool {
	if m.Map.Length() <= sortedMapMin {
		return m.Map.IterateUsing(a, func(k string, v value.Value) bool { return fn(k, sorted(v)) })
	}
	keys := make([]string, 0, m.Map.Length())
	m.Map.IterateUsing(a, func(k string, _ value.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := m.Map.GetUsing(a, k)
		if !ok {
			continue
		}
		goOn := fn(k, sorted(v))
		a.Free(v)
		if !goOn {
			return false
		}
	}
	return true
}

func (m sortedMap) Zip(o value.Map, order value.MapTraverseOrder, fn func(string, value.Value, value.Value) bool) bool {
	return m.ZipUsing(value.HeapAllocator, o, order, fn)
}

func (m sortedMap) ZipUsing(a value.Allocator, o value.Map, order value.MapTraverseOrder, fn func(string, value.Value, value.Value) bool) bool {
	o = unsortedMap(o)
	if m.Map.Length() > sortedMapMin || (o != nil && o.Length() > sortedMapMin) {
		if l, ok := stringEntries(a, m.Map); ok {
			if r, ok := stringEntries(a, o); ok {
				return zipStrings(l, r, fn)
			}
		}
		order = value.LexicalKeyOrder // a struct zipped with its own type keeps its field order
	}
	return m.Map.ZipUsing(a, o, order, func(k string, l, r value.Value) bool { return fn(k, sorted(l), sorted(r)) })
}

// stringEntry is one entry of a map of strings.
type stringEntry struct{ key, val string }

// stringEntries are m's entries in key order (nil m: none), if every value
// is a string (false: m is not a map of strings, a ConfigMap's data or an
// object's labels). Structured-merge-diff's zip in key order (what a
// sortedMap asked for before) collects the keys of both maps, sorts them,
// and then looks every key up in both maps again: for a ConfigMap of
// 110,000 keys, 110,000 lookups in a map far larger than the caches, and a
// copy of each value, a third of the field manager's time. The values of a
// map of strings are read as the map is walked, and sorted with their keys.
func stringEntries(a value.Allocator, m value.Map) ([]stringEntry, bool) {
	if m == nil || m.Length() == 0 {
		return nil, true
	}
	out := make([]stringEntry, 0, m.Length())
	ok := m.IterateUsing(a, func(k string, v value.Value) bool {
		if v == nil || !v.IsString() {
			return false
		}
		out = append(out, stringEntry{k, v.AsString()})
		return true
	})
	if !ok {
		return nil, false
	}
	slices.SortFunc(out, func(x, y stringEntry) int { return strings.Compare(x.key, y.key) })
	return out, true
}

// zipStrings is value.MapZipUsing in value.LexicalKeyOrder of two maps of
// strings, their entries l and r in key order: fn sees each key of either
// in key order, with its value on each side (nil: not in that map).
func zipStrings(l, r []stringEntry, fn func(string, value.Value, value.Value) bool) bool {
	for i, j := 0, 0; i < len(l) || j < len(r); {
		var key string
		var lv, rv value.Value
		switch {
		case j == len(r) || i < len(l) && l[i].key < r[j].key:
			key, lv = l[i].key, value.NewValueInterface(l[i].val)
			i++
		case i == len(l) || r[j].key < l[i].key:
			key, rv = r[j].key, value.NewValueInterface(r[j].val)
			j++
		default:
			key, lv, rv = l[i].key, value.NewValueInterface(l[i].val), value.NewValueInterface(r[j].val)
			i, j = i+1, j+1
		}
		if !fn(key, lv, rv) {
			return false
		}
	}
	return true
}

type sortedList struct{ value.List }

func (l sortedList) At(i int) value.Value { return sorted(l.List.At(i)) }
func (l sortedList) AtUsing(a value.Allocator, i int) value.Value {
	return sorted(l.List.AtUsing(a, i))
}
func (l sortedList) Range() value.ListRange { return sortedRange{l.List.Range()} }
func (l sortedList) RangeUsing(a value.Allocator) value.ListRange {
	return sortedRange{l.List.RangeUsing(a)}
}
func (l sortedList) Equals(o value.List) bool { return l.List.Equals(unsortedList(o)) }
func (l sortedList) EqualsUsing(a value.Allocator, o value.List) bool {
	return l.List.EqualsUsing(a, unsortedList(o))
}

type sortedRange struct{ value.ListRange }

func (r sortedRange) Item() (int, value.Value) {
	i, v := r.ListRange.Item()
	return i, sorted(v)
}

// fieldManagerConverter is the field managers' object converter:
// scheme.Scheme's, except that a typed object already of the version asked
// for is not deep-copied. The field manager converts the live object and
// the one about to be stored to the kind's own version for every tracked
// write, and only reads what it converted (its typed view, the
// comparison); kstep serves one version of each kind, so that conversion
// was always a deep copy, two per write: 3 % of an apiserver's CPU at
// saturation, before the garbage collector's share. What it gets instead
// is a shallow copy that carries the version's apiVersion and kind (the
// typed view must name its version, or structured-merge-diff converts it
// back and forth): the original is not written to, since the live object
// is the watch cache's, which readers share. An unstructured object (an
// apply's) or one of another version is converted by the scheme as before.
var fieldManagerConverter runtime.ObjectConvertor = sameVersionConverter{scheme.Scheme}

type sameVersionConverter struct{ *runtime.Scheme }

func (c sameVersionConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	if _, ok := in.(runtime.Unstructured); !ok {
		if gvk, ok := typedKind(c.Scheme, in); ok {
			if want, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk}); ok && want == gvk {
				if out, ok := shallowCopy(in); ok {
					out.GetObjectKind().SetGroupVersionKind(gvk)
					return out, nil
				}
			}
		}
	}
	return c.Scheme.ConvertToVersion(in, target)
}

// typedKind is the one kind s registers obj's Go type as (false: none, or
// several).
func typedKind(s *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, bool) {
	gvks, unversioned, err := s.ObjectKinds(obj)
	if err != nil || unversioned || len(gvks) != 1 {
		return schema.GroupVersionKind{}, false
	}
	return gvks[0], true
}

// shallowCopy copies the struct obj points to, sharing what its fields
// point to (false: obj is not a pointer to a struct).
func shallowCopy(obj runtime.Object) (runtime.Object, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	out := reflect.New(v.Elem().Type())
	out.Elem().Set(v.Elem())
	o, ok := out.Interface().(runtime.Object)
	return o, ok
}

// get returns the field manager of r's kind for writes through sub (nil:
// none).
func (f fieldManagers) get(r *resource, sub string) *managedfields.FieldManager {
	return f[fieldManagerKey{r.gvk(), sub}]
}

// manager is the request's field manager: ?fieldManager=, else the client's
// User-Agent up to its first "/", printable characters only, at most 128
// (upstream's managerOrUserAgent).
func (q *request) manager() string {
	if m := q.r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	ua, _, _ := strings.Cut(q.r.UserAgent(), "/")
	ua = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, ua)
	if len(ua) > 128 {
		ua = ua[:128]
	}
	return ua
}

// The writes whose options name a field manager.
const (
	writeCreate = iota
	writeUpdate
	writePatch
	writeApply
)

// checkFieldManagerParams refuses what upstream's option validation
// refuses: an apply without a field manager, force on a patch that is not
// an apply, a manager name too long or not printable.
func (q *request) checkFieldManagerParams(write int) error {
	query := q.r.URL.Query()
	var errs field.ErrorList
	m := query.Get("fieldManager")
	if write == writeApply && m == "" {
		errs = append(errs, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	if len(m) > 128 {
		errs = append(errs, field.TooLong(field.NewPath("fieldManager"), "", 128))
	}
	for _, r := range m {
		if !unicode.IsPrint(r) {
			errs = append(errs, field.Invalid(field.NewPath("fieldManager"), m, "invalid characters"))
			break
		}
	}
	if f, ok := query["force"]; ok && (write == writePatch || write == writeApply) {
		if write == writePatch {
			errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
		}
		if len(f) > 0 && f[0] != "true" && f[0] != "false" {
			return badRequest("force must be true or false; got %q", f[0])
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	return nil
}

// trackUpdate records in obj's managed fields what this write changed
// against live (nil for a create), as the request's manager's. A write
// whose managed fields cannot be computed keeps live's, as upstream's
// UpdateNoErrors does.
func (q *request) trackUpdate(sr *resource, live, obj runtime.Object, sub string) runtime.Object {
	if !trackedSubresource(sub) {
		return obj
	}
	fm := q.s.fields.get(sr, sub)
	if fm == nil {
		return obj
	}
	if live == nil {
		live = sr.newObj()
	}
	return updateManagedFields(fm, live, obj, q.manager(), resetFields(sr, sub))
}

// updateManagedFields is fm.UpdateNoErrors(live, obj, manager), the same
// managed fields set on obj, without comparing the top-level fields the
// write never owns (reset, fm's filter): a status write's spec, a main
// write's status. What the field manager records of those is filtered out
// whatever they hold (neither this manager's fields nor another's change
// with them), so it is shown copies of both objects without them, and
// structured-merge-diff's comparison, the field manager's largest cost,
// walks a pod's or a ReplicaSet's status without its spec and pod
// template. The metadata stays: the field manager reads the managed
// fields and the uid there. The copies are shallow, made only when there
// is something to leave out (not for a create's empty status); live, the
// watch cache's object, is not written to.
func updateManagedFields(fm *managedfields.FieldManager, live, obj runtime.Object, manager string, reset []string) runtime.Object {
	l, n := live, obj
	for _, f := range reset {
		if f == "metadata" {
			continue
		}
		i, okL := topField(live, f)
		j, okN := topField(obj, f)
		if !okL || !okN {
			return fm.UpdateNoErrors(live, obj, manager)
		}
		if reflect.ValueOf(live).Elem().Field(i).IsZero() && reflect.ValueOf(obj).Elem().Field(j).IsZero() {
			continue // nothing to walk (a create's status): no copies
		}
		l, n = withoutField(l, i), withoutField(n, j)
	}
	if n == obj {
		return fm.UpdateNoErrors(live, obj, manager)
	}
	out := fm.UpdateNoErrors(l, n, manager)
	objectMeta(obj).ManagedFields = objectMeta(out).ManagedFields
	return obj
}

// topField is the index of obj's top-level field of JSON name jsonName
// (false: obj is not a pointer to a struct that has one).
func topField(obj runtime.Object, jsonName string) (int, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	t := v.Elem().Type()
	key := topFieldKey{t, jsonName}
	i, ok := topFields.Load(key)
	if !ok {
		i = -1
		for j := range t.NumField() {
			if name, _, _ := strings.Cut(t.Field(j).Tag.Get("json"), ","); name == jsonName {
				i = j
				break
			}
		}
		topFields.Store(key, i)
	}
	return i.(int), i.(int) >= 0
}

// topFields caches topField's answers: topFieldKey → the field's index, or
// -1.
var topFields sync.Map

type topFieldKey struct {
	t    reflect.Type
	json string
}

// withoutField is a shallow copy of obj with its top-level field i zeroed.
func withoutField(obj runtime.Object, i int) runtime.Object {
	out, _ := shallowCopy(obj)
	reflect.ValueOf(out).Elem().Field(i).SetZero()
	return out
}

// serverSideApply applies an apply patch (YAML or JSON, a partial object of
// the request's kind) to live (nil: the object does not exist, and the
// apply creates it) with the request's field manager; conflicts with
// other managers are a 409 naming them, unless ?force=true.
func (q *request) serverSideApply(sr *resource, live runtime.Object, data []byte) (runtime.Object, error) {
	fm := q.s.fields.get(sr, q.ri.Subresource)
	if fm == nil {
		return nil, unsupportedMediaType(applyPatchType)
	}
	patchObj := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(data, &patchObj.Object); err != nil {
		return nil, badRequest("error decoding YAML: %v", err)
	}
	if err := checkApplyKind(patchObj, q.res.gvk()); err != nil {
		return nil, err
	}
	if m := patchObj.GetName(); m != "" && q.ri.Name != "" && m != q.ri.Name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", m, q.ri.Name)
	}
	if ns := patchObj.GetNamespace(); ns != "" && q.ri.Namespace != "" && ns != q.ri.Namespace {
		return nil, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if live == nil {
		live = sr.newObj()
	}
	force := q.r.URL.Query().Get("force") == "true"
	out, err := fm.Apply(live, patchObj, q.manager(), force)
	if err != nil {
		if isStatus(err) {
			return nil, err // a conflict's 409, the field manager's 400s
		}
		// A patch the schema does not fit (a field not declared, a wrong
		// type): upstream's 400.
		return nil, badRequest("%s", excerpt(err.Error(), maxQuotedRun))
	}
	return out, nil
}

// checkApplyKind refuses an apply patch for another kind, as upstream.
func checkApplyKind(u *unstructured.Unstructured, gvk schema.GroupVersionKind) error {
	got := u.GroupVersionKind()
	if got.Kind == "" || got.Version == "" {
		return badRequest("apiVersion and kind are required in an apply patch")
	}
	if got != gvk {
		return badRequest("invalid object type: %s", got)
	}
	return nil
}

func isStatus(err error) bool {
	_, ok := err.(apierrors.APIStatus)
	return ok
}

// managedFieldsEqual compares two objects' managed fields, timestamps
// aside: a write that changes only when a manager last wrote is a no-op, as
// upstream's IgnoreManagedFieldsTimestampsTransformer makes it.
func managedFieldsEqual(a, b []metav1.ManagedFieldsEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Manager != y.Manager || x.Operation != y.Operation || x.APIVersion != y.APIVersion ||
			x.FieldsType != y.FieldsType || x.Subresource != y.Subresource {
			return false
		}
		if (x.FieldsV1 == nil) != (y.FieldsV1 == nil) || (x.FieldsV1 != nil && string(x.FieldsV1.Raw) != string(y.FieldsV1.Raw)) {
			return false
		}
	}
	return true
}
