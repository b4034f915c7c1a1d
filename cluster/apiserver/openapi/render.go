package openapi

import (
	"encoding/json"
	"unicode/utf8"
)

// format selects how a jsonSchema is rendered.
type format int

const (
	swagger2 format = iota // Swagger 2.0: refs to #/definitions/
	openAPI3               // OpenAPI 3.0: refs to #/components/schemas/
)

func (f format) refPrefix() string {
	if f == swagger2 {
		return "#/definitions/"
	}
	return "#/components/schemas/"
}

// renderSchema returns the JSON of s in format f. The output is
// deterministic (fixed key order), so document hashes are stable across
// restarts and client caches stay valid.
func renderSchema(s *jsonSchema, f format) json.RawMessage {
	return appendSchema(nil, s, f)
}

func appendSchema(b []byte, s *jsonSchema, f format) []byte {
	o := objWriter{b: append(b, '{')}
	if s.Ref != "" {
		ref := f.refPrefix() + s.Ref
		if f == openAPI3 && (s.Description != "" || len(s.Extensions) > 0) {
			// OpenAPI 3.0 ignores siblings of $ref; upstream wraps the ref in
			// allOf so description and patch extensions stay meaningful.
			// strategicpatch.PatchMetaFromOpenAPIV3 resolves allOf[0].
			o.key("allOf")
			o.b = append(o.b, `[{"$ref":`...)
			o.b = appendString(o.b, ref)
			o.b = append(o.b, "}]"...)
		} else {
			o.key("$ref")
			o.b = appendString(o.b, ref)
		}
		if s.Description != "" {
			o.key("description")
			o.b = appendString(o.b, s.Description)
		}
		o.extensions(s.Extensions)
		return append(o.b, '}')
	}
	if s.Description != "" {
		o.key("description")
		o.b = appendString(o.b, s.Description)
	}
	if f == openAPI3 && len(s.OneOfTypes) > 0 {
		o.key("oneOf")
		o.b = append(o.b, '[')
		for i, t := range s.OneOfTypes {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, `{"type":`...)
			o.b = appendString(o.b, t)
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
	} else if s.Type != "" {
		o.key("type")
		o.b = appendString(o.b, s.Type)
	}
	if s.Format != "" {
		o.key("format")
		o.b = appendString(o.b, s.Format)
	}
	if s.Items != nil {
		o.key("items")
		o.b = appendSchema(o.b, s.Items, f)
	}
	if len(s.Properties) > 0 {
		o.key("properties")
		p := objWriter{b: append(o.b, '{')}
		for _, prop := range s.Properties {
			p.key(prop.Name)
			p.b = appendSchema(p.b, prop.Schema, f)
		}
		o.b = append(p.b, '}')
	}
	if s.AdditionalProperties != nil {
		o.key("additionalProperties")
		o.b = appendSchema(o.b, s.AdditionalProperties, f)
	}
	if len(s.Required) > 0 {
		o.key("required")
		o.b = appendStrings(o.b, s.Required)
	}
	if s.IntOrString {
		o.key("x-kubernetes-int-or-string")
		o.b = append(o.b, "true"...)
	}
	o.extensions(s.Extensions)
	if len(s.GVKs) > 0 {
		o.key("x-kubernetes-group-version-kind")
		o.b = append(o.b, '[')
		for i, gvk := range s.GVKs {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, `{"group":`...)
			o.b = appendString(o.b, gvk.Group)
			o.b = append(o.b, `,"kind":`...)
			o.b = appendString(o.b, gvk.Kind)
			o.b = append(o.b, `,"version":`...)
			o.b = appendString(o.b, gvk.Version)
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
	}
	return append(o.b, '}')
}

type objWriter struct {
	b        []byte
	nonEmpty bool
}

func (o *objWriter) key(k string) {
	if o.nonEmpty {
		o.b = append(o.b, ',')
	}
	o.nonEmpty = true
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *objWriter) extensions(exts []extension) {
	for _, e := range exts {
		v, err := json.Marshal(e.Value)
		if err != nil {
			continue // extension values are literals built in this package
		}
		o.key(e.Name)
		o.b = append(o.b, v...)
	}
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string (without HTML escaping, which
// descriptions full of "<" and ">" would otherwise bloat).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
