package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jsonSchema is the format-neutral schema model. It is rendered either as a
// Swagger 2.0 schema (refs to #/definitions/) or as an OpenAPI 3.0 schema
// (refs to #/components/schemas/, allOf-wrapped when the ref has siblings,
// oneOf for int-or-string and quantities), see render.go.
type jsonSchema struct {
	Ref                  string // definition name, without the "#/..." prefix
	Description          string
	Type                 string
	Format               string
	Items                *jsonSchema
	Properties           []property // rendered only when non-empty, like upstream
	AdditionalProperties *jsonSchema
	Required             []string
	// OneOfTypes replaces Type in OpenAPI v3 (upstream's OpenAPIV3OneOfTypes).
	OneOfTypes  []string
	IntOrString bool // x-kubernetes-int-or-string: true
	Extensions  []extension
	GVKs        []schema.GroupVersionKind // x-kubernetes-group-version-kind (definitions only)
}

type property struct {
	Name   string
	Schema *jsonSchema
}

type extension struct {
	Name  string
	Value any
}

// Interfaces implemented by apimachinery types that know their own OpenAPI
// shape (metav1.Time, resource.Quantity, intstr.IntOrString, metav1.Duration...).
type openAPISchemaTyper interface{ OpenAPISchemaType() []string }
type openAPISchemaFormatter interface{ OpenAPISchemaFormat() string }
type openAPIV3OneOfTyper interface{ OpenAPIV3OneOfTypes() []string }
type swaggerDocer interface{ SwaggerDoc() map[string]string }

var (
	typeTime          = reflect.TypeOf(time.Time{})
	typeRawExtension  = reflect.TypeOf(runtime.RawExtension{})
	typeFieldsV1      = reflect.TypeOf(metav1.FieldsV1{})
	typeJSONMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	typeSchemaTyper   = reflect.TypeOf((*openAPISchemaTyper)(nil)).Elem()
)

// generator turns Go types into named definitions. It is not safe for
// concurrent use; New uses one generator for the whole build.
type generator struct {
	defs  map[string]*jsonSchema  // definition name -> schema
	names map[reflect.Type]string // type -> definition name (also marks in-progress)
	owner map[string]reflect.Type // definition name -> type, to detect collisions
	err   error
}

func newGenerator() *generator {
	return &generator{
		defs:  map[string]*jsonSchema{},
		names: map[reflect.Type]string{},
		owner: map[string]reflect.Type{},
	}
}

// definitionName returns the upstream-style definition name of a named type:
// the package path with its host reversed and slashes turned into dots, then
// the type name: k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod,
// github.com/foo/bar.Baz -> com.github.foo.bar.Baz.
func definitionName(t reflect.Type) string {
	name := sanitizeName(t.Name())
	pkg := t.PkgPath()
	if pkg == "" {
		return name
	}
	parts := strings.Split(pkg, "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	segs := append(host, parts[1:]...)
	for i := range segs {
		segs[i] = sanitizeName(segs[i])
	}
	return strings.Join(segs, ".") + "." + name
}

// sanitizeName keeps names usable inside a JSON pointer and a Go template
// lookup (generic instantiations carry brackets, commas and slashes).
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// refTo returns a schema referencing the definition of t, generating the
// definition on first use. t must be a named type.
func (g *generator) refTo(t reflect.Type) *jsonSchema {
	if name, ok := g.names[t]; ok {
		return &jsonSchema{Ref: name}
	}
	name := definitionName(t)
	if other, ok := g.owner[name]; ok && other != t {
		if g.err == nil {
			g.err = fmt.Errorf("openapi: types %v and %v both map to definition %q", other, t, name)
		}
		return &jsonSchema{Ref: name}
	}
	g.names[t] = name // mark before recursing: recursive types terminate here
	g.owner[name] = t
	def := &jsonSchema{}
	g.defs[name] = def // placeholder, filled below
	*def = *g.definitionBody(t)
	return &jsonSchema{Ref: name}
}

// definitionBody builds the schema of a named type's definition.
func (g *generator) definitionBody(t reflect.Type) *jsonSchema {
	if s := knownSchema(t); s != nil {
		s.Description = typeDescription(t)
		return s
	}
	s := g.structSchema(t)
	s.Description = typeDescription(t)
	s.Extensions = append(s.Extensions, typeSemantics(definitionName(t))...)
	return s
}

// isDefinition reports whether t gets its own named definition (and is
// referenced by $ref) instead of being inlined.
func isDefinition(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" {
		return false
	}
	if t == typeTime {
		return false
	}
	if implements(t, typeSchemaTyper) {
		return true
	}
	return t.Kind() == reflect.Struct
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// instance returns a value of t (or *t) usable for calling methods that may
// have either receiver kind.
func instance(t reflect.Type, iface reflect.Type) any {
	if t.Implements(iface) {
		return reflect.Zero(t).Interface()
	}
	return reflect.New(t).Interface()
}

// knownSchema handles types whose JSON form is not their Go structure.
func knownSchema(t reflect.Type) *jsonSchema {
	if implements(t, typeSchemaTyper) {
		v := instance(t, typeSchemaTyper)
		s := &jsonSchema{}
		if types := v.(openAPISchemaTyper).OpenAPISchemaType(); len(types) == 1 {
			s.Type = types[0]
		}
		if f, ok := v.(openAPISchemaFormatter); ok {
			s.Format = f.OpenAPISchemaFormat()
		} else if f, ok := reflect.New(t).Interface().(openAPISchemaFormatter); ok {
			s.Format = f.OpenAPISchemaFormat()
		}
		if o, ok := v.(openAPIV3OneOfTyper); ok {
			s.OneOfTypes = o.OpenAPIV3OneOfTypes()
		} else if o, ok := reflect.New(t).Interface().(openAPIV3OneOfTyper); ok {
			s.OneOfTypes = o.OpenAPIV3OneOfTypes()
		}
		if s.Format == "int-or-string" {
			s.IntOrString = true
		}
		return s
	}
	switch t {
	case typeTime:
		return &jsonSchema{Type: "string", Format: "date-time"}
	case typeRawExtension, typeFieldsV1:
		return &jsonSchema{Type: "object"}
	}
	if t.Kind() == reflect.Struct && implements(t, typeJSONMarshaler) {
		// A struct with its own JSON encoding we know nothing about
		// (runtime.Unknown, unstructured.Unstructured, ...): any object.
		return &jsonSchema{Type: "object", Extensions: []extension{{"x-kubernetes-preserve-unknown-fields", true}}}
	}
	return nil
}

func typeDescription(t reflect.Type) string {
	return swaggerDoc(t)[""]
}

func swaggerDoc(t reflect.Type) map[string]string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	if d, ok := reflect.Zero(t).Interface().(swaggerDocer); ok {
		return d.SwaggerDoc()
	}
	if d, ok := reflect.New(t).Interface().(swaggerDocer); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// schemaFor returns the (inline or $ref) schema of a value of type t.
func (g *generator) schemaFor(t reflect.Type) *jsonSchema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isDefinition(t) {
		return g.refTo(t)
	}
	if s := knownSchema(t); s != nil {
		return s
	}
	switch t.Kind() {
	case reflect.Bool:
		return &jsonSchema{Type: "boolean"}
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return &jsonSchema{Type: "integer", Format: "int32"}
	case reflect.Int8, reflect.Uint8:
		return &jsonSchema{Type: "integer", Format: "byte"}
	case reflect.Int64, reflect.Uint32, reflect.Uint64:
		return &jsonSchema{Type: "integer", Format: "int64"}
	case reflect.Float32:
		return &jsonSchema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &jsonSchema{Type: "number", Format: "double"}
	case reflect.String:
		return &jsonSchema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &jsonSchema{Type: "string", Format: "byte"}
		}
		return &jsonSchema{Type: "array", Items: g.schemaFor(t.Elem())}
	case reflect.Map:
		return &jsonSchema{Type: "object", AdditionalProperties: g.schemaFor(t.Elem())}
	case reflect.Struct:
		return g.structSchema(t) // anonymous struct: inline
	case reflect.Interface:
		return &jsonSchema{} // anything
	}
	// chan, func, complex, unsafe pointers have no JSON form.
	return &jsonSchema{}
}

// field is one JSON property of a struct after inlining embedded structs.
type field struct {
	name     string
	depth    int
	typ      reflect.Type
	tag      reflect.StructTag
	optional bool
	asString bool
	doc      string
}

// structSchema builds an object schema from a struct's fields, following
// encoding/json's rules for names, "-", omitempty/omitzero and embedding.
func (g *generator) structSchema(t reflect.Type) *jsonSchema {
	fields := collectFields(t, 0, map[reflect.Type]bool{})
	// encoding/json: among fields with the same name, the shallowest wins.
	best := map[string]int{}
	for i, f := range fields {
		if j, ok := best[f.name]; !ok || f.depth < fields[j].depth {
			best[f.name] = i
		}
	}
	s := &jsonSchema{Type: "object", Properties: []property{}}
	def := ""
	if t.Name() != "" {
		def = definitionName(t)
	}
	for i, f := range fields {
		if best[f.name] != i {
			continue
		}
		var ps *jsonSchema
		if f.asString {
			ps = &jsonSchema{Type: "string"}
		} else {
			ps = g.schemaFor(f.typ)
		}
		ps = withSiblings(ps, f, fieldSemantics(def, f.name)...)
		s.Properties = append(s.Properties, property{Name: f.name, Schema: ps})
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s
}

// withSiblings adds the field's description, patch extensions and list
// semantics (more). A $ref schema is copied so the shared definition is
// never modified.
func withSiblings(ps *jsonSchema, f field, more ...extension) *jsonSchema {
	var exts []extension
	if v := f.tag.Get("patchMergeKey"); v != "" {
		exts = append(exts, extension{"x-kubernetes-patch-merge-key", v})
	}
	if v := f.tag.Get("patchStrategy"); v != "" {
		exts = append(exts, extension{"x-kubernetes-patch-strategy", v})
	}
	exts = append(exts, more...)
	if f.doc == "" && len(exts) == 0 {
		return ps
	}
	cp := *ps
	cp.Description = f.doc
	cp.Extensions = append(append([]extension(nil), ps.Extensions...), exts...)
	return &cp
}

func collectFields(t reflect.Type, depth int, visiting map[reflect.Type]bool) []field {
	if visiting[t] {
		return nil // embedding cycle through pointers; encoding/json ignores it too
	}
	visiting[t] = true
	defer delete(visiting, t)
	docs := swaggerDoc(t)
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if name == "" && et.Kind() == reflect.Struct {
				out = append(out, collectFields(et, depth+1, visiting)...)
				continue
			}
			if !sf.IsExported() {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		switch ft.Kind() {
		case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, depth: depth, typ: ft, tag: sf.Tag, doc: docs[name]}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				f.optional = true
			case "string":
				switch deref(ft).Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
					reflect.Float32, reflect.Float64, reflect.String:
					f.asString = true
				}
			}
		}
		out = append(out, f)
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// addGVK records that the definition of t is served as gvk.
func (g *generator) addGVK(t reflect.Type, gvk schema.GroupVersionKind) string {
	ref := g.schemaFor(t)
	if ref.Ref == "" {
		return ""
	}
	def := g.defs[ref.Ref]
	for _, have := range def.GVKs {
		if have == gvk {
			return ref.Ref
		}
	}
	def.GVKs = append(def.GVKs, gvk)
	return ref.Ref
}

// sortGVKs orders each definition's GVK list like upstream (by group,
// version, kind) so the output is deterministic whatever the input order.
func (g *generator) sortGVKs() {
	for _, d := range g.defs {
		sort.Slice(d.GVKs, func(i, j int) bool {
			a, b := d.GVKs[i], d.GVKs[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}
}

// refs calls fn for every definition name referenced from s.
func (s *jsonSchema) refs(fn func(string)) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		fn(s.Ref)
	}
	s.Items.refs(fn)
	s.AdditionalProperties.refs(fn)
	for _, p := range s.Properties {
		p.Schema.refs(fn)
	}
}

// closure returns the names of the given definitions and of everything they
// reference, transitively.
func (g *generator) closure(roots []string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		g.defs[name].refs(visit)
	}
	for _, r := range roots {
		visit(r)
	}
	return seen
}
