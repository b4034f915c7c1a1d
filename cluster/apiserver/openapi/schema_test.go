package openapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// compactJSON normalises a JSON literal for comparison (key order is the
// renderer's, so literals must use it too).
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v interface{}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTypeMapping(t *testing.T) {
	type named string
	cases := []struct {
		name   string
		typ    reflect.Type
		v2, v3 string
	}{
		{"bool", reflect.TypeOf(true), `{"type":"boolean"}`, ""},
		{"int32", reflect.TypeOf(int32(0)), `{"type":"integer","format":"int32"}`, ""},
		{"int64", reflect.TypeOf(int64(0)), `{"type":"integer","format":"int64"}`, ""},
		{"int", reflect.TypeOf(0), `{"type":"integer","format":"int32"}`, ""},
		{"uint8", reflect.TypeOf(uint8(0)), `{"type":"integer","format":"byte"}`, ""},
		{"uint64", reflect.TypeOf(uint64(0)), `{"type":"integer","format":"int64"}`, ""},
		{"float32", reflect.TypeOf(float32(0)), `{"type":"number","format":"float"}`, ""},
		{"float64", reflect.TypeOf(float64(0)), `{"type":"number","format":"double"}`, ""},
		{"string", reflect.TypeOf(""), `{"type":"string"}`, ""},
		{"named string", reflect.TypeOf(named("")), `{"type":"string"}`, ""},
		{"enum-like", reflect.TypeOf(corev1.PodPhase("")), `{"type":"string"}`, ""},
		{"pointer", reflect.TypeOf((*int32)(nil)), `{"type":"integer","format":"int32"}`, ""},
		{"double pointer", reflect.TypeOf((**string)(nil)), `{"type":"string"}`, ""},
		{"[]byte", reflect.TypeOf([]byte(nil)), `{"type":"string","format":"byte"}`, ""},
		{"[]string", reflect.TypeOf([]string(nil)), `{"type":"array","items":{"type":"string"}}`, ""},
		{"[][]byte", reflect.TypeOf([][]byte(nil)), `{"type":"array","items":{"type":"string","format":"byte"}}`, ""},
		{"[2]int64", reflect.TypeOf([2]int64{}), `{"type":"array","items":{"type":"integer","format":"int64"}}`, ""},
		{"map[string]string", reflect.TypeOf(map[string]string(nil)), `{"type":"object","additionalProperties":{"type":"string"}}`, ""},
		{"map of slices", reflect.TypeOf(map[string][]string(nil)), `{"type":"object","additionalProperties":{"type":"array","items":{"type":"string"}}}`, ""},
		{"interface", reflect.TypeOf((*interface{})(nil)).Elem(), `{}`, ""},
		{"time.Time", reflect.TypeOf(time.Time{}), `{"type":"string","format":"date-time"}`, ""},
		{"metav1.Time", reflect.TypeOf(metav1.Time{}),
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`,
			`{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`},
		{"*metav1.Time", reflect.TypeOf(&metav1.Time{}),
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`,
			`{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`},
		{"Quantity", reflect.TypeOf(resource.Quantity{}),
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}`,
			`{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"ResourceList", reflect.TypeOf(corev1.ResourceList{}),
			`{"type":"object","additionalProperties":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}`,
			`{"type":"object","additionalProperties":{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}}`},
		{"struct", reflect.TypeOf(appsv1.ReplicaSet{}),
			`{"$ref":"#/definitions/io.k8s.api.apps.v1.ReplicaSet"}`,
			`{"$ref":"#/components/schemas/io.k8s.api.apps.v1.ReplicaSet"}`},
		{"anonymous struct", reflect.TypeOf(struct {
			A string `json:"a"`
		}{}), `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGenerator()
			s := g.schemaFor(tc.typ)
			if got, want := compactJSON(t, string(renderSchema(s, swagger2))), compactJSON(t, tc.v2); got != want {
				t.Errorf("v2:\n got %s\nwant %s", got, want)
			}
			v3 := tc.v3
			if v3 == "" {
				v3 = tc.v2
			}
			if got, want := compactJSON(t, string(renderSchema(s, openAPI3))), compactJSON(t, v3); got != want {
				t.Errorf("v3:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// Definitions of the apimachinery types whose JSON is not their Go shape.
func TestSpecialDefinitions(t *testing.T) {
	cases := []struct {
		typ    reflect.Type
		name   string
		v2, v3 string
	}{
		{reflect.TypeOf(metav1.Time{}), "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
			`{"type":"string","format":"date-time"}`, ""},
		{reflect.TypeOf(metav1.MicroTime{}), "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
			`{"type":"string","format":"date-time"}`, ""},
		{reflect.TypeOf(metav1.Duration{}), "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
			`{"type":"string"}`, ""},
		{reflect.TypeOf(intstr.IntOrString{}), "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
			`{"type":"string","format":"int-or-string","x-kubernetes-int-or-string":true}`,
			`{"oneOf":[{"type":"integer"},{"type":"string"}],"format":"int-or-string","x-kubernetes-int-or-string":true}`},
		{reflect.TypeOf(resource.Quantity{}), "io.k8s.apimachinery.pkg.api.resource.Quantity",
			`{"type":"string"}`, `{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{reflect.TypeOf(runtime.RawExtension{}), "io.k8s.apimachinery.pkg.runtime.RawExtension",
			`{"type":"object"}`, ""},
		{reflect.TypeOf(metav1.FieldsV1{}), "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
			`{"type":"object"}`, ""},
		{reflect.TypeOf(runtime.Unknown{}), "io.k8s.apimachinery.pkg.runtime.Unknown",
			`{"type":"object","x-kubernetes-preserve-unknown-fields":true}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGenerator()
			if ref := g.schemaFor(tc.typ).Ref; ref != tc.name {
				t.Fatalf("ref = %q, want %q", ref, tc.name)
			}
			def := *g.defs[tc.name]
			def.Description = "" // SwaggerDoc text is not under test here
			if got, want := compactJSON(t, string(renderSchema(&def, swagger2))), compactJSON(t, tc.v2); got != want {
				t.Errorf("v2:\n got %s\nwant %s", got, want)
			}
			v3 := tc.v3
			if v3 == "" {
				v3 = tc.v2
			}
			if got, want := compactJSON(t, string(renderSchema(&def, openAPI3))), compactJSON(t, v3); got != want {
				t.Errorf("v3:\n got %s\nwant %s", got, want)
			}
		})
	}
}

type embeddedBase struct {
	Shadowed string `json:"shadowed"`
	Deep     string `json:"deep,omitempty"`
}

type EmbeddedPtr struct {
	FromPtr int64 `json:"fromPtr,omitempty"`
}

type mappingSample struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	embeddedBase
	*EmbeddedPtr

	Required   string                    `json:"required"`
	Optional   *int32                    `json:"optional,omitempty"`
	OmitZero   metav1.Time               `json:"omitZero,omitzero"`
	Skipped    string                    `json:"-"`
	unexported string                    // must not appear
	NoTag      bool                      //
	AsString   int64                     `json:"asString,string,omitempty"`
	Shadowed   int32                     `json:"shadowed,omitempty"` // shallower than embeddedBase.Shadowed
	Containers []corev1.Container        `json:"containers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Strategy   appsv1.DeploymentStrategy `json:"strategy,omitempty" patchStrategy:"retainKeys"`
	Labels     map[string]string         `json:"labels,omitempty"`
	Callback   func()                    `json:"callback,omitempty"`
}

func TestStructMapping(t *testing.T) {
	g := newGenerator()
	ref := g.schemaFor(reflect.TypeOf(mappingSample{}))
	def := g.defs[ref.Ref]
	if ref.Ref != "com.github.kstep-dev.kstep.cluster.apiserver.openapi.mappingSample" {
		t.Errorf("name = %q", ref.Ref)
	}
	props := map[string]*jsonSchema{}
	var order []string
	for _, p := range def.Properties {
		props[p.Name] = p.Schema
		order = append(order, p.Name)
	}
	wantOrder := []string{"kind", "apiVersion", "metadata", "deep", "fromPtr", "required", "optional", "omitZero",
		"NoTag", "asString", "shadowed", "containers", "strategy", "labels"}
	if strings.Join(order, ",") != strings.Join(wantOrder, ",") {
		t.Errorf("properties = %v\n         want %v", order, wantOrder)
	}
	if got := strings.Join(def.Required, ","); got != "required,NoTag" {
		t.Errorf("required = %q, want required,NoTag", got)
	}
	checks := map[string]string{
		"metadata":   `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}`,
		"asString":   `{"type":"string"}`,
		"shadowed":   `{"type":"integer","format":"int32"}`,
		"fromPtr":    `{"type":"integer","format":"int64"}`,
		"containers": `{"type":"array","items":{"$ref":"#/definitions/io.k8s.api.core.v1.Container"},"x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`,
		"strategy":   `{"$ref":"#/definitions/io.k8s.api.apps.v1.DeploymentStrategy","x-kubernetes-patch-strategy":"retainKeys"}`,
		"labels":     `{"type":"object","additionalProperties":{"type":"string"}}`,
	}
	for name, want := range checks {
		if got := compactJSON(t, string(renderSchema(props[name], swagger2))); got != compactJSON(t, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	// In v3 a $ref with siblings is wrapped in allOf.
	if got, want := string(renderSchema(props["strategy"], openAPI3)),
		`{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}],"x-kubernetes-patch-strategy":"retainKeys"}`; got != want {
		t.Errorf("v3 strategy:\n got %s\nwant %s", got, want)
	}
	// Descriptions come from SwaggerDoc(), also for inlined fields.
	g2 := newGenerator()
	pod := g2.defs[g2.schemaFor(reflect.TypeOf(corev1.Pod{})).Ref]
	if !strings.Contains(pod.Description, "Pod is a collection of containers") {
		t.Errorf("Pod description = %q", pod.Description)
	}
	for _, p := range pod.Properties {
		if p.Name == "kind" && !strings.Contains(p.Schema.Description, "Kind is a string value") {
			t.Errorf("inlined TypeMeta.kind description = %q", p.Schema.Description)
		}
	}
}

type recNode struct {
	Name     string              `json:"name"`
	Children []recNode           `json:"children,omitempty"`
	Parent   *recNode            `json:"parent,omitempty"`
	ByName   map[string]*recNode `json:"byName,omitempty"`
	Other    *recOther           `json:"other,omitempty"`
}

type recOther struct {
	Back *recNode `json:"back,omitempty"`
}

// A type embedding itself through a pointer (encoding/json ignores the loop).
type recEmbed struct {
	*recEmbed
	Value string `json:"value"`
}

func TestRecursiveTypesTerminate(t *testing.T) {
	done := make(chan struct{})
	var g *generator
	go func() {
		defer close(done)
		g = newGenerator()
		g.schemaFor(reflect.TypeOf(recNode{}))
		g.schemaFor(reflect.TypeOf(recEmbed{}))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("schema generation of recursive types did not terminate")
	}
	node := "com.github.kstep-dev.kstep.cluster.apiserver.openapi.recNode"
	other := "com.github.kstep-dev.kstep.cluster.apiserver.openapi.recOther"
	if g.defs[node] == nil || g.defs[other] == nil {
		t.Fatalf("definitions = %v", keys(g.defs))
	}
	got := string(renderSchema(g.defs[node], swagger2))
	for _, want := range []string{
		`"children":{"type":"array","items":{"$ref":"#/definitions/` + node + `"}}`,
		`"parent":{"$ref":"#/definitions/` + node + `"}`,
		`"byName":{"type":"object","additionalProperties":{"$ref":"#/definitions/` + node + `"}}`,
		`"other":{"$ref":"#/definitions/` + other + `"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("recNode = %s\nlacks %s", got, want)
		}
	}
	if got := string(renderSchema(g.defs[other], swagger2)); !strings.Contains(got, `"back":{"$ref":"#/definitions/`+node+`"}`) {
		t.Errorf("recOther = %s", got)
	}
	embed := g.defs["com.github.kstep-dev.kstep.cluster.apiserver.openapi.recEmbed"]
	if len(embed.Properties) != 1 || embed.Properties[0].Name != "value" {
		t.Errorf("recEmbed properties = %+v", embed.Properties)
	}
	if c := g.closure([]string{node}); len(c) != 2 {
		t.Errorf("closure = %v", c)
	}
}

func TestDefinitionNames(t *testing.T) {
	cases := map[reflect.Type]string{
		reflect.TypeOf(corev1.Pod{}):           "io.k8s.api.core.v1.Pod",
		reflect.TypeOf(appsv1.ReplicaSet{}):    "io.k8s.api.apps.v1.ReplicaSet",
		reflect.TypeOf(metav1.ObjectMeta{}):    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		reflect.TypeOf(resource.Quantity{}):    "io.k8s.apimachinery.pkg.api.resource.Quantity",
		reflect.TypeOf(intstr.IntOrString{}):   "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		reflect.TypeOf(runtime.RawExtension{}): "io.k8s.apimachinery.pkg.runtime.RawExtension",
		reflect.TypeOf(recNode{}):              "com.github.kstep-dev.kstep.cluster.apiserver.openapi.recNode",
		reflect.TypeOf(generic[int]{}):         "com.github.kstep-dev.kstep.cluster.apiserver.openapi.generic_int_",
	}
	for typ, want := range cases {
		if got := definitionName(typ); got != want {
			t.Errorf("definitionName(%v) = %q, want %q", typ, got, want)
		}
	}
}

type generic[T any] struct {
	V T `json:"v"`
}

func TestOperationNaming(t *testing.T) {
	cases := []struct{ group, version, key, opID, tag string }{
		{"", "v1", "api/v1", "CoreV1", "core_v1"},
		{"apps", "v1", "apis/apps/v1", "AppsV1", "apps_v1"},
		{"rbac.authorization.k8s.io", "v1", "apis/rbac.authorization.k8s.io/v1", "RbacAuthorizationV1", "rbacAuthorization_v1"},
		{"flowcontrol.apiserver.k8s.io", "v1beta3", "apis/flowcontrol.apiserver.k8s.io/v1beta3", "FlowcontrolApiserverV1beta3", "flowcontrolApiserver_v1beta3"},
		{"example.com", "v1alpha1", "apis/example.com/v1alpha1", "ExampleComV1alpha1", "exampleCom_v1alpha1"},
	}
	for _, tc := range cases {
		n := namesFor(schema.GroupVersion{Group: tc.group, Version: tc.version})
		if n.key != tc.key || n.prefix != "/"+tc.key || n.opID != tc.opID || n.tag != tc.tag {
			t.Errorf("%s/%s: got %+v", tc.group, tc.version, n)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnewline\ncr\r", "ctl\x01\x1f",
		"<html> & 'x'", "unicode é ✓ 😀", "line\u2028sep\u2029", "bad\xffutf8"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%q -> %s: invalid JSON: %v", s, got, err)
			continue
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q round-trips to %q, want %q", s, back, wantBack)
		}
	}
}
