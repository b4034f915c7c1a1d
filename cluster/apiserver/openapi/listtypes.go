package openapi

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// TypeConverter is the structured-merge-diff view of every built-in type:
// client-go's schemas, from which its apply configurations are generated,
// with upstream's list and map semantics (containers merged by name, ports
// by containerPort and protocol, atomic selectors, ...). The apiserver's
// field manager merges with it; the models here carry the same semantics as
// x-kubernetes-list-type, -list-map-keys and -map-type. Parsed once, on
// first use.
var TypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(scheme.Scheme)
})

// semantics indexes the schemas' extensions: per definition, its own
// (x-kubernetes-map-type: atomic for an atomic struct) and its fields'.
type semantics struct {
	types  map[string][]extension
	fields map[string]map[string][]extension
}

var listSemantics = sync.OnceValue(func() *semantics {
	s := &semantics{types: map[string][]extension{}, fields: map[string]map[string][]extension{}}
	tv, err := TypeConverter().ObjectToTyped(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}})
	if err != nil {
		return s // no schema: models without the extensions
	}
	sch := tv.Schema()
	for _, td := range sch.Types {
		m := td.Map
		if m == nil {
			continue
		}
		if len(m.Fields) > 0 && m.ElementRelationship == smdschema.Atomic {
			s.types[td.Name] = []extension{{"x-kubernetes-map-type", "atomic"}}
		}
		for _, f := range m.Fields {
			if exts := refExtensions(sch, f.Type); len(exts) > 0 {
				if s.fields[td.Name] == nil {
					s.fields[td.Name] = map[string][]extension{}
				}
				s.fields[td.Name][f.Name] = exts
			}
		}
	}
	return s
})

// refExtensions are the extensions a field of type ref carries: a list's
// type (map with its keys, set, atomic), a map's when atomic.
func refExtensions(sch *smdschema.Schema, ref smdschema.TypeRef) []extension {
	atom := ref.Inlined
	if ref.NamedType != nil {
		td, ok := sch.FindNamedType(*ref.NamedType)
		if !ok {
			return nil
		}
		atom = td.Atom
	}
	switch {
	case atom.List != nil:
		l := atom.List
		switch {
		case l.ElementRelationship == smdschema.Associative && len(l.Keys) > 0:
			return []extension{{"x-kubernetes-list-map-keys", append([]string(nil), l.Keys...)}, {"x-kubernetes-list-type", "map"}}
		case l.ElementRelationship == smdschema.Associative:
			return []extension{{"x-kubernetes-list-type", "set"}}
		case l.ElementRelationship == smdschema.Atomic:
			return []extension{{"x-kubernetes-list-type", "atomic"}}
		}
	case atom.Map != nil && len(atom.Map.Fields) == 0:
		// A map of values (labels, data): atomic if the schema says so.
		rel := atom.Map.ElementRelationship
		if ref.ElementRelationship != nil {
			rel = *ref.ElementRelationship
		}
		if rel == smdschema.Atomic {
			return []extension{{"x-kubernetes-map-type", "atomic"}}
		}
	case atom.Map != nil && ref.ElementRelationship != nil && *ref.ElementRelationship == smdschema.Atomic:
		// A struct this field holds atomically.
		return []extension{{"x-kubernetes-map-type", "atomic"}}
	}
	return nil
}

// fieldSemantics are the extensions of the field named name of the
// definition def.
func fieldSemantics(def, name string) []extension { return listSemantics().fields[def][name] }

// typeSemantics are the extensions of the definition def itself.
func typeSemantics(def string) []extension { return listSemantics().types[def] }
