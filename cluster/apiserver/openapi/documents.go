package openapi

import (
	"encoding/json"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// The JSON envelopes of the two document formats. Schemas inside are
// pre-rendered json.RawMessage (render.go); encoding/json sorts map keys,
// so documents are deterministic.

type docInfo struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

var info = docInfo{Title: "Kubernetes", Version: "unversioned"}

type gvkExt struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

func gvkExtOf(o *operation) *gvkExt {
	if o.GVK == nil {
		return nil
	}
	return &gvkExt{Group: o.GVK.Group, Kind: o.GVK.Kind, Version: o.GVK.Version}
}

type apiKeyScheme struct {
	Type string `json:"type"`
	Name string `json:"name"`
	In   string `json:"in"`
	Desc string `json:"description"`
}

var bearerToken = apiKeyScheme{Type: "apiKey", Name: "authorization", In: "header", Desc: "Bearer Token authentication"}
var security = []map[string][]string{{"BearerToken": {}}}

// ---- Swagger 2.0 ----

type v2Doc struct {
	Swagger             string                     `json:"swagger"`
	Info                docInfo                    `json:"info"`
	Paths               map[string]*v2PathItem     `json:"paths"`
	Definitions         map[string]json.RawMessage `json:"definitions"`
	SecurityDefinitions map[string]apiKeyScheme    `json:"securityDefinitions"`
	Security            []map[string][]string      `json:"security"`
}

type v2PathItem struct {
	Get        *v2Op     `json:"get,omitempty"`
	Put        *v2Op     `json:"put,omitempty"`
	Post       *v2Op     `json:"post,omitempty"`
	Delete     *v2Op     `json:"delete,omitempty"`
	Patch      *v2Op     `json:"patch,omitempty"`
	Parameters []v2Param `json:"parameters,omitempty"`
}

type v2Op struct {
	Description string                `json:"description,omitempty"`
	Consumes    []string              `json:"consumes,omitempty"`
	Produces    []string              `json:"produces,omitempty"`
	Schemes     []string              `json:"schemes,omitempty"`
	Tags        []string              `json:"tags,omitempty"`
	OperationID string                `json:"operationId"`
	Parameters  []v2Param             `json:"parameters,omitempty"`
	Responses   map[string]v2Response `json:"responses"`
	Action      string                `json:"x-kubernetes-action,omitempty"`
	GVK         *gvkExt               `json:"x-kubernetes-group-version-kind,omitempty"`
}

type v2Param struct {
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Type        string          `json:"type,omitempty"`
	UniqueItems bool            `json:"uniqueItems,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

type v2Response struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

func v2Params(ps []param) []v2Param {
	out := make([]v2Param, len(ps))
	for i, p := range ps {
		out[i] = v2Param{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required,
			Type: p.Type, UniqueItems: p.UniqueItems}
	}
	return out
}

func appendUnique(list []string, items ...string) []string {
next:
	for _, it := range items {
		for _, have := range list {
			if have == it {
				continue next
			}
		}
		list = append(list, it)
	}
	return list
}

func v2Operation(o *operation) *v2Op {
	op := &v2Op{Description: o.Description, Schemes: []string{"https"}, Tags: o.Tags, OperationID: o.ID,
		Parameters: v2Params(o.Params), Responses: map[string]v2Response{}, Action: o.Action, GVK: gvkExtOf(o)}
	if len(o.Body) > 0 {
		for _, m := range o.Body {
			op.Consumes = appendUnique(op.Consumes, m.Type)
		}
		op.Parameters = append(op.Parameters, v2Param{Name: "body", In: "body", Required: o.BodyRequired,
			Schema: renderSchema(o.Body[0].Schema, swagger2)})
	}
	for _, r := range o.Responses {
		resp := v2Response{Description: r.Description}
		if len(r.Content) > 0 {
			resp.Schema = renderSchema(r.Content[0].Schema, swagger2)
			for _, m := range r.Content {
				op.Produces = appendUnique(op.Produces, m.Type)
			}
		}
		op.Responses[r.Code] = resp
	}
	return op
}

func v2Document(paths []*pathItem, defs map[string]json.RawMessage) *v2Doc {
	d := &v2Doc{Swagger: "2.0", Info: info, Paths: map[string]*v2PathItem{}, Definitions: defs,
		SecurityDefinitions: map[string]apiKeyScheme{"BearerToken": bearerToken}, Security: security}
	for _, p := range paths {
		item := &v2PathItem{Parameters: v2Params(p.Params)}
		for _, o := range p.Ops {
			op := v2Operation(o)
			switch o.Method {
			case "get":
				item.Get = op
			case "put":
				item.Put = op
			case "post":
				item.Post = op
			case "delete":
				item.Delete = op
			case "patch":
				item.Patch = op
			}
		}
		d.Paths[p.Path] = item
	}
	return d
}

// ---- OpenAPI 3.0 ----

type v3Doc struct {
	OpenAPI    string                 `json:"openapi"`
	Info       docInfo                `json:"info"`
	Paths      map[string]*v3PathItem `json:"paths"`
	Components v3Components           `json:"components"`
	Security   []map[string][]string  `json:"security"`
}

type v3Components struct {
	Schemas         map[string]json.RawMessage `json:"schemas"`
	SecuritySchemes map[string]apiKeyScheme    `json:"securitySchemes"`
}

type v3PathItem struct {
	Get        *v3Op     `json:"get,omitempty"`
	Put        *v3Op     `json:"put,omitempty"`
	Post       *v3Op     `json:"post,omitempty"`
	Delete     *v3Op     `json:"delete,omitempty"`
	Patch      *v3Op     `json:"patch,omitempty"`
	Parameters []v3Param `json:"parameters,omitempty"`
}

type v3Op struct {
	Tags        []string              `json:"tags,omitempty"`
	Description string                `json:"description,omitempty"`
	OperationID string                `json:"operationId"`
	Parameters  []v3Param             `json:"parameters,omitempty"`
	RequestBody *v3Body               `json:"requestBody,omitempty"`
	Responses   map[string]v3Response `json:"responses"`
	Action      string                `json:"x-kubernetes-action,omitempty"`
	GVK         *gvkExt               `json:"x-kubernetes-group-version-kind,omitempty"`
}

type v3Param struct {
	Name        string        `json:"name"`
	In          string        `json:"in"`
	Description string        `json:"description,omitempty"`
	Required    bool          `json:"required,omitempty"`
	Schema      v3ParamSchema `json:"schema"`
}

type v3ParamSchema struct {
	Type        string `json:"type"`
	UniqueItems bool   `json:"uniqueItems,omitempty"`
}

type v3Media struct {
	Schema json.RawMessage `json:"schema"`
}

type v3Body struct {
	Content  map[string]v3Media `json:"content"`
	Required bool               `json:"required,omitempty"`
}

type v3Response struct {
	Description string             `json:"description"`
	Content     map[string]v3Media `json:"content,omitempty"`
}

func v3Params(ps []param) []v3Param {
	out := make([]v3Param, len(ps))
	for i, p := range ps {
		out[i] = v3Param{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required,
			Schema: v3ParamSchema{Type: p.Type, UniqueItems: p.UniqueItems}}
	}
	return out
}

func v3Content(ms []media) map[string]v3Media {
	if len(ms) == 0 {
		return nil
	}
	out := make(map[string]v3Media, len(ms))
	for _, m := range ms {
		out[m.Type] = v3Media{Schema: renderSchema(m.Schema, openAPI3)}
	}
	return out
}

func v3Operation(o *operation) *v3Op {
	op := &v3Op{Tags: o.Tags, Description: o.Description, OperationID: o.ID, Parameters: v3Params(o.Params),
		Responses: map[string]v3Response{}, Action: o.Action, GVK: gvkExtOf(o)}
	if len(o.Body) > 0 {
		op.RequestBody = &v3Body{Content: v3Content(o.Body), Required: o.BodyRequired}
	}
	for _, r := range o.Responses {
		op.Responses[r.Code] = v3Response{Description: r.Description, Content: v3Content(r.Content)}
	}
	return op
}

func v3Document(paths []*pathItem, schemas map[string]json.RawMessage) *v3Doc {
	d := &v3Doc{OpenAPI: "3.0.0", Info: info, Paths: map[string]*v3PathItem{},
		Components: v3Components{Schemas: schemas, SecuritySchemes: map[string]apiKeyScheme{"BearerToken": bearerToken}},
		Security:   security}
	for _, p := range paths {
		item := &v3PathItem{Parameters: v3Params(p.Params)}
		for _, o := range p.Ops {
			op := v3Operation(o)
			switch o.Method {
			case "get":
				item.Get = op
			case "put":
				item.Put = op
			case "post":
				item.Post = op
			case "delete":
				item.Delete = op
			case "patch":
				item.Patch = op
			}
		}
		d.Paths[p.Path] = item
	}
	return d
}

// ---- protobuf ----

// v2ToProto is upstream's conversion: parse the JSON into gnostic's
// OpenAPI v2 model and marshal that. client-go's discovery OpenAPISchema()
// proto-unmarshals the result into openapi_v2.Document.
func v2ToProto(data []byte) ([]byte, error) {
	doc, err := openapi_v2.ParseDocument(data)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(doc)
}

func v3ToProto(data []byte) ([]byte, error) {
	doc, err := openapi_v3.ParseDocument(data)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(doc)
}
